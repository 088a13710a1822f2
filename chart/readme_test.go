package chart

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var update = flag.Bool("update", false, "rewrite README.md from Chart.yaml and values.yaml")

// valueDoc is one row of the README's values table.
type valueDoc struct {
	key, typ, def, desc string
}

// docComment reads a helm-docs style comment: the part of a key's head
// comment from the line starting "# --" on, joined into one paragraph. An
// optional "(type)" right after "--" overrides the type read from the
// value (for a null default). No "# --" line: no description.
func docComment(comment string) (desc, typ string) {
	var lines []string
	started := false
	for _, line := range strings.Split(comment, "\n") {
		text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if rest, ok := strings.CutPrefix(text, "--"); ok {
			started, lines = true, nil // the last "# --" of the block wins
			text = strings.TrimSpace(rest)
			if m := regexp.MustCompile(`^\((\w+)\)\s*`).FindStringSubmatch(text); m != nil {
				typ, text = m[1], text[len(m[0]):]
			}
		}
		if started && text != "" {
			lines = append(lines, text)
		}
	}
	return strings.Join(lines, " "), typ
}

// valueDocs walks values.yaml: a row for every key with a "# --" comment (a
// map documented as a whole shows its whole default, and its keys get rows
// only where they have comments of their own). undocumented lists the
// values no comment covers: neither their own nor a map's above them.
func valueDocs(t *testing.T, data []byte) (rows []valueDoc, undocumented []string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	var walk func(m *yaml.Node, prefix string, covered bool)
	walk = func(m *yaml.Node, prefix string, covered bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			key := prefix + k.Value
			desc, typ := docComment(k.HeadComment)
			if desc != "" {
				if typ == "" {
					typ = yamlType(v)
				}
				rows = append(rows, valueDoc{key: key, typ: typ, def: yamlDefault(t, v), desc: desc})
			}
			if v.Kind == yaml.MappingNode && len(v.Content) > 0 {
				walk(v, key+".", covered || desc != "")
			} else if desc == "" && !covered {
				undocumented = append(undocumented, key)
			}
		}
	}
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		walk(doc.Content[0], "", false)
	}
	return rows, undocumented
}

func yamlType(v *yaml.Node) string {
	switch {
	case v.Kind == yaml.SequenceNode:
		return "list"
	case v.Kind == yaml.MappingNode:
		return "object"
	}
	return map[string]string{"!!int": "int", "!!float": "float", "!!bool": "bool", "!!str": "string", "!!null": "null"}[v.Tag]
}

// yamlDefault is the value as compact JSON, the way it reads in --set-json.
func yamlDefault(t *testing.T, v *yaml.Node) string {
	t.Helper()
	var x any
	if err := v.Decode(&x); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// flagHelps reads the help of every serve flag from docs/flags.md, which
// the main package generates from the flag set (TestFlagsDoc): the one
// description of each setting.
func flagHelps(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	helps := map[string]string{}
	row := regexp.MustCompile("^\\| `--([a-z0-9-]+)` \\| [^|]+ \\| [^|]+ \\| (.*) \\|$")
	for _, line := range strings.Split(string(data), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			helps[m[1]] = strings.ReplaceAll(m[2], `\|`, "|")
		}
	}
	if len(helps) == 0 {
		t.Fatal("docs/flags.md lists no flag")
	}
	return helps
}

// flagRef is a description that names a flag and adds only the chart's
// own note: "--port-check-grace" or "--dial-workers. Per replica.".
var flagRef = regexp.MustCompile(`^--([a-z0-9-]+)(?:\.\s*(.*))?$`)

// withFlagHelp expands a description that names a flag into the flag's
// help, then the chart's note: the help is written once, in the flag set.
// config.* values must name their flag so (one key per flag); a flag
// docs/flags.md does not list is an error.
func withFlagHelp(t *testing.T, r valueDoc, helps map[string]string) string {
	t.Helper()
	m := flagRef.FindStringSubmatch(r.desc)
	if m == nil {
		if strings.HasPrefix(r.key, "config.") {
			t.Errorf("values.yaml: %s's comment must name its flag (# -- --flag-name), whose help is its description", r.key)
		}
		return r.desc
	}
	help, ok := helps[m[1]]
	if !ok {
		t.Errorf("values.yaml: %s names --%s, which docs/flags.md does not list", r.key, m[1])
		return r.desc
	}
	desc := "`--" + m[1] + "`: " + help + "."
	if m[2] != "" {
		desc += " " + m[2]
	}
	return desc
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// chartREADME renders README.md from Chart.yaml, values.yaml and the
// minimum Metacontroller of _helpers.tpl.
func chartREADME(t *testing.T) []byte {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	js, err := kyaml.ToJSON(read("Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Name, Description, Version, AppVersion, KubeVersion, Home string }
	if err := json.Unmarshal(js, &c); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`define "stackdome.minMetacontroller" -}}([^{]+){{`).FindSubmatch(read("templates/_helpers.tpl"))
	if m == nil {
		t.Fatal("templates/_helpers.tpl defines no stackdome.minMetacontroller")
	}
	rows, undocumented := valueDocs(t, read("values.yaml"))
	if len(undocumented) > 0 {
		t.Errorf("values.yaml: no \"# --\" comment covers %q (document the key or a map above it)", undocumented)
	}

	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("<!-- Generated from Chart.yaml and values.yaml by chart/readme_test.go (make chart-readme). Do not edit. -->\n\n")
	p("# %s\n\n%s\n\n", c.Name, c.Description)
	p("Chart %s · stackdome %s · Kubernetes `%s`\n\n", c.Version, c.AppVersion, c.KubeVersion)
	p("The whole guide — what the chart installs, the pod network, Argo CD, upgrades — is\n")
	p("[docs/install.md](%s/blob/main/docs/install.md); alerts and runbooks are in\n", c.Home)
	p("[docs/operations.md](%s/blob/main/docs/operations.md).\n\n", c.Home)
	p("## Before installing\n\n")
	p("- Metacontroller %s or later, with its CRDs.\n", m[1])
	p("- Traefik v3's CRDs (`traefik.io/v1alpha1`).\n\n")
	p("The chart refuses to render without them, naming what to install first (`crdCheck`).\n")
	p("Rendering without a cluster (`helm template`) needs the cluster's `--kube-version` and\n")
	p("`--api-versions`, as Argo CD passes them, or `--set crdCheck=false`.\n\n")
	p("## Install\n\n```sh\nhelm install %s ./chart --namespace %s --create-namespace \\\n  --set 'podCIDRs={10.42.0.0/16}'   # your cluster's pod network\n```\n\n", c.Name, c.Name)
	p("## Values\n\n| Key | Type | Default | Description |\n|---|---|---|---|\n")
	helps := flagHelps(t)
	for _, r := range rows {
		p("| `%s` | %s | `%s` | %s |\n", r.key, r.typ, cell(r.def), cell(withFlagHelp(t, r, helps)))
	}
	return b.Bytes()
}

// TestChartREADME fails when README.md is not what Chart.yaml and
// values.yaml make of it, or a value has no description; -update (make
// chart-readme) rewrites it.
func TestChartREADME(t *testing.T) {
	got := chartREADME(t)
	if *update {
		if err := os.WriteFile("README.md", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatalf("no chart README (make chart-readme): %v", err)
	}
	if diff := cmp.Diff(string(committed), string(got)); diff != "" {
		t.Errorf("chart/README.md is stale; run `make chart-readme` (-committed +generated):\n%s", diff)
	}
}

// TestDocComment: the comment forms values.yaml uses.
func TestDocComment(t *testing.T) {
	type doc struct{ Desc, Typ string }
	tests := map[string]struct {
		comment string
		want    doc
	}{
		"none":                   {comment: "", want: doc{}},
		"plain comment":          {comment: "# hooks and health", want: doc{}},
		"one line":               {comment: "# -- Replicas.", want: doc{Desc: "Replicas."}},
		"continued":              {comment: "# -- Seconds between\n# resyncs.", want: doc{Desc: "Seconds between resyncs."}},
		"after a section header": {comment: "# Default values.\n\n# -- Replicas.", want: doc{Desc: "Replicas."}},
		"type override":          {comment: "# -- (int) Seconds; empty: derived.", want: doc{Desc: "Seconds; empty: derived.", Typ: "int"}},
		"pipes and code":         {comment: "# -- `a|b` works", want: doc{Desc: "`a|b` works"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			desc, typ := docComment(tc.comment)
			if diff := cmp.Diff(tc.want, doc{desc, typ}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
