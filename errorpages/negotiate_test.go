package errorpages

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

func TestNegotiate(t *testing.T) {
	tests := map[string]struct {
		accept string
		want   Format
	}{
		// What real clients send.
		"browser":                 {browserAccept, HTML},
		"firefox":                 {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", HTML},
		"safari top-level":        {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", HTML},
		"axios":                   {"application/json, text/plain, */*", JSON},
		"curl and fetch":          {"*/*", JSON},
		"no accept":               {"", JSON},
		"text wildcard":           {"text/*", JSON},
		"html refused":            {"text/html;q=0", JSON},
		"html refused long q":     {"text/html;q=0.000", JSON},
		"xhtml only":              {"application/xhtml+xml", JSON},
		"xml only":                {"application/xml", JSON},
		"plain text":              {"text/plain", JSON},
		"json":                    {"application/json", JSON},
		"problem json":            {"application/problem+json", JSON},
		"html alone":              {"text/html", HTML},
		"html low but positive":   {"text/html;q=0.001", HTML},
		"html among wildcards":    {"*/*;q=0.1, text/*;q=0.2, text/html;q=0.3", HTML},
		"image request":           {"image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", JSON},
		"html with level param":   {"text/html;level=1", HTML},
		"html with level and q":   {"text/html;level=1;q=0", JSON},
		"accept-ext after q":      {"text/html;q=0.5;ext=1", HTML},
		"html with charset":       {"text/html; charset=utf-8", HTML},
		"multiple html, one zero": {"text/html;q=0, text/html;q=0.5", HTML},

		// q-value ties and preferences between the two formats.
		"tie html first":         {"text/html, application/json", HTML},
		"tie json first":         {"application/json, text/html", HTML},
		"tie at q":               {"application/json;q=0.5, text/html;q=0.5", HTML},
		"json preferred":         {"application/json, text/html;q=0.9", JSON},
		"html preferred":         {"application/json;q=0.9, text/html", HTML},
		"json refused html low":  {"application/json;q=0, text/html;q=0.1", HTML},
		"both refused":           {"application/json;q=0, text/html;q=0", JSON},
		"wildcard does not beat": {"*/*;q=1, text/html;q=0.1", HTML},

		// Case and whitespace.
		"upper case":               {"TEXT/HTML", HTML},
		"mixed case":               {"Text/Html", HTML},
		"upper Q param":            {"text/html;Q=0", JSON},
		"spaces around separators": {"  application/json ;  q=0.1 ,   text/html ; q=0.2  ", HTML},
		"tabs":                     {"\ttext/html\t;\tq=1\t", HTML},
		"space inside type":        {"text / html", JSON},

		// Garbage: a range with a malformed q claims nothing.
		"q above one":        {"text/html;q=2", JSON},
		"q one point one":    {"text/html;q=1.1", JSON},
		"q one point zero":   {"text/html;q=1.000", HTML},
		"q four decimals":    {"text/html;q=0.5000", JSON},
		"q negative":         {"text/html;q=-1", JSON},
		"q letters":          {"text/html;q=abc", JSON},
		"q empty":            {"text/html;q=", JSON},
		"q zero dot":         {"text/html;q=0.", JSON},
		"q one dot":          {"text/html;q=1.", HTML},
		"q exponent":         {"text/html;q=1e0", JSON},
		"garbage":            {"!!!;;;,,,===", JSON},
		"only commas":        {",,,,", JSON},
		"prefix match":       {"text/htmlx", JSON},
		"suffix match":       {"xtext/html", JSON},
		"html in param":      {"application/json;profile=text/html", JSON},
		"nul byte":           {"text/html\x00", JSON},
		"kelvin sign":        {"text/\u212Atml", JSON},
		"unicode":            {"tëxt/html", JSON},
		"html after garbage": {"∞/∞;q=∞, text/html", HTML},
	}
	got := map[string]Format{}
	want := map[string]Format{}
	for name, tt := range tests {
		got[name] = Negotiate(tt.accept)
		want[name] = tt.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Negotiate (-want +got):\n%s", diff)
	}
}

func TestNegotiateAll(t *testing.T) {
	tests := map[string]struct {
		accepts []string
		want    Format
	}{
		"none":                  {nil, JSON},
		"one empty":             {[]string{""}, JSON},
		"html in second field":  {[]string{"application/json;q=0.5", "text/html"}, HTML},
		"json wins across":      {[]string{"text/html;q=0.5", "application/json"}, JSON},
		"html refused in first": {[]string{"text/html;q=0", "*/*"}, JSON},
	}
	got := map[string]Format{}
	want := map[string]Format{}
	for name, tt := range tests {
		got[name] = NegotiateAll(tt.accepts)
		want[name] = tt.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NegotiateAll (-want +got):\n%s", diff)
	}
}

// A huge Accept is read only up to the cap, and cut at a comma so the range
// that straddles the cap is dropped rather than read half.
func TestNegotiateHugeHeader(t *testing.T) {
	filler := strings.Repeat("application/x-filler, ", maxAcceptScan/len("application/x-filler, ")+1)
	tests := map[string]struct {
		accept string
		want   Format
	}{
		"html before the cap":   {"text/html, " + filler, HTML},
		"html after the cap":    {filler + "text/html", JSON},
		"refusal cut at cap":    {strings.Repeat(" ", maxAcceptScan-len("text/html")) + "text/html;q=0", JSON},
		"one megabyte of junk":  {strings.Repeat("x", 1<<20), JSON},
		"megabyte then html":    {strings.Repeat("x", 1<<20) + ",text/html", JSON},
		"many tiny html ranges": {strings.Repeat("text/html;q=0,", 10000), JSON},
	}
	got := map[string]Format{}
	want := map[string]Format{}
	for name, tt := range tests {
		got[name] = Negotiate(tt.accept)
		want[name] = tt.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Negotiate (-want +got):\n%s", diff)
	}

	// Across fields the cap is shared: a flood in one field cannot make the
	// scan read more in total.
	if got := NegotiateAll([]string{filler, "text/html"}); got != JSON {
		t.Errorf("NegotiateAll past the shared cap = %v, want json", got)
	}
}

func TestNegotiateDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { Negotiate(browserAccept) })
	if allocs != 0 {
		t.Errorf("Negotiate allocates %v times per call, want 0", allocs)
	}
}

func TestFormatString(t *testing.T) {
	got := []string{HTML.String(), JSON.String()}
	if diff := cmp.Diff([]string{"html", "json"}, got); diff != "" {
		t.Errorf("Format.String (-want +got):\n%s", diff)
	}
}

func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{browserAccept, "text/html;q=0", "*/*", "text/html;q=0.5, application/json;q=0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		got := Negotiate(accept)
		// Without the literal text/html (in any case) there is nothing to
		// pick HTML for.
		if got == HTML && !strings.Contains(strings.ToLower(accept), "text/html") {
			t.Errorf("Negotiate(%q) = html without text/html", accept)
		}
	})
}
