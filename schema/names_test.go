package schema

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"
)

// celRule is one CEL rule of the CRD and its message.
type celRule struct{ Rule, Message string }

// crdRules are the CEL rules on the StackResource object itself in the
// generated crd.yaml (the XValidation markers on StackResource).
func crdRules(t *testing.T) []celRule {
	t.Helper()
	vs, ok := crdSchema(t)["x-kubernetes-validations"].([]any)
	require.True(t, ok, "crd.yaml has no CEL rules on the object")
	var out []celRule
	for _, v := range vs {
		m := v.(map[string]any)
		rule, _ := m["rule"].(string)
		msg, _ := m["message"].(string)
		out = append(out, celRule{Rule: rule, Message: msg})
	}
	return out
}

// suffixLiteral is a CEL string literal that is a child-name suffix.
var suffixLiteral = regexp.MustCompile(`'(-[a-z][-a-z]*)'`)

// TestCRDStatesTheChildSuffixes: the CEL rules of the CRD, which can only
// state the suffixes as literals, name exactly the suffixes of names.go, in
// its order — the name rule ReservedNameSuffixes, the spec.middlewares rule
// MiddlewareSuffixes — and their messages name each one; and a name as long
// as the CRD allows still names every child with a DNS label.
func TestCRDStatesTheChildSuffixes(t *testing.T) {
	rules := crdRules(t)
	find := func(marker string) celRule {
		t.Helper()
		var found []celRule
		for _, r := range rules {
			if strings.Contains(r.Rule, marker) {
				found = append(found, r)
			}
		}
		require.Len(t, found, 1, "CEL rules of crd.yaml containing %q", marker)
		return found[0]
	}
	literals := func(rule string) []string {
		var out []string
		for _, m := range suffixLiteral.FindAllStringSubmatch(rule, -1) {
			out = append(out, m[1])
		}
		return out
	}
	for name, tc := range map[string]struct {
		marker, inMessage string
		want              []string
	}{
		"metadata.name":    {marker: "self.metadata.name.endsWith(", want: ReservedNameSuffixes()},
		"spec.middlewares": {marker: "self.spec.middlewares.exists(", inMessage: "<name>", want: MiddlewareSuffixes()},
	} {
		t.Run(name, func(t *testing.T) {
			r := find(tc.marker)
			if diff := cmp.Diff(tc.want, literals(r.Rule)); diff != "" {
				t.Errorf("suffixes in the CEL rule %q (-names.go +crd.yaml):\n%s", r.Rule, diff)
			}
			for _, sfx := range tc.want {
				require.Contains(t, r.Message, tc.inMessage+sfx, "the rule's message names every suffix")
			}
		})
	}

	// The longest name the CRD admits, with the longest suffix, is still a
	// DNS label: the mirrored error-page Service is named so.
	r := find("size(self.metadata.name) <=")
	m := regexp.MustCompile(`size\(self\.metadata\.name\) <= (\d+)`).FindStringSubmatch(r.Rule)
	require.NotNil(t, m, r.Rule)
	maxName, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	longest := ""
	for _, sfx := range append(ReservedNameSuffixes(), MiddlewareSuffixes()...) {
		if len(sfx) > len(longest) {
			longest = sfx
		}
	}
	name := strings.Repeat("a", maxName)
	require.Empty(t, validation.IsDNS1123Label(name+longest), "a %d-character name with %s", maxName, longest)
}

// TestChildNames: each child's name is the resource's name and its suffix.
func TestChildNames(t *testing.T) {
	got := []string{HeadlessName("web"), ErrorPagesName("web"), RedirectName("web"), MiddlewareName("web"), StripName("web"), HTTPSName("web")}
	want := []string{"web-headless", "web-error-pages", "web-redirect", "web-errors", "web-strip", "web-https"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("child names (-want +got):\n%s", diff)
	}
}
