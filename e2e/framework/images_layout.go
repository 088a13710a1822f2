//go:build e2e

package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
)

// imageLayout is one image as tools/image pack writes it (its packSpec,
// the JSON contract): the name containerd stores it under, its runtime
// config and the files of its one layer.
type imageLayout struct {
	Name         string      `json:"name"`
	Architecture string      `json:"architecture"`
	Config       imageConfig `json:"config"`
	Files        []imageFile `json:"files"`
	CreatedBy    string      `json:"createdBy"`
}

// imageConfig is the runtime part of an OCI image config, as
// go-containerregistry's v1.Config spells it.
type imageConfig struct {
	User         string              `json:"User,omitempty"`
	Entrypoint   []string            `json:"Entrypoint,omitempty"`
	Cmd          []string            `json:"Cmd,omitempty"`
	Env          []string            `json:"Env,omitempty"`
	WorkingDir   string              `json:"WorkingDir,omitempty"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts,omitempty"`
	Labels       map[string]string   `json:"Labels,omitempty"`
}

// imageFile is one entry of the layer: Source's bytes (a file here) or
// Content, or a directory when Path ends in "/"; pack adds missing parents.
type imageFile struct {
	Path    string            `json:"path"`
	Source  string            `json:"source,omitempty"`
	Content string            `json:"content,omitempty"`
	Mode    int64             `json:"mode"`
	UID     int               `json:"uid"`
	GID     int               `json:"gid"`
	Xattrs  map[string][]byte `json:"xattrs,omitempty"`
}

// Shared parts of the layouts.
var (
	// defaultPath is the PATH Docker, BuildKit and distroless give an image
	// that sets none; Alpine's is the same.
	defaultPath = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	// nonrootPasswd and nonrootGroup are distroless's (and Metacontroller's
	// adduser's) accounts, so that USER nonroot:nonroot resolves to
	// 65532:65532 in the image's own /etc/passwd, as in the real images.
	nonrootPasswd = imageFile{Path: "/etc/passwd", Mode: 0o644, Content: "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"}
	nonrootGroup = imageFile{Path: "/etc/group", Mode: 0o644, Content: "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"}
	tmpDir       = imageFile{Path: "/tmp/", Mode: 0o1777}
	// capNetBindService is a security.capability xattr (VFS_CAP_REVISION_2,
	// effective) granting CAP_NET_BIND_SERVICE: what `setcap
	// cap_net_bind_service=+ep /coredns` writes in CoreDNS's Dockerfile.
	// The kernel ignores it under no_new_privs (allowPrivilegeEscalation:
	// false): then only net.ipv4.ip_unprivileged_port_start lets a non-root
	// CoreDNS bind port 53.
	capNetBindService = []byte{0x01, 0x00, 0x00, 0x02, 0x00, 0x04, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
)

// imageLayouts builds the binaries of the third-party and test images (or
// finds them cached) and returns each image's layout, in BuildImages'
// order.
func imageLayouts(ctx context.Context, repoRoot string) ([]imageLayout, error) {
	mcDir, err := runBuildScript(repoRoot, "metacontroller", "Metacontroller")
	if err != nil {
		return nil, fmt.Errorf("building image %s: %w", ImageMetacontroller, err)
	}
	traefikDir, err := runBuildScript(repoRoot, "traefik", "Traefik")
	if err != nil {
		return nil, fmt.Errorf("building image %s: %w", ImageTraefik, err)
	}
	coredns, err := buildCoreDNS(ctx)
	if err != nil {
		return nil, fmt.Errorf("building image %s: %w", ImageCoreDNS, err)
	}
	pause, err := buildImageProgram(ctx, repoRoot, "pause")
	if err != nil {
		return nil, fmt.Errorf("building image %s: %w", ImagePause, err)
	}
	portapp, err := buildImageProgram(ctx, repoRoot, "portapp")
	if err != nil {
		return nil, fmt.Errorf("building image %s: %w", ImagePortApp, err)
	}
	httpbin, err := buildHTTPBin(ctx)
	if err != nil {
		return nil, fmt.Errorf("building image %s: %w", ImageHTTPBin, err)
	}
	arch := runtime.GOARCH
	return []imageLayout{
		{
			// Metacontroller's Dockerfile: Alpine, the binary at
			// /usr/bin/metacontroller, USER nonroot:nonroot (65532),
			// CMD ["/usr/bin/metacontroller"]. Its production manifest
			// names the command too. Not here: Alpine's busybox and
			// ca-certificates (in-cluster it trusts the service account's
			// CA).
			Name: ImageMetacontroller, Architecture: arch,
			Config: imageConfig{User: "nonroot:nonroot", Cmd: []string{"/usr/bin/metacontroller"}, Env: defaultPath,
				Labels: map[string]string{"org.opencontainers.image.version": "v4.17.2"}},
			Files: []imageFile{
				{Path: "/usr/bin/metacontroller", Source: filepath.Join(mcDir, "metacontroller"), Mode: 0o755},
				nonrootPasswd, nonrootGroup, tmpDir,
			},
			CreatedBy: "e2e/metacontroller/build.sh: Metacontroller v4.17.2 from its pinned source",
		},
		{
			// The official image: Alpine, /usr/local/bin/traefik, root (the
			// chart sets runAsUser 65532), EXPOSE 80. Its ENTRYPOINT is
			// /entrypoint.sh, which runs `traefik "$@"` when the first
			// argument is a flag: the chart passes only flags (args, no
			// command), so the binary itself is the entrypoint here. No
			// shell: a command other than traefik's flags cannot run.
			Name: NormalizeImage(ImageTraefik), Architecture: arch,
			Config: imageConfig{Entrypoint: []string{"/usr/local/bin/traefik"}, Env: defaultPath,
				ExposedPorts: map[string]struct{}{"80/tcp": {}},
				Labels:       map[string]string{"org.opencontainers.image.version": "v3.7.11", "org.opencontainers.image.title": "Traefik"}},
			Files: []imageFile{
				{Path: "/usr/local/bin/traefik", Source: filepath.Join(traefikDir, "traefik"), Mode: 0o755},
				tmpDir,
			},
			CreatedBy: "e2e/traefik/build.sh: Traefik v3.7.11 from the Go module proxy",
		},
		{
			// CoreDNS's Dockerfile: distroless static nonroot, /coredns
			// with cap_net_bind_service=+ep, USER nonroot:nonroot, WORKDIR
			// /, ENTRYPOINT ["/coredns"], EXPOSE 53 53/udp.
			Name: ImageCoreDNS, Architecture: arch,
			Config: imageConfig{User: "nonroot:nonroot", Entrypoint: []string{"/coredns"}, Env: defaultPath, WorkingDir: "/",
				ExposedPorts: map[string]struct{}{"53/tcp": {}, "53/udp": {}}},
			Files: []imageFile{
				{Path: "/coredns", Source: coredns, Mode: 0o755, Xattrs: map[string][]byte{"security.capability": capNetBindService}},
				nonrootPasswd, nonrootGroup, tmpDir,
				{Path: "/home/nonroot/", Mode: 0o700, UID: 65532, GID: 65532},
			},
			CreatedBy: "e2e/tools/coredns: CoreDNS v1.15.0 with the node's plugins",
		},
		{
			// registry.k8s.io/pause: /pause as 65535:65535.
			Name: ImagePause, Architecture: arch,
			Config:    imageConfig{User: "65535:65535", Entrypoint: []string{"/pause"}, WorkingDir: "/"},
			Files:     []imageFile{{Path: "/pause", Source: pause, Mode: 0o755}},
			CreatedBy: "e2e/images/pause",
		},
		{
			// The suite's workload: writes nothing, runs as 65532 under
			// Pod Security restricted with a read-only root filesystem.
			Name: ImagePortApp, Architecture: arch,
			Config:    imageConfig{User: "65532:65532", Entrypoint: []string{"/portapp"}, WorkingDir: "/"},
			Files:     []imageFile{{Path: "/portapp", Source: portapp, Mode: 0o755}},
			CreatedBy: "e2e/images/portapp",
		},
		{
			// go-httpbin's Dockerfile (v2.22.1): distroless static
			// nonroot (USER 65532, WORKDIR /home/nonroot, its passwd
			// and group), the binary at /bin/go-httpbin, EXPOSE 8080,
			// CMD ["/bin/go-httpbin"].
			Name: NormalizeImage(ImageHTTPBin), Architecture: arch,
			Config: imageConfig{User: "65532", Cmd: []string{"/bin/go-httpbin"}, Env: defaultPath, WorkingDir: "/home/nonroot",
				ExposedPorts: map[string]struct{}{"8080/tcp": {}}},
			Files: []imageFile{
				{Path: "/bin/go-httpbin", Source: httpbin, Mode: 0o755},
				nonrootPasswd, nonrootGroup, tmpDir,
				{Path: "/home/nonroot/", Mode: 0o700, UID: 65532, GID: 65532},
			},
			CreatedBy: "go install github.com/mccutchen/go-httpbin/v2/cmd/go-httpbin@" + httpbinVersion,
		},
	}, nil
}
