// No build tag: the untagged tests of docs/install.md (TestInstallDoc*) run
// these in `make test`, without a cluster.

package framework

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	kyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/stackdome/stackdome/e2e/installdoc"
)

// What docs/install.md tells Traefik's Helm chart, as the page and the
// pinned chart 41.3.0 from shared/vendor/ (rendered with bin/helm) say it.

// InstallDoc is the page, relative to the repository root.
const InstallDoc = installdoc.Page

// TraefikKubeVersion is the Kubernetes the chart is rendered for (the e2e
// control plane's); without one Helm assumes v1.20 and the chart's
// kubeVersion (>=1.25.0-0) refuses it.
const TraefikKubeVersion = "v1.37.2"

// HelmInstall is one `helm install traefik …` command of the page: the
// values it passes, as helm reads them.
type HelmInstall struct {
	Block   installdoc.Block
	Args    []string // the value flags, as they would be passed to helm template
	Sets    []string // every key a --set, --set-string or values file sets
	Version string   // --version, "" without one
}

// ChartVersion is the version the chart's Chart.yaml says.
func ChartVersion(t *testing.T, chart string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(chart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "version:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatalf("%s: no version", filepath.Join(chart, "Chart.yaml"))
	return ""
}

// TraefikChart extracts the pinned chart into a temporary directory.
func TraefikChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ExtractArchive(t, VendorArchive(t, TraefikChartArchive), TraefikChartDir, dir)
	return dir
}

// HelmBinary is bin/helm, which `make tools` (a prerequisite of make test)
// builds, in the parent of the working directory (the repository root when
// the calling package is e2e/); the test fails without it.
func HelmBinary(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "bin", "helm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s is not there (%v): run `make tools`", bin, err)
	}
	return bin
}

// RenderedService is the part of the chart's Service the page relies on.
type RenderedService struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Type  string `json:"type"`
		Ports []struct {
			Name     string `json:"name"`
			NodePort int    `json:"nodePort"`
		} `json:"ports"`
	} `json:"spec"`
}

// RenderTraefikService renders the chart as `helm install traefik
// --namespace traefik` would, with the value flags args, and returns its one
// Service.
func RenderTraefikService(t *testing.T, helmBin, chart string, args []string) RenderedService {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin, append([]string{"template", "traefik", chart, "--namespace", "traefik", "--kube-version", TraefikKubeVersion}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template of Traefik's chart with %q: %v\n%s", args, err, stderr.String())
	}
	var svcs []RenderedService
	r := kyaml.NewYAMLReader(bufio.NewReader(&stdout))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		js, err := kyaml.ToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var s RenderedService
		if err := json.Unmarshal(js, &s); err == nil && s.Kind == "Service" {
			svcs = append(svcs, s)
		}
	}
	if len(svcs) != 1 {
		t.Fatalf("Traefik's chart rendered %d Services, want 1", len(svcs))
	}
	return svcs[0]
}

// ChartKeys are the value keys a chart reads: its values.yaml and its
// values.schema.json.
type ChartKeys struct {
	values any // values.yaml, as JSON
	schema *valuesSchema
}

type valuesSchema struct {
	Properties           map[string]*valuesSchema `json:"properties"`
	AdditionalProperties json.RawMessage          `json:"additionalProperties"`
	Items                *valuesSchema            `json:"items"`
}

func ReadChartKeys(t *testing.T, chart string) ChartKeys {
	t.Helper()
	var k ChartKeys
	data, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := kyaml.ToJSON(data)
	if err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	if err := json.Unmarshal(js, &k.values); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(filepath.Join(chart, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &k.schema); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	return k
}

// TraefikInstalls finds every `helm install traefik` (or `helm upgrade
// --install traefik`) command in the page's shell blocks and reads the
// value flags it passes. A value flag the test cannot read is an error, so
// that no value the page passes goes unchecked.
func TraefikInstalls(doc []byte) ([]HelmInstall, error) {
	blocks, errs := installdoc.Parse(doc)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []HelmInstall
	for _, b := range blocks {
		for _, cmd := range ShellCommands(b.Text) {
			// Which release a command installs is read before its values,
			// which may hold what only the shell can expand.
			if !isTraefikInstall(strings.Fields(cmd)) {
				continue
			}
			words, err := ShellWords(cmd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b, err)
			}
			in := HelmInstall{Block: b}
			for i := 0; i < len(words); i++ {
				w := words[i]
				flag, val, hasVal := strings.Cut(w, "=")
				if !strings.HasPrefix(flag, "-") {
					continue
				}
				takesValue := map[string]bool{"--set": true, "--set-string": true, "-f": true, "--values": true,
					"--version": true, "--namespace": true, "-n": true, "--timeout": true}
				if !hasVal && takesValue[flag] {
					if i+1 >= len(words) {
						return nil, fmt.Errorf("%s: %s without a value", b, flag)
					}
					i++
					val = words[i]
				}
				switch flag {
				case "--set", "--set-string":
					if strings.ContainsAny(val, "$`") {
						return nil, fmt.Errorf("%s: %s %s: the test cannot expand what only the shell can", b, flag, val)
					}
					in.Args = append(in.Args, flag, val)
					in.Sets = append(in.Sets, setKeys(val)...)
				case "-f", "--values":
					return nil, fmt.Errorf("%s: values file %s: the test reads --set values only; teach it to read the file", b, val)
				case "--version":
					in.Version = val
				case "--namespace", "-n", "--timeout", "--create-namespace", "--wait", "--atomic", "--install":
				default:
					return nil, fmt.Errorf("%s: flag %s: the test does not know whether it passes values", b, flag)
				}
			}
			out = append(out, in)
		}
	}
	return out, nil
}

func isTraefikInstall(words []string) bool {
	if len(words) < 3 || words[0] != "helm" {
		return false
	}
	var pos []string
	for _, w := range words[1:] {
		if !strings.HasPrefix(w, "-") {
			pos = append(pos, w)
		}
	}
	install := words[1] == "install" || (words[1] == "upgrade" && slices.Contains(words, "--install"))
	return install && len(pos) >= 2 && pos[1] == "traefik"
}

// setKeys are the keys of one --set value: comma-separated key=value
// pairs, a comma inside {…} being part of a list value.
func setKeys(val string) []string {
	var keys []string
	depth, start := 0, 0
	flush := func(end int) {
		if k, _, ok := strings.Cut(val[start:end], "="); ok {
			keys = append(keys, regexp.MustCompile(`\[[0-9]+\]`).ReplaceAllString(k, ""))
		}
	}
	for i, c := range val {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	flush(len(val))
	return keys
}

// KindNodePorts are the containerPorts the quick start's kind cluster maps
// from its node, sorted: the NodePorts Traefik's Service must have.
func KindNodePorts(doc []byte) []string {
	blocks, _ := installdoc.Parse(doc)
	var ports []string
	for _, b := range blocks {
		if !strings.Contains(b.Text, "kind create cluster") {
			continue
		}
		for _, m := range regexp.MustCompile(`containerPort: *([0-9]+)`).FindAllStringSubmatch(b.Text, -1) {
			ports = append(ports, m[1])
		}
	}
	slices.Sort(ports)
	return ports
}

// DefaultsRow is one row of the page's table of Traefik's chart defaults:
// its first code span, `key` or `key: value`.
type DefaultsRow struct{ Key, Value string }

// ChartDefaultsTable reads the page's table whose header is "value, chart
// default".
func ChartDefaultsTable(doc []byte) ([]DefaultsRow, error) {
	var rows []DefaultsRow
	in := false
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| value, chart default |") {
			in = true
			continue
		}
		if !in {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := regexp.MustCompile("^\\| `([^`]+)`").FindStringSubmatch(line)
		if m == nil {
			continue // the separator row
		}
		k, v, _ := strings.Cut(m[1], ":")
		rows = append(rows, DefaultsRow{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s has no table of Traefik's chart defaults (header \"| value, chart default |\")", InstallDoc)
	}
	return rows, nil
}

// TraefikValuesYAMLKeys are the keys of the page's yaml blocks of Traefik
// chart values: those after a paragraph that says "Traefik Helm chart
// values".
func TraefikValuesYAMLKeys(t *testing.T, doc []byte) []string {
	t.Helper()
	var keys []string
	parts := strings.Split(string(doc), "Traefik Helm chart values")
	for _, p := range parts[1:] {
		_, rest, ok := strings.Cut(p, "```yaml\n")
		if !ok {
			continue
		}
		body, _, _ := strings.Cut(rest, "```")
		js, err := kyaml.ToJSON([]byte(body))
		if err != nil {
			t.Fatalf("%s: Traefik chart values: %v", InstallDoc, err)
		}
		var v any
		if err := json.Unmarshal(js, &v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, leafKeys("", v)...)
	}
	if len(keys) == 0 {
		t.Fatalf("%s has no yaml block of Traefik Helm chart values", InstallDoc)
	}
	return keys
}

func leafKeys(prefix string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{prefix}
	}
	var out []string
	for k, c := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, leafKeys(p, c)...)
	}
	slices.Sort(out)
	return out
}

// has reports whether the chart knows a dotted key: each step is a key of
// values.yaml there, or a property of the schema, or a name of a map the
// schema declares by its entries' shape (additionalProperties a schema, as
// ports.<entry point>). A schema that merely does not forbid other keys
// does not make them known: service.type is allowed and read by nothing.
func (k ChartKeys) Has(key string) bool {
	v, s := k.values, k.schema
	for _, step := range strings.Split(key, ".") {
		m, _ := v.(map[string]any)
		nv, inValues := m[step]
		var ns *valuesSchema
		if s != nil {
			if p, ok := s.Properties[step]; ok {
				ns = p
			} else if a := bytes.TrimSpace(s.AdditionalProperties); len(a) > 0 && a[0] == '{' {
				_ = json.Unmarshal(a, &ns)
			}
		}
		if !inValues && ns == nil {
			return false
		}
		v, s = nv, ns
	}
	return true
}

// defaultOf is a key's value in values.yaml, printed as the page prints
// it (a scalar as YAML writes it).
func (k ChartKeys) DefaultOf(key string) (string, bool) {
	v := k.values
	for _, step := range strings.Split(key, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		if v, ok = m[step]; !ok {
			return "", false
		}
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool, float64:
		return fmt.Sprint(v), true
	}
	js, _ := json.Marshal(v)
	return string(js), true
}
