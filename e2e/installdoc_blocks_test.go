package e2e

// docs/install.md's shell blocks and what stands in for the ones that cannot
// run here. This file has no build tag: TestInstallDocBlocks runs in `make
// test` too, without a cluster, so a block added to the page without a
// marker, or a substituted block edited without its stand-in, fails before
// the e2e suite ever runs. TestInstallDoc (install_doc_test.go, tag e2e)
// runs the blocks.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installDoc is the page, relative to the repository root.
const installDoc = "docs/install.md"

// docBlock is one shell block of the page.
type docBlock struct {
	line   int    // of the opening fence, 1-based
	marker string // "run" or "substituted"
	text   string // the block's lines, de-indented, without the fences
}

func (b docBlock) String() string {
	first, _, _ := strings.Cut(b.text, "\n")
	return fmt.Sprintf("%s:%d (%s) %q", installDoc, b.line, b.marker, first)
}

// substitution is what runs, in the page's shell, instead of a block that
// needs a kind cluster or an image registry. Its shell may use the
// variables the test sets (E2E_POD_CIDR).
type substitution struct {
	doc   string // the block exactly as the page has it
	shell string // what runs instead ("" nothing)
	why   string // what the block does on a cluster, and what stands in here
}

// installDocSubstitutions is every substituted block of docs/install.md.
// docs/e2e.md's table "How TestInstallDoc runs install.md" says the same in
// prose; an entry whose block is no longer on the page fails the test.
var installDocSubstitutions = []substitution{
	{
		doc: `cat > kind-stackdome.yaml <<'EOF'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
    extraPortMappings:
      - {containerPort: 30080, hostPort: 80, listenAddress: 127.0.0.1}
      - {containerPort: 30443, hostPort: 443, listenAddress: 127.0.0.1}
EOF
kind create cluster --name stackdome --config kind-stackdome.yaml
make kind-load KIND_CLUSTER=stackdome
POD_CIDR=10.244.0.0/16   # kind's pod network: the only addresses stackdome dials`,
		shell: `POD_CIDR=$E2E_POD_CIDR`,
		why:   "a kind cluster with the image loaded: the suite's control plane is the cluster, and no image is pulled here (tools/image's TestMakeKindLoad covers make kind-load); the pod network is the test host's /24",
	},
	{
		doc:   `POD_CIDR=10.42.0.0/16   # yours: k3s and RKE2 use this one`,
		shell: `POD_CIDR=$E2E_POD_CIDR`,
		why:   "the cluster's pod network: the test host's /24",
	},
	{
		doc: `helm repo add traefik https://traefik.github.io/charts
helm install traefik traefik/traefik --version 41.3.0 -n traefik --create-namespace \
  --set service.spec.type=NodePort --set ports.web.nodePort=30080 --set ports.websecure.nodePort=30443
kubectl -n traefik rollout status deployment/traefik --timeout=5m
TRAEFIK=127.0.0.1`,
		shell: `helm install traefik "$E2E_TRAEFIK_CHART" --namespace traefik --create-namespace
kubectl -n traefik rollout status deployment/traefik --timeout=5m
until TRAEFIK=$(kubectl -n traefik get service traefik -o jsonpath='{.status.loadBalancer.ingress[0].ip}') && [ -n "$TRAEFIK" ]; do sleep 1; done`,
		why: "Traefik's chart on kind: the same pinned chart (no internet) with its default LoadBalancer Service, whose address the load-balancer stand-in gives (kind's node ports on 127.0.0.1 are not this machine's; TestInstallDocTraefikValues renders the NodePort install as written)",
	},
	{
		doc: `make image-push REGISTRY=registry.example.com/platform
IMAGE_REPOSITORY=registry.example.com/platform/stackdome`,
		shell: `IMAGE_REPOSITORY=registry.example.com/platform/stackdome`,
		why:   "pushing the image: no image is pulled here (tools/image's TestMakeImagePush covers make image-push)",
	},
	{
		doc: `go run . render -f hello.yaml`,
		why: "stackdome render previews a StackResource's children without a cluster: nothing to run against the cluster, and the page's app is applied from a heredoc, not a file",
	},
	{
		doc: `kind delete cluster --name stackdome`,
		why: "deleting the kind cluster: nothing; the suite stops its control plane at the end",
	},
}

// localCopy is what a run block fetches from the internet, which
// TestInstallDoc replaces, and nothing else of the block, by the pinned
// local copy of the same thing.
type localCopy struct {
	from string // exactly as the page has it
	to   string // what runs instead: a variable TestInstallDoc sets
	why  string
}

// installDocLocalCopies is every local copy a run block of docs/install.md
// is run with. docs/e2e.md's table "How TestInstallDoc runs install.md" says the
// same in prose; an entry no run block uses fails the test.
var installDocLocalCopies = []localCopy{
	{
		from: `'https://github.com/metacontroller/metacontroller/manifests/production?ref=v4.17.2'`,
		to:   `"$E2E_METACONTROLLER_MANIFESTS"`,
		why:  "manifests/production of tag v4.17.2 in the pinned source (no internet); its StatefulSet's pod is the real Metacontroller binary the suite runs (docs/e2e.md)",
	},
	{
		from: `helm upgrade --install traefik traefik/traefik`,
		to:   `helm upgrade --install traefik "$E2E_TRAEFIK_CHART"`,
		why:  "the pinned Traefik chart 41.3.0 (docs/e2e.md), extracted; its pod is the real Traefik binary of the chart's appVersion (docs/e2e.md)",
	},
}

// docStep is one block and, when it is substituted, its stand-in; text is
// what runs (a run block with its local copies).
type docStep struct {
	block  docBlock
	sub    *substitution
	text   string
	copies []string // the local copies text uses
}

var (
	fenceOpen = regexp.MustCompile("^( *)```([A-Za-z0-9_+-]*)\\s*$")
	markerRE  = regexp.MustCompile(`^ *<!-- e2e: (run|substituted) -->\s*$`)
	anyMarker = regexp.MustCompile(`<!-- *e2e:`)
)

// shellLangs are the fences whose blocks are commands.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "zsh": true}

// parseDocBlocks reads the shell blocks of the page. Every shell block must
// be preceded (blank lines apart) by a marker, and every marker must
// precede a shell block.
func parseDocBlocks(data []byte) ([]docBlock, []error) {
	var (
		blocks  []docBlock
		errs    []error
		marker  string // pending marker
		markerL int
		inFence bool
		indent  int
		lang    string
		start   int
		body    []string
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inFence {
			if strings.TrimSpace(line) == "```" {
				inFence = false
				if shellLangs[lang] {
					if marker == "" {
						errs = append(errs, fmt.Errorf("%s:%d: a %s block without a marker: say how make e2e treats it (<!-- e2e: run --> or <!-- e2e: substituted -->, and a stand-in in e2e/installdoc_blocks_test.go)", installDoc, start, lang))
					} else {
						blocks = append(blocks, docBlock{line: start, marker: marker, text: strings.Join(body, "\n")})
					}
				} else if marker != "" {
					errs = append(errs, fmt.Errorf("%s:%d: marker before a %q block, which is not a shell block", installDoc, markerL, lang))
				}
				marker = ""
				continue
			}
			trimmed := line
			for i := 0; i < indent && strings.HasPrefix(trimmed, " "); i++ {
				trimmed = trimmed[1:]
			}
			body = append(body, trimmed)
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			inFence, indent, lang, start, body = true, len(m[1]), m[2], n, nil
			continue
		}
		if m := markerRE.FindStringSubmatch(line); m != nil {
			if marker != "" {
				errs = append(errs, fmt.Errorf("%s:%d: a marker after the marker of line %d, with no block between", installDoc, n, markerL))
			}
			marker, markerL = m[1], n
			continue
		}
		if anyMarker.MatchString(line) {
			errs = append(errs, fmt.Errorf("%s:%d: malformed e2e marker %q (want <!-- e2e: run --> or <!-- e2e: substituted -->)", installDoc, n, strings.TrimSpace(line)))
			continue
		}
		if strings.TrimSpace(line) != "" && marker != "" {
			errs = append(errs, fmt.Errorf("%s:%d: marker not followed by a shell block", installDoc, markerL))
			marker = ""
		}
	}
	if inFence {
		errs = append(errs, fmt.Errorf("%s:%d: block never closed", installDoc, start))
	}
	if marker != "" {
		errs = append(errs, fmt.Errorf("%s:%d: marker not followed by a shell block", installDoc, markerL))
	}
	return blocks, errs
}

// planDocSteps pairs each substituted block with its stand-in. A
// substituted block the table does not hold word for word, a run block the
// table holds (it would run something that cannot), and a table entry no
// block uses are errors.
func planDocSteps(blocks []docBlock, subs []substitution) ([]docStep, []error) {
	var (
		steps []docStep
		errs  []error
		used  = make([]bool, len(subs))
	)
	find := func(text string) int {
		for i := range subs {
			if subs[i].doc == text {
				return i
			}
		}
		return -1
	}
	for _, b := range blocks {
		i := find(b.text)
		switch {
		case b.marker == "substituted" && i < 0:
			errs = append(errs, fmt.Errorf("%s: substituted, but e2e/installdoc_blocks_test.go has no stand-in for this exact text:\n%s", b, indentLines(b.text)))
		case b.marker == "run" && i >= 0:
			errs = append(errs, fmt.Errorf("%s: marked run, but it is a block the test substitutes (%s)", b, subs[i].why))
		case i >= 0:
			used[i] = true
			steps = append(steps, docStep{block: b, sub: &subs[i]})
		default:
			steps = append(steps, docStep{block: b})
		}
	}
	for i, u := range used {
		if !u {
			first, _, _ := strings.Cut(subs[i].doc, "\n")
			errs = append(errs, fmt.Errorf("stand-in for a block no longer in %s (%q): remove it from installDocSubstitutions", installDoc, first))
		}
	}
	return steps, errs
}

func indentLines(s string) string {
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// readInstallDocSteps reads and plans the page of the repository at root.
func readInstallDocSteps(root string) ([]docStep, []error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(installDoc)))
	if err != nil {
		return nil, []error{err}
	}
	blocks, errs := parseDocBlocks(data)
	steps, more := planDocSteps(blocks, installDocSubstitutions)
	errs = append(errs, more...)
	return steps, append(errs, useLocalCopies(steps, installDocLocalCopies)...)
}

// useLocalCopies sets what each step runs: a substituted block its stand-in,
// a run block its own text with each local copy's from replaced. A local
// copy no run block uses is an error.
func useLocalCopies(steps []docStep, copies []localCopy) []error {
	used := make([]bool, len(copies))
	for i := range steps {
		s := &steps[i]
		if s.sub != nil {
			s.text = s.sub.shell
			continue
		}
		s.text = s.block.text
		for j, c := range copies {
			if strings.Contains(s.text, c.from) {
				s.text = strings.ReplaceAll(s.text, c.from, c.to)
				s.copies = append(s.copies, c.why)
				used[j] = true
			}
		}
	}
	var errs []error
	for j, u := range used {
		if !u {
			errs = append(errs, fmt.Errorf("local copy of %s, which no run block of %s uses: remove it from installDocLocalCopies", copies[j].from, installDoc))
		}
	}
	return errs
}

// TestInstallDocBlocks: every shell block of docs/install.md is marked, and
// every substituted one has its stand-in — without running anything.
func TestInstallDocBlocks(t *testing.T) {
	steps, errs := readInstallDocSteps("..")
	for _, err := range errs {
		t.Error(err)
	}
	var run, sub int
	for _, s := range steps {
		if s.sub == nil {
			run++
		} else {
			sub++
		}
	}
	if run == 0 || sub == 0 {
		t.Errorf("%d blocks to run and %d substituted: the page lost its path", run, sub)
	}
	t.Logf("%s: %d shell blocks run as written, %d substituted", installDoc, run, sub)
}

// TestInstallDocBlocksBite: the checks fail on what they are for.
func TestInstallDocBlocksBite(t *testing.T) {
	doc := "x\n<!-- e2e: run -->\n```sh\necho a\n```\n\n```sh\necho unmarked\n```\n" +
		"<!-- e2e: substituted -->\n```sh\nkind create cluster --name other\n```\n" +
		"<!-- e2e:run -->\n```yaml\na: b\n```\n"
	blocks, errs := parseDocBlocks([]byte(doc))
	if len(blocks) != 2 || blocks[0].text != "echo a" || blocks[1].marker != "substituted" {
		t.Errorf("blocks %+v", blocks)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "without a marker") || !strings.Contains(errs[1].Error(), "malformed") {
		t.Errorf("parse errors %v, want an unmarked block and a malformed marker", errs)
	}
	subs := []substitution{{doc: "echo a", why: "x"}, {doc: "gone", why: "y"}}
	_, errs = planDocSteps(blocks, subs)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"marked run, but it is a block the test substitutes", "has no stand-in for this exact text", "no longer in"} {
		if !strings.Contains(all, want) {
			t.Errorf("plan errors lack %q:\n%s", want, all)
		}
	}
	// A run block runs with its local copies, and a local copy no run
	// block uses is an error.
	steps := []docStep{{block: docBlock{marker: "run", text: "kubectl apply -k 'https://x?ref=1'"}}}
	errs = useLocalCopies(steps, []localCopy{{from: "'https://x?ref=1'", to: `"$X"`, why: "x"}, {from: "gone", to: "y", why: "y"}})
	if steps[0].text != `kubectl apply -k "$X"` || len(steps[0].copies) != 1 {
		t.Errorf("run block with a local copy: %+v", steps[0])
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "no run block") {
		t.Errorf("local-copy errors %v, want one for the unused copy", errs)
	}
	// An indented block (in a list item) is read de-indented.
	blocks, errs = parseDocBlocks([]byte("1. step\n\n   <!-- e2e: run -->\n   ```sh\n   echo b\n   ```\n"))
	if len(errs) != 0 || len(blocks) != 1 || blocks[0].text != "echo b" {
		t.Errorf("indented block: %+v %v", blocks, errs)
	}
}
