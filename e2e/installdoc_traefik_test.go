package e2e

// What docs/install.md tells Traefik's Helm chart, checked against the
// chart itself: the pinned chart 41.3.0 from shared/vendor/, rendered with
// bin/helm. This file has no build tag: it runs in `make test`, without a
// cluster.

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
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/stackdome/stackdome/e2e/installdoc"
)

// installDoc is the page, relative to the repository root.
const installDoc = installdoc.Page

// traefikKubeVersion is the Kubernetes the chart is rendered for (the e2e
// control plane's); without one Helm assumes v1.20 and the chart's
// kubeVersion (>=1.25.0-0) refuses it.
const traefikKubeVersion = "v1.37.2"

// helmInstall is one `helm install traefik …` command of the page: the
// values it passes, as helm reads them.
type helmInstall struct {
	block   installdoc.Block
	args    []string // the value flags, as they would be passed to helm template
	sets    []string // every key a --set, --set-string or values file sets
	version string   // --version, "" without one
}

// TestInstallDocTraefikValues: every `helm install traefik` of
// docs/install.md, rendered from the pinned Traefik chart with exactly the
// value flags the page passes (parsed from the page), sets only keys the
// chart reads — each is in its values.yaml or values.schema.json — and the
// kind install renders a NodePort Service on the node ports the page's kind
// cluster maps. The page's table of the chart's defaults names keys the
// chart has, with the chart's values; so does its yaml of values for
// Traefik's entry points. A key the chart renames (service.type →
// service.spec.type in chart v40.0.0, read by nothing and refused by
// nothing) fails here, not on a user's cluster.
func TestInstallDocTraefikValues(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(installDoc)))
	if err != nil {
		t.Fatal(err)
	}
	installs, err := traefikInstalls(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(installs) == 0 {
		t.Fatalf("%s has no `helm install traefik` command", installDoc)
	}
	chart := traefikChart(t)
	known := readChartKeys(t, chart)
	helmBin := helmBinary(t)

	kindPorts := kindNodePorts(doc)
	if len(kindPorts) == 0 {
		t.Fatalf("%s: no containerPort in the kind cluster's extraPortMappings", installDoc)
	}
	pinned := chartVersion(t, chart)
	nodePortInstalls := 0
	for _, in := range installs {
		t.Run(fmt.Sprintf("line %d", in.block.Line), func(t *testing.T) {
			// The page pins the chart the suite installs (TestInstallDoc
			// runs it from the pinned archive, whose version helm does not
			// check against --version for a local chart).
			if in.version != pinned {
				t.Errorf("%s installs Traefik's chart --version %q; the suite installs the pinned %s (%s)", in.block, in.version, pinned, traefikChartArchive)
			}
			for _, k := range in.sets {
				if !known.has(k) {
					t.Errorf("%s sets %s, which Traefik's chart %s neither has in values.yaml nor declares in values.schema.json: it is read by nothing", in.block, k, traefikChartArchive)
				}
			}
			svc := renderTraefikService(t, helmBin, chart, in.args)
			if !slices.ContainsFunc(in.args, func(a string) bool { return strings.Contains(a, "=NodePort") }) {
				return
			}
			nodePortInstalls++
			var got struct {
				Type  string   `json:"type"`
				Ports []string `json:"nodePorts"`
			}
			got.Type = svc.Spec.Type
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					got.Ports = append(got.Ports, strconv.Itoa(p.NodePort))
				}
			}
			slices.Sort(got.Ports)
			want := got
			want.Type, want.Ports = "NodePort", kindPorts
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: the Service Traefik's chart renders from the page's values is not the NodePort Service on the ports the kind cluster maps (-page +rendered):\n%s", in.block, d)
			}
		})
	}
	if nodePortInstalls == 0 {
		t.Errorf("%s: no `helm install traefik` asks for a NodePort Service (the kind path needs one)", installDoc)
	}

	table, err := chartDefaultsTable(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range table {
		v, ok := known.defaultOf(row.key)
		switch {
		case !known.has(row.key):
			t.Errorf("%s: the table of Traefik's chart defaults names %s, which the chart does not have", installDoc, row.key)
		case row.value != "" && (!ok || v != row.value):
			t.Errorf("%s: the table of Traefik's chart defaults says %s: %s, the chart's values.yaml has %s", installDoc, row.key, row.value, v)
		}
	}
	for _, k := range traefikValuesYAMLKeys(t, doc) {
		if !known.has(k) {
			t.Errorf("%s: its Traefik chart values set %s, which the chart does not have", installDoc, k)
		}
	}
}

// TestInstallDocTraefikValuesBite: the checks fail on the key the page set
// before chart v40.0.0 renamed it, and pass on the one that replaced it.
func TestInstallDocTraefikValuesBite(t *testing.T) {
	chart := traefikChart(t)
	known := readChartKeys(t, chart)
	if known.has("service.type") {
		t.Error("service.type counted as a key of the chart")
	}
	for _, k := range []string{"service.spec.type", "ports.web.nodePort", "ports.websecure.http.middlewares", "ports.web.http.middlewares"} {
		if !known.has(k) {
			t.Errorf("%s not counted as a key of the chart", k)
		}
	}
	svc := renderTraefikService(t, helmBinary(t), chart, []string{"--set", "service.type=NodePort"})
	if svc.Spec.Type != "LoadBalancer" {
		t.Errorf("with service.type=NodePort the chart rendered a %s Service; the check relies on it being ignored (LoadBalancer)", svc.Spec.Type)
	}
	ins, err := traefikInstalls([]byte("<!-- e2e: run -->\n```sh\nhelm install traefik traefik/traefik --version 1 --namespace traefik \\\n  --set service.type=NodePort --set 'a.b=1,c.d={x,y}'\n```\n"))
	if err != nil || len(ins) != 1 {
		t.Fatalf("%v %v", ins, err)
	}
	if d := cmp.Diff([]string{"service.type", "a.b", "c.d"}, ins[0].sets); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	for _, cmd := range []string{"helm install traefik traefik/traefik --set-file x=y", `helm install traefik traefik/traefik --set "a=$B"`} {
		if _, err := traefikInstalls([]byte("<!-- e2e: run -->\n```sh\n" + cmd + "\n```\n")); err == nil {
			t.Errorf("%s: a value the test cannot read was accepted", cmd)
		}
	}
	// A chart given by a variable (a local copy) is fine: only values count.
	if ins, err := traefikInstalls([]byte("<!-- e2e: run -->\n```sh\nhelm install traefik \"$CHART\" --set a=1\n```\n")); err != nil || len(ins) != 1 {
		t.Errorf("a chart path in a variable: %v %v", ins, err)
	}
}

// chartVersion is the version the chart's Chart.yaml says.
func chartVersion(t *testing.T, chart string) string {
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

// traefikChart extracts the pinned chart into a temporary directory.
func traefikChart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	extractArchive(t, vendorArchive(t, traefikChartArchive), traefikChartDir, dir)
	return dir
}

// helmBinary is bin/helm, which `make tools` (a prerequisite of make test)
// builds.
func helmBinary(t *testing.T) string {
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

// renderedService is the part of the chart's Service the page relies on.
type renderedService struct {
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

// renderTraefikService renders the chart as `helm install traefik
// --namespace traefik` would, with the value flags args, and returns its one
// Service.
func renderTraefikService(t *testing.T, helmBin, chart string, args []string) renderedService {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin, append([]string{"template", "traefik", chart, "--namespace", "traefik", "--kube-version", traefikKubeVersion}, args...)...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template of Traefik's chart with %q: %v\n%s", args, err, stderr.String())
	}
	var svcs []renderedService
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
		var s renderedService
		if err := json.Unmarshal(js, &s); err == nil && s.Kind == "Service" {
			svcs = append(svcs, s)
		}
	}
	if len(svcs) != 1 {
		t.Fatalf("Traefik's chart rendered %d Services, want 1", len(svcs))
	}
	return svcs[0]
}

// chartKeys are the value keys a chart reads: its values.yaml and its
// values.schema.json.
type chartKeys struct {
	values any // values.yaml, as JSON
	schema *valuesSchema
}

type valuesSchema struct {
	Properties           map[string]*valuesSchema `json:"properties"`
	AdditionalProperties json.RawMessage          `json:"additionalProperties"`
	Items                *valuesSchema            `json:"items"`
}

func readChartKeys(t *testing.T, chart string) chartKeys {
	t.Helper()
	var k chartKeys
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

// has reports whether the chart knows a dotted key: each step is a key of
// values.yaml there, or a property of the schema, or a name of a map the
// schema declares by its entries' shape (additionalProperties a schema, as
// ports.<entry point>). A schema that merely does not forbid other keys
// does not make them known: service.type is allowed and read by nothing.
func (k chartKeys) has(key string) bool {
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
func (k chartKeys) defaultOf(key string) (string, bool) {
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

// traefikInstalls finds every `helm install traefik` (or `helm upgrade
// --install traefik`) command in the page's shell blocks and reads the
// value flags it passes. A value flag the test cannot read is an error, so
// that no value the page passes goes unchecked.
func traefikInstalls(doc []byte) ([]helmInstall, error) {
	blocks, errs := installdoc.Parse(doc)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []helmInstall
	for _, b := range blocks {
		for _, cmd := range shellCommands(b.Text) {
			// Which release a command installs is read before its values,
			// which may hold what only the shell can expand.
			if !isTraefikInstall(strings.Fields(cmd)) {
				continue
			}
			words, err := shellWords(cmd)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", b, err)
			}
			in := helmInstall{block: b}
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
					in.args = append(in.args, flag, val)
					in.sets = append(in.sets, setKeys(val)...)
				case "-f", "--values":
					return nil, fmt.Errorf("%s: values file %s: the test reads --set values only; teach it to read the file", b, val)
				case "--version":
					in.version = val
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

// shellCommands splits a block into its commands: backslash-newline
// continuations joined, comments and blank lines dropped.
func shellCommands(text string) []string {
	var cmds []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd := strings.TrimSpace(cur.String())
		cur.Reset()
		if cmd != "" && !strings.HasPrefix(cmd, "#") {
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

// shellWords splits one command as the shell would, for the quoting the
// page uses: single and double quotes, and a comment to the end. Variables
// are kept as written (nothing here can expand them): a caller that reads
// a word checks it holds none.
func shellWords(cmd string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", cmd)
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(cmd[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unclosed \" in %q", cmd)
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '#' && !inWord:
			i = len(cmd)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
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

// kindNodePorts are the containerPorts the quick start's kind cluster maps
// from its node, sorted: the NodePorts Traefik's Service must have.
func kindNodePorts(doc []byte) []string {
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

// defaultsRow is one row of the page's table of Traefik's chart defaults:
// its first code span, `key` or `key: value`.
type defaultsRow struct{ key, value string }

// chartDefaultsTable reads the page's table whose header is "value, chart
// default".
func chartDefaultsTable(doc []byte) ([]defaultsRow, error) {
	var rows []defaultsRow
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
		rows = append(rows, defaultsRow{key: strings.TrimSpace(k), value: strings.TrimSpace(v)})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s has no table of Traefik's chart defaults (header \"| value, chart default |\")", installDoc)
	}
	return rows, nil
}

// traefikValuesYAMLKeys are the keys of the page's yaml blocks of Traefik
// chart values: those after a paragraph that says "Traefik Helm chart
// values".
func traefikValuesYAMLKeys(t *testing.T, doc []byte) []string {
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
			t.Fatalf("%s: Traefik chart values: %v", installDoc, err)
		}
		var v any
		if err := json.Unmarshal(js, &v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, leafKeys("", v)...)
	}
	if len(keys) == 0 {
		t.Fatalf("%s has no yaml block of Traefik Helm chart values", installDoc)
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
