package errorpages

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The checks of a brand file: what LoadBrands refuses, field by field.

// Validate checks every brand; the error lists each wrong field by its path
// in the file (brands[1].colors.dark.accent).
func (bs *Brands) Validate() error {
	var errs []error
	add := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	if len(bs.Brands) == 0 {
		add("brands", "at least one brand is required")
	}
	if len(bs.Brands) > MaxBrands {
		add("brands", "%d brands, at most %d", len(bs.Brands), MaxBrands)
	}
	seen := map[string]bool{}
	for i, b := range bs.Brands {
		p := "brands[" + strconv.Itoa(i) + "]"
		if len(b.Name) > 63 || !brandNameRe.MatchString(b.Name) {
			add(p+".name", "%q must be a DNS label (lowercase letters, digits and '-', at most 63)", b.Name)
		}
		if seen[b.Name] {
			add(p+".name", "%q is a duplicate", b.Name)
		}
		seen[b.Name] = true
		if b.DisplayName == "" {
			add(p+".displayName", "is required")
		}
		checkText(add, p+".displayName", b.DisplayName, MaxDisplayNameLen)
		if b.Logo != nil {
			if _, err := logoURL(*b.Logo); err != nil {
				add(p+".logo", "%v", err)
			}
		}
		if c := b.Colors; c != nil {
			checkPalette(add, p+".colors.light", c.Light)
			checkPalette(add, p+".colors.dark", c.Dark)
		}
		if s := b.Support; s != nil {
			checkText(add, p+".support.text", s.Text, MaxSupportTextLen)
			if s.URL == "" && s.Text == "" {
				add(p+".support", "needs a url or a text")
			}
			if s.URL != "" {
				if err := checkSupportURL(s.URL); err != nil {
					add(p+".support.url", "%v", err)
				}
			}
		}
		for code, t := range b.Pages {
			pp := p + ".pages[" + strconv.Quote(code) + "]"
			if c, err := strconv.Atoi(code); err != nil || len(code) != 3 || c < minCode || c > maxCode {
				add(pp, "the key must be a status code from 400 to 599")
			}
			checkText(add, pp+".title", t.Title, MaxTitleLen)
			checkText(add, pp+".text", t.Text, MaxTextLen)
		}
	}
	if bs.Default != "" && !seen[bs.Default] {
		add("default", "%q names no brand", bs.Default)
	}
	return errors.Join(errs...)
}

// checkText refuses markup, control characters, invalid UTF-8 and more
// than max characters: brand text is plain text (html/template escapes it
// anyway; refusing markup says so at install rather than drawing tags).
func checkText(add func(string, string, ...any), path, s string, max int) {
	if !utf8.ValidString(s) {
		add(path, "is not valid UTF-8")
		return
	}
	if n := utf8.RuneCountInString(s); n > max {
		add(path, "is %d characters, at most %d", n, max)
	}
	if strings.ContainsAny(s, "<>") {
		add(path, "%q holds markup (< or >): plain text only", s)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		add(path, "holds a control character")
	}
}

func checkPalette(add func(string, string, ...any), path string, p *Palette) {
	if p == nil {
		return
	}
	if p.Accent == "" {
		add(path+".accent", "is required")
	}
	for _, c := range []struct{ name, v string }{{"accent", p.Accent}, {"accent2", p.Accent2}, {"onAccent", p.OnAccent}, {"background", p.Background}} {
		if c.v != "" && !colorRe.MatchString(c.v) {
			add(path+"."+c.name, "%q is not a colour (#rgb or #rrggbb)", c.v)
		}
	}
}

// checkSupportURL accepts an https: or mailto: URL without spaces, quotes or
// angle brackets: a link the visitor may follow, never one the page loads.
func checkSupportURL(u string) error {
	if len(u) > MaxSupportURLLen {
		return fmt.Errorf("is %d bytes, at most %d", len(u), MaxSupportURLLen)
	}
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "mailto:") {
		return fmt.Errorf("%q is neither an https:// nor a mailto: URL", u)
	}
	for _, r := range u {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"'<>\`+"`", r) {
			return fmt.Errorf("%q holds a character a URL cannot (%q)", u, r)
		}
	}
	return nil
}

// logoURL checks a logo and returns it as the data: URL its <img> shows.
func logoURL(l Logo) (template.URL, error) {
	switch {
	case l.SVG != "" && l.PNG != "":
		return "", errors.New("set svg or png, not both")
	case l.SVG != "":
		if len(l.SVG) > MaxLogoBytes {
			return "", fmt.Errorf("svg is %d bytes, at most %d", len(l.SVG), MaxLogoBytes)
		}
		if err := checkSVG(l.SVG); err != nil {
			return "", fmt.Errorf("svg: %w", err)
		}
		// base64 rather than percent-encoding: the page then holds no
		// "http:" (the SVG namespace) and nothing html/template would
		// escape. The alphabet is safe in an attribute as it is.
		return template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(l.SVG))), nil
	case l.PNG != "":
		b, err := base64.StdEncoding.DecodeString(l.PNG)
		if err != nil {
			return "", fmt.Errorf("png is not base64: %w", err)
		}
		if len(b) > MaxLogoBytes {
			return "", fmt.Errorf("png is %d bytes, at most %d", len(b), MaxLogoBytes)
		}
		if !bytes.HasPrefix(b, pngMagic) {
			return "", errors.New("png is not a PNG file")
		}
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b)), nil
	}
	return "", errors.New("set svg or png")
}

// checkSVG requires well-formed XML whose root is <svg>, with no script,
// no foreignObject, no event handler and no reference outside the document.
// An SVG drawn by <img> can do none of these anyway; refusing them keeps
// the brand file honest about what it draws.
func checkSVG(s string) error {
	dec := xml.NewDecoder(strings.NewReader(s))
	dec.Strict = true
	root := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("not well-formed XML: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			if _, dt := tok.(xml.Directive); dt {
				return errors.New("holds a <!DOCTYPE> or other directive")
			}
			continue
		}
		name := strings.ToLower(el.Name.Local)
		if root && name != "svg" {
			return fmt.Errorf("the root element is <%s>, not <svg>", el.Name.Local)
		}
		root = false
		if name == "script" || name == "foreignobject" {
			return fmt.Errorf("holds a <%s>", el.Name.Local)
		}
		for _, a := range el.Attr {
			an := strings.ToLower(a.Name.Local)
			switch {
			case strings.HasPrefix(an, "on"):
				return fmt.Errorf("holds an event handler %s", a.Name.Local)
			case an == "href" || an == "src":
				if !strings.HasPrefix(a.Value, "#") {
					return fmt.Errorf("refers to %q: only #fragment references are allowed", a.Value)
				}
			case strings.Contains(strings.ToLower(a.Value), "url(") && !strings.Contains(a.Value, "url(#"):
				return fmt.Errorf("attribute %s refers to a URL", a.Name.Local)
			}
		}
	}
	if root {
		return errors.New("holds no <svg> element")
	}
	return nil
}
