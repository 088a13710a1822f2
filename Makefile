# stackdome — every target a newcomer or CI needs. Tools (controller-gen, helm)
# are built from the pinned tools/ module into bin/, so nothing is installed by hand.
GO      ?= go
BIN     := $(CURDIR)/bin
PKGS    := ./...

.PHONY: build run test test-monitoring test-image test-dockerfile vet lint fmt-check mod-check generate fixtures bench bench-pages bench-traefik bench-fleet browser-test e2e e2e-build chaos tools clean
.PHONY: image image-push chart-push kind-load version promtool chart-readme FORCE

# -buildvcs=false whatever GOFLAGS says: the binary depends on the source
# alone, not on whether the checkout is a clone or a git worktree (Go stamps
# only clones), so one commit gives one image digest. The commit reaches the
# binary through LDFLAGS instead (stackdome version, stackdome_build_info),
# and the image's labels name it too.
VERSION           ?= $(shell sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$$/\1/p' chart/Chart.yaml)
REVISION          ?= $(shell git rev-parse HEAD)$(if $(shell git status --porcelain),-dirty)
LDFLAGS            = -X main.version=$(VERSION) -X main.revision=$(REVISION)

build:
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags '$(LDFLAGS)' -o $(BIN)/stackdome .

## image: bin/stackdome-image.tar, stackdome's image for linux/amd64 and
## linux/arm64, built without a container engine by tools/image
## (go-containerregistry): per platform, a static binary as the one layer on
## scratch, user 65532:65532, entrypoint /stackdome serve, OCI labels; the
## image index of both in an OCI image layout tarball, named
## $(IMAGE_REPOSITORY):$(VERSION), and its CycloneDX SBOM beside it. Every
## timestamp is the commit's, so one commit gives one index digest and one
## digest a platform; the tool prints them.
##
## VERSION is the chart's appVersion, so the tag make image writes and
## make image-push pushes is the one `helm install ./chart` pulls. Another
## (VERSION=0.3.0-rc.1) needs --set image.tag=0.3.0-rc.1 at install.
IMAGE             ?= $(BIN)/stackdome-image.tar
IMAGE_SBOM        ?= $(IMAGE:.tar=.sbom.cdx.json)
IMAGE_REPOSITORY  ?= ghcr.io/stackdome/stackdome
IMAGE_ARCHS       ?= amd64 arm64
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct)

IMAGE_BINARIES    = $(foreach a,$(IMAGE_ARCHS),$(abspath $(BIN))/linux-$(a)/stackdome)

image: $(IMAGE_BINARIES)
	cd tools/image && $(GO) run . build $(addprefix -binary ,$(IMAGE_BINARIES)) \
	  -out $(abspath $(IMAGE)) -sbom $(abspath $(IMAGE_SBOM)) \
	  -repository $(IMAGE_REPOSITORY) -version $(VERSION) -revision $(REVISION) -created $(SOURCE_DATE_EPOCH)

# build's binary for Linux and one GOARCH; go build decides what is stale.
$(abspath $(BIN))/linux-%/stackdome: FORCE
	CGO_ENABLED=0 GOOS=linux GOARCH=$* $(GO) build -trimpath -buildvcs=false -ldflags '$(LDFLAGS)' -o $@ .

FORCE:

## image-push: make image, then push the index with every platform to
## $(REGISTRY)/stackdome:$(VERSION) (go-containerregistry; credentials from
## the Docker config: docker login or crane auth login). REGISTRY=ghcr.io/stackdome
## is the chart's default image.repository; another registry needs
## --set image.repository=$(REGISTRY)/stackdome. Plain HTTP only to a
## loopback registry (localhost:5001), or to any with INSECURE=1.
image-push:
	@if [ -z "$(REGISTRY)" ]; then \
		echo "image-push: set REGISTRY=host[:port][/path]; the image goes to \$$REGISTRY/stackdome:$(VERSION) (REGISTRY=ghcr.io/stackdome is the chart's default image)" >&2; exit 2; \
	fi
	@$(MAKE) --no-print-directory image
	cd tools/image && $(GO) run . push -archive $(abspath $(IMAGE)) -to $(REGISTRY)/stackdome:$(VERSION) $(if $(INSECURE),-insecure)

## chart-push: the chart, packaged (helm package, into CHART_PACKAGE_DIR)
## and pushed as an OCI artifact (helm push) to
## oci://$(REGISTRY)/charts/stackdome:<the chart's version>, so that
## REGISTRY=ghcr.io/stackdome puts the chart beside the image:
## `helm install stackdome oci://ghcr.io/stackdome/charts/stackdome --version <v>`.
## CHART_REGISTRY overrides where it goes. Credentials: `helm registry login`
## (or the Docker config). Plain HTTP (helm's --plain-http) only to a
## loopback registry, or to any with INSECURE=1: image-push's rule, which
## tools/image decides for both.
CHART_VERSION     ?= $(shell sed -n 's/^version: *"\{0,1\}\([^"]*\)"\{0,1\} *$$/\1/p' chart/Chart.yaml)
CHART_REGISTRY    ?= $(REGISTRY)/charts
CHART_PACKAGE_DIR ?= $(BIN)
HELM              ?= $(BIN)/helm
chart-push: $(if $(filter $(BIN)/helm,$(HELM)),$(BIN)/helm)
	@if [ -z "$(REGISTRY)" ] && [ "$(origin CHART_REGISTRY)" = file ]; then \
		echo "chart-push: set REGISTRY=host[:port][/path]; the chart goes to oci://\$$REGISTRY/charts/stackdome:$(CHART_VERSION) (REGISTRY=ghcr.io/stackdome is where the install guide pulls it from)" >&2; exit 2; \
	fi
	@mkdir -p $(CHART_PACKAGE_DIR)
	$(HELM) package chart --destination $(CHART_PACKAGE_DIR)
	plain=$$(cd tools/image && $(GO) run . plainhttp $(if $(INSECURE),-insecure) '$(CHART_REGISTRY)') && \
	$(HELM) push $(CHART_PACKAGE_DIR)/stackdome-$(CHART_VERSION).tgz oci://$(CHART_REGISTRY) $$plain

## kind-load: make image, then load it into every node of the kind cluster
## $(KIND_CLUSTER). kind hands the tarball to each node's containerd
## (ctr images import --all-platforms), which reads the OCI layout and names
## the image after its io.containerd.image.name annotation,
## $(IMAGE_REPOSITORY):$(VERSION): the chart's default image, which the
## kubelet then finds (pullPolicy IfNotPresent) without a registry.
KIND         ?= kind
KIND_CLUSTER ?= kind
kind-load:
	@command -v $(KIND) >/dev/null 2>&1 || { \
		echo "kind-load: $(KIND) is not installed (https://kind.sigs.k8s.io/docs/user/quick-start/#installation)" >&2; exit 127; }
	@$(MAKE) --no-print-directory image
	$(KIND) load image-archive $(abspath $(IMAGE)) --name $(KIND_CLUSTER)

## version: the version make image tags and make build links into the
## binary (stackdome version), the chart's appVersion.
version:
	@echo $(VERSION)

## run: serve hooks on :8080 (plain HTTP, --insecure-plain-http: for trying it out), metrics on :8081 and error pages on :8082 with the embedded defaults.
run:
	$(GO) run -ldflags '$(LDFLAGS)' . serve --insecure-plain-http

## test: everything CI gates on, except the browser and control-plane suites,
## the two tests that need promtool (make test-monitoring) and the three that
## build the image for both platforms (make test-image): vet, staticcheck
## (make lint), gofmt, tidy modules, go test -race ./..., tools/monitoring's other tests (the
## kube-state-metrics config against the CRD, every query against what is
## exported, the dashboard) and tools/image's other tests (flags, the refusal
## of a binary scratch cannot run, the registry's plain-HTTP policy, one
## version across Makefile, chart and docs). Times: docs/performance.md,
## "How long make test takes".
##
## RACE_FREE runs without -race: schema starts no goroutine, and its tests
## link the apiextensions-apiserver validators (TestTwoDoors: about 690
## packages), whose instrumented build was half of a cold make test; go vet
## has already built them plain.
##
## -vet=off: go vet has run every analyzer on these packages already (the
## vet prerequisite, and before each tools module's tests; only the
## one-constant hooks/race_on_test.go is left to -race builds); go test's own
## vet is a subset of them whose facts it computes again for every
## dependency, about 50 CPU-seconds of a cold run, schema's graph the most.
RACE_FREE := github.com/stackdome/stackdome/schema
test: vet lint fmt-check mod-check tools
	@# -timeout: go test's default of 10 minutes a package is a hang guard that a
	@# loaded 2-core machine overruns (chart renders every values combination), not a budget.
	$(GO) test -race -vet=off -count=1 -timeout 30m $$($(GO) list $(PKGS) | grep -v -x -F '$(RACE_FREE)')
	$(GO) test -vet=off -count=1 $(RACE_FREE)
	@# Bounds on allocated bytes, which -race inflates (hooks/race_on_test.go): once more without it.
	$(GO) test -vet=off -count=1 -run '^TestBudgetsRefuseWhatDecodingWouldAmplify$$' ./hooks
	cd tools/monitoring && $(GO) vet ./... && $(GO) test -vet=off -count=1 -skip '$(PROMTOOL_TESTS)' ./...
	cd tools/image && $(GO) vet ./... && $(GO) test -vet=off -count=1 -skip '$(IMAGE_TESTS)|$(DOCKERFILE_TESTS)' ./...
	@echo "make test: passed; CI also runs make test-monitoring (promtool), make test-image (the image for both platforms) and make test-dockerfile (the Dockerfile's image against it)"

## test-image: the tools/image tests that run make image: the image built
## twice from the checkout (same index and per-platform digests, config,
## layer and SBOM checked), make image-push to an in-process registry and
## make kind-load against a stand-in kind. Each cold build compiles the
## whole binary for linux/amd64 and linux/arm64 (-trimpath, a build cache of
## its own), about 4 CPU-minutes, so make test leaves them to this target;
## CI (.ci/run) runs it after make test.
IMAGE_TESTS := ^(TestMakeImage|TestMakeImagePush|TestMakeKindLoad)$$
test-image:
	cd tools/image && $(GO) test -count=1 -timeout 30m -run '$(IMAGE_TESTS)' ./...

## test-dockerfile: tools/image's TestDockerfileImage: the Dockerfile built
## with Buildah for linux/amd64 and linux/arm64, offline (its golang base
## made from this machine's Go, its modules from this machine's module cache,
## no network in the build), each platform's image held equal to make
## image's (files, modes, owners, the binary's bytes, user, entrypoint, env,
## ports, labels), then run with Podman (version; serve's /healthz and a
## golden sync on loopback). Storage, configuration and caches are the
## test's own and removed after it; no bridge network, so no firewall rule.
## Needs root and Debian's buildah, podman and runc (.ci/run installs them).
## It holds HEAVY_LOCK (flock) so that heavy runs on one machine take turns;
## a run that already holds that lock (e.g. .ci/run under `flock HEAVY_LOCK`)
## sets HEAVY_LOCK to another file, or it waits on itself for ever.
## CI runs it after make test-image; it prints its build times (-v).
DOCKERFILE_TESTS := ^TestDockerfileImage$$
HEAVY_LOCK       ?= /tmp/stackdome-heavy.lock
test-dockerfile:
	cd tools/image && flock $(HEAVY_LOCK) $(GO) test -count=1 -timeout 60m -v -run '$(DOCKERFILE_TESTS)' ./...

## test-monitoring: the alert rules through the real promtool (check rules
## --lint=all on every values combination, promtool test rules on the alert
## unit tests): builds promtool first, about 6 minutes and 3.3 GiB cold, then
## cached outside the repository. CI runs it after make test; together they
## run every test of tools/monitoring.
PROMTOOL_TESTS := ^(TestRulesPassPromtoolCheck|TestAlertUnitTests)$$
test-monitoring: tools promtool
	cd tools/monitoring && $(GO) test -count=1 -run '$(PROMTOOL_TESTS)' ./...

vet:
	$(GO) vet $(PKGS)

## lint: staticcheck (bin/staticcheck, pinned in tools/go.mod) with its
## default checks, unused (U1000) among them, on every package of the main
## module and of the Go modules under tools/ that hold code: tools/image and
## tools/monitoring. The main module is checked in two builds merged into one
## report (-matrix): plain, and with every build tag the repository uses
## (LINT_TAGS), so that the e2e suite and the browser test are linted too and
## code only one build uses is not reported unused by the other. Not linted:
## tools/ and tools/promtool (a //go:build tools file pinning what they
## build, no code of ours), e2e/tools and e2e/kubectl (a build script and a
## 27-line kubectl entry point, whose module graph only make e2e fetches).
## A finding is fixed, not silenced: this target has no exclusions.
LINT_TAGS := e2e,browser,race
lint: $(BIN)/staticcheck
	@fail=0; \
	printf 'plain:\ntagged: -tags=$(LINT_TAGS)\n' | $(BIN)/staticcheck -matrix $(PKGS) || fail=1; \
	(cd tools/image && $(BIN)/staticcheck ./...) || fail=1; \
	(cd tools/monitoring && $(BIN)/staticcheck ./...) || fail=1; \
	if [ $$fail -ne 0 ]; then echo "make lint: staticcheck's findings above; fix them (no check is excluded)" >&2; fi; \
	exit $$fail

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^e2e/tools/')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

## mod-check: go.mod and go.sum are exactly what `go mod tidy` makes of them,
## for the main module and tools/ (make e2e checks e2e/tools/ and e2e/kubectl/ the same way:
## tidying it needs the whole Kubernetes module graph, which only e2e needs).
## An untidy module fails with the diff; `cd <module> && go mod tidy` fixes it.
MOD_CHECK ?= . tools tools/promtool tools/monitoring tools/image
mod-check:
	@fail=0; for m in $(MOD_CHECK); do \
		if ! out=$$(cd $$m && $(GO) mod tidy -diff 2>&1); then \
			echo "mod-check: $$m/go.mod or go.sum is not tidy (cd $$m && go mod tidy):"; echo "$$out"; fail=1; \
		fi; \
	done; \
	main=$$($(GO) list -deps -test -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' $(PKGS) | sort -u); \
	tools=$$(cd tools && $(GO) list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' $(TOOL_PKGS) | sort -u); \
	skew=$$(printf '%s\n%s\n' "$$main" "$$tools" | sort | awk '{ if ($$1 == m && $$2 != v) print m, v, $$2; m = $$1; v = $$2 }'); \
	if [ -n "$$skew" ]; then \
		echo "mod-check: tools/ builds these modules at other versions than the main module (module, both versions);"; \
		echo "align tools/go.mod (cd tools && go get <module>@<main's version> && go mod tidy) so both share one build cache:"; \
		echo "$$skew"; fail=1; \
	fi; exit $$fail

## tools: controller-gen, helm and staticcheck, built from tools/ at the
## versions of every module they share with the main module (mod-check holds
## it) and with the main module's build flags (no -trimpath): their 51 shared
## modules, the Kubernetes libraries among them, compile once for go vet, go
## test and the tools, not three times.
TOOL_PKGS := sigs.k8s.io/controller-tools/cmd/controller-gen helm.sh/helm/v3/cmd/helm honnef.co/go/tools/cmd/staticcheck
tools: $(BIN)/controller-gen $(BIN)/helm $(BIN)/staticcheck

## BUILD_GOGC: the GOGC of the compiler and linker for the tools and the e2e
## binaries built from source (never of a test or a server: go test runs
## its binaries under its own environment, so it is not set there). Cold,
## the three tools above took 0.85 times the CPU and the wall time at 400
## that they took at Go's default 100, for 8 % more peak memory (1.14 GiB;
## 2026-12-06, an idle machine, an empty build cache: 415 against 491
## CPU-seconds). Links gain nothing and take 8 % more (the control plane
## relinked from a warm cache: kube-apiserver's link 2.75 GiB against
## 2.55). A cold CI run is mostly compiling: at 400 it took 128 CPU-minutes
## and 74 minutes, at 100 145 and 85, with 5.0 GiB peak RSS of one process
## against 3.1, most likely Traefik's largest compile (4.27 GiB alone at 400;
## docs/e2e.md, "Timings"). BUILD_GOGC=100 restores Go's default, on a
## machine with less memory.
BUILD_GOGC ?= 400

$(BIN)/controller-gen: tools/go.mod tools/go.sum
	cd tools && GOGC=$(BUILD_GOGC) $(GO) build -o $(BIN)/controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen

$(BIN)/helm: tools/go.mod tools/go.sum
	cd tools && GOGC=$(BUILD_GOGC) $(GO) build -o $(BIN)/helm helm.sh/helm/v3/cmd/helm

$(BIN)/staticcheck: tools/go.mod tools/go.sum
	cd tools && GOGC=$(BUILD_GOGC) $(GO) build -o $(BIN)/staticcheck honnef.co/go/tools/cmd/staticcheck

## promtool: built from tools/promtool's pinned Prometheus into a cache
## outside the repository (tools/promtool/build.sh), linked as bin/promtool.
promtool:
	@mkdir -p $(BIN)
	@p=$$(GOGC=$(BUILD_GOGC) tools/promtool/build.sh) && ln -sfn "$$p" $(BIN)/promtool

## chart-readme: chart/README.md from Chart.yaml and values.yaml's "# --"
## comments (chart/readme_test.go; TestChartREADME fails when it is stale).
chart-readme:
	$(GO) test ./chart -run '^TestChartREADME$$' -count=1 -update

## generate: the CRD from schema's Go types, copied byte for byte into the chart.
generate: $(BIN)/controller-gen
	$(BIN)/controller-gen crd:crdVersions=v1 paths=./schema/... output:crd:stdout > schema/crd.yaml.tmp
	mv schema/crd.yaml.tmp schema/crd.yaml
	mkdir -p chart/crds && cp schema/crd.yaml chart/crds/stackresources.stackdome.io.yaml

## fixtures: testdata/sync/*.request.json from hooks' generator (the cases
## in hooks/fixturegen_*_test.go, built through internal/mcrequest, the
## hook's own Customize and Sync), then the golden answers from the current
## code. make test fails when a committed request is not what the generator
## makes (TestGenerateFixtures); review both diffs like code.
fixtures:
	$(GO) test ./hooks -run '^TestGenerateFixtures$$' -count=1 -update-fixtures
	$(GO) test ./hooks -run '^TestSync$$' -count=1 -update

## bench: every benchmark in one run (docs/performance.md reads its output):
## the sync hook over HTTP against its floor and a generic hook (x-floor,
## x-generic), paced at 1,000 req/s (p99-ms), with every dial hanging
## (p100-ms), the real binary's RSS after 10,000 resources (rss-MiB,
## B/resource), the verifier and the error pages; then bench-pages (stackdome
## against nginx) when nginx is installed, else it says it skipped it.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m $(PKGS)
	@if command -v nginx >/dev/null; then $(MAKE) --no-print-directory bench-pages; \
	else echo "bench: nginx not installed, skipping bench-pages (apt-get install -y nginx)"; fi
	@bash bench/traefik/run.sh; rc=$$?; \
	if [ $$rc -eq 2 ]; then echo "bench: skipped bench-traefik (its prerequisites are missing, see above)"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; fi

bench-pages:
	bash bench/pages/run.sh

## bench-traefik: the catch-all page through a real Traefik, stackdome's page
## server against nginx on the same test-host address, A/B/A/B (root, nginx
## and the Traefik binary `make e2e` builds; exits 2 when one is missing).
bench-traefik:
	bash bench/traefik/run.sh

## bench-fleet: the fleet benchmark on the real node (e2e/node TestFleet,
## docs/performance.md "Fleet"; not in CI, minutes long, needs root and what make e2e
## needs): FLEET_N StackResources (half public) under the real Metacontroller pod and
## the chart's two hooks pods behind kube-proxy. The first FLEET_NODE_N apps (default
## 50) run as containers on the real node; a 2-core node cannot run FLEET_N
## containers, so the rest run on the stand-in node, the one stand-in kept for
## scale: a Node object the harness keeps alive, whose pods it reports Ready at the
## addresses of four real pods (e2e/framework/standin_node.go, docs/e2e.md). Once at
## Metacontroller's production flags, once at raised limits (its StatefulSet
## patched; then the Secret cache: FLEET_SECRETS Secrets of 100 KiB). Each mode is
## a fresh control plane and node; the figures are its "fleet:" lines.
## FLEET_PROFILE=<dir> also takes both hooks pods' CPU profiles (--pprof-listen)
## over the creation and over the quiet minute, into <dir>, and logs their top.
## FLEET_MODES=raised runs one mode only.
## Every 30 s a line says which phase runs and how far it is (apps created, Converged).
FLEET_N ?= 200
FLEET_NODE_N ?= 50
FLEET_SECRETS ?= 400
FLEET_PROFILE ?=
FLEET_MODES ?= production raised
bench-fleet:
	@$(MAKE) --no-print-directory tools
	@set -e; for mode in $(FLEET_MODES); do \
		secrets=0; [ $$mode = raised ] && secrets=$(FLEET_SECRETS); \
		echo "bench-fleet: N=$(FLEET_N) ($(FLEET_NODE_N) on the real node), Metacontroller $$mode"; \
		STACKDOME_FLEET_N=$(FLEET_N) STACKDOME_FLEET_NODE_N=$(FLEET_NODE_N) STACKDOME_FLEET_MC=$$mode \
		STACKDOME_FLEET_SECRETS=$$secrets STACKDOME_FLEET_PROFILE=$(FLEET_PROFILE) \
		$(GO) test -tags e2e -count=1 -timeout 120m -run '^TestFleet$$' -v ./e2e/node/; \
	done

browser-test:
	$(GO) test -tags browser -count=1 -run TestBrowser -v ./errorpages/

## e2e: the control-plane suite (./e2e: the API server alone, no pod runs,
## no root), with the CRDs of the real Metacontroller v4.17.2 from its pinned
## source: ../shared/vendor/metacontroller-4.17.2.tar.gz (STACKDOME_SHARED
## moves ../shared), or METACONTROLLER_SRC, a checkout or a tar.gz archive of
## that tag. Without one it stops at once, saying so: there is no stand-in to
## fall back to. Then the real-node suite (e2e/node: a real kubelet,
## containerd, kube-proxy, kube-router and CoreDNS, the real Metacontroller
## and Traefik; needs root), run after the first (never beside it) and even
## when the first failed: the target fails if either does.
E2E_SHARED = $(or $(STACKDOME_SHARED),$(CURDIR)/../shared)
MC_ARCHIVE = $(E2E_SHARED)/vendor/metacontroller-4.17.2.tar.gz

## e2e-build: the binaries make e2e needs, built now, or found cached: the
## control plane, the node's, Traefik (the node's image), Metacontroller and
## kubectl (each build.sh keeps its cache and its lock, so make e2e finds
## them, or waits for a build under way). Two lanes at once: the control
## plane (etcd, kube-apiserver, kube-controller-manager) then the node's
## binaries (kubelet, kube-proxy and kube-scheduler share most of its
## packages); Traefik, Metacontroller and kubectl. One lane leaves a core
## idle through every large package's compile and link, and through module
## downloads; two links at once take about 5.5 GiB (BUILD_GOGC above). CI (.ci/run) starts it in
## the background as it begins (docs/e2e.md, "Running").
e2e-build:
	@export GOWORK=off GOGC=$(BUILD_GOGC); \
	( bash e2e/tools/build.sh >/dev/null && bash e2e/tools/build.sh node >/dev/null ) & kube=$$!; \
	( bash e2e/traefik/build.sh >/dev/null && \
	  STACKDOME_SHARED="$(E2E_SHARED)" bash e2e/metacontroller/build.sh >/dev/null && \
	  bash e2e/kubectl/build.sh >/dev/null ) & rest=$$!; \
	st=0; wait $$kube || st=1; wait $$rest || st=1; \
	if [ $$st -ne 0 ]; then echo "make e2e-build: a build failed (its lines above)" >&2; fi; exit $$st

e2e:
	@if [ -z "$(METACONTROLLER_SRC)" ] && [ ! -f "$(MC_ARCHIVE)" ]; then \
		echo "make e2e: no Metacontroller v4.17.2 source: set METACONTROLLER_SRC to a checkout or tar.gz archive of github.com/metacontroller/metacontroller at v4.17.2 (or provide $(MC_ARCHIVE))" >&2; exit 2; \
	fi
	@$(MAKE) --no-print-directory tools
	@$(MAKE) --no-print-directory mod-check MOD_CHECK="e2e/tools e2e/tools/coredns e2e/tools/kuberouter e2e/kubectl"
	st=0; \
	$(GO) test -tags e2e -count=1 -timeout 60m -v ./e2e/ || st=1; \
	$(GO) test -tags e2e -count=1 -timeout 60m -v ./e2e/node/ || st=1; \
	exit $$st

## chaos: the fault suite's full form (docs/reliability.md): fifty apps as
## containers on the real node, and every fault of the short form that
## make e2e runs plus the error-page pods killed and evicted,
## kube-apiserver restarted, etcd stopped for 10 s, a helm upgrade amid a
## rollout, and a port dying and another coming back during each. Needs
## root and Metacontroller's source, as make e2e does.
chaos:
	@$(MAKE) --no-print-directory tools
	STACKDOME_FAULTS=full $(GO) test -tags e2e -count=1 -timeout 90m -v -run '^TestFaultsSurvived$$' ./e2e/node/

clean:
	rm -rf $(BIN)
