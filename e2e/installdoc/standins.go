package installdoc

// What stands in, on the e2e suite's real node, for the blocks of
// docs/install.md that cannot run there, and the local copies of what the
// run blocks fetch. e2e/node's TestInstallDoc runs the page with them;
// TestInstallDocBlocks (installdoc_test.go) holds them to the page in
// `make test`, without a cluster, so a block added to the page without a
// marker, or a substituted block edited without its stand-in, fails before
// the e2e suite ever runs.

// Substitutions is every substituted block of docs/install.md:
// what needs kind or a registry, the two stand-ins of docs/e2e.md. Its
// shells may use the variables TestInstallDoc sets (E2E_POD_CIDR,
// E2E_TRAEFIK_CHART). docs/e2e.md's table "How TestInstallDoc runs
// install.md" says the same in prose.
var Substitutions = []Substitution{
	{
		Doc: `cat > kind-stackdome.yaml <<'EOF'
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
		Shell: `POD_CIDR=$E2E_POD_CIDR`,
		Why: "a kind cluster with stackdome's image loaded and its node ports 30080 and 30443 on 127.0.0.1:80 and :443: the suite's node is the cluster; " +
			"TestMain imported every image into its containerd as `kind load` does (tools/image's TestMakeKindLoad covers make kind-load), " +
			"the test forwards 127.0.0.1:80 and :443 to the node's 30080 and 30443 as kind's port mappings do, and POD_CIDR is the node's spec.podCIDR",
	},
	{
		Doc: `POD_CIDR=10.42.0.0/16   # yours: k3s and RKE2 use this one`,
		Shell: `POD_CIDR=$E2E_POD_CIDR
helm uninstall traefik -n traefik --wait`,
		Why: "the cluster's pod network: the node's spec.podCIDR. This section is another cluster, one without Traefik: the node stands in for it, so the quick start's Traefik release is uninstalled " +
			"(its CRDs stay), and the page's `helm upgrade --install traefik` installs the chart's defaults as there, not an upgrade that keeps the quick start's NodePort values",
	},
	{
		Doc: `helm repo add traefik https://traefik.github.io/charts
helm install traefik traefik/traefik --version 41.3.0 -n traefik --create-namespace \
  --set service.spec.type=NodePort --set ports.web.nodePort=30080 --set ports.websecure.nodePort=30443
kubectl -n traefik rollout status deployment/traefik --timeout=5m
TRAEFIK=127.0.0.1`,
		Shell: `helm install traefik "$E2E_TRAEFIK_CHART" --version 41.3.0 -n traefik --create-namespace \
  --set service.spec.type=NodePort --set ports.web.nodePort=30080 --set ports.websecure.nodePort=30443
kubectl -n traefik rollout status deployment/traefik --timeout=5m
TRAEFIK=127.0.0.1`,
		Why: "adding the chart's repository reaches the internet: the rest of the block as written, from the pinned chart 41.3.0, extracted",
	},
	{
		Doc: `make image-push REGISTRY=registry.example.com/platform
IMAGE_REPOSITORY=registry.example.com/platform/stackdome`,
		Shell: `IMAGE_REPOSITORY=registry.example.com/platform/stackdome`,
		Why: "pushing the image: the test gave the image TestMain imported the pushed name in the node's containerd, as a push and the kubelet's pull would leave it " +
			"(tools/image's TestMakeImagePush covers make image-push against an in-process registry)",
	},
	{
		Doc: `go run . render -f hello.yaml`,
		Why: "stackdome render previews a StackResource's children without a cluster: nothing to run against the cluster, and the page's app is applied from a heredoc, not a file",
	},
	{
		Doc: `kind delete cluster --name stackdome`,
		Why: "deleting the kind cluster: nothing; the suite stops its node and control plane at the end",
	},
}

// LocalCopies is every local copy a run block of docs/install.md
// is run with: what the block fetches from the internet, and nothing else
// of it, replaced by the pinned copy.
var LocalCopies = []LocalCopy{
	{
		From: `'https://github.com/metacontroller/metacontroller/manifests/production?ref=v4.17.2'`,
		To:   `"$E2E_METACONTROLLER_MANIFESTS"`,
		Why:  "manifests/production of tag v4.17.2 in the pinned source (no internet); its StatefulSet's pod runs the Metacontroller image built from that source",
	},
	{
		From: `helm upgrade --install traefik traefik/traefik`,
		To:   `helm upgrade --install traefik "$E2E_TRAEFIK_CHART"`,
		Why:  "the pinned Traefik chart 41.3.0, extracted; its pod runs the Traefik image of the chart's appVersion",
	},
}
