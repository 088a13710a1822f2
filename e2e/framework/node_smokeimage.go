//go:build e2e

package framework

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// SmokeImage is TestRealNode's client (e2e/node/testdata/smokeapp): the
// workload images (BuildImages) serve, and none of them is an HTTP client
// that reports every attempt in its log. NodeTestMain imports it.
const SmokeImage = "stackdome.test/node-smoke:e2e"

// buildSmokeImage builds e2e/node/testdata/smokeapp (root is the
// repository's) and writes its OCI image layout
// tar into dir, returning its path.
func buildSmokeImage(root, dir string) (string, error) {
	bin := filepath.Join(dir, "smokeapp")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./e2e/node/testdata/smokeapp")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building smokeapp: %w: %s", err, out)
	}
	app, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	data, err := ociLayout(SmokeImage, []string{"/smokeapp"}, app)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "node-smoke.oci.tar")
	return p, os.WriteFile(p, data, 0o600)
}

// ociLayout is an OCI image layout tar holding one image named ref: one
// uncompressed layer with /smokeapp, run as uid 65532.
func ociLayout(ref string, entrypoint []string, app []byte) ([]byte, error) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	if err := tw.WriteHeader(&tar.Header{Name: "smokeapp", Mode: 0o755, Size: int64(len(app)), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(app); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	blobs := map[string][]byte{}
	desc := func(mediaType string, data []byte) map[string]any {
		sum := sha256.Sum256(data)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[hex.EncodeToString(sum[:])] = data
		return map[string]any{"mediaType": mediaType, "digest": d, "size": len(data)}
	}
	layerDesc := desc("application/vnd.oci.image.layer.v1.tar", layer.Bytes())
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Entrypoint": entrypoint, "User": "65532:65532"},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDesc["digest"].(string)}},
	})
	if err != nil {
		return nil, err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": desc("application/vnd.oci.image.config.v1+json", config),
		"layers": []any{layerDesc},
	})
	if err != nil {
		return nil, err
	}
	md := desc("application/vnd.oci.image.manifest.v1+json", manifest)
	md["annotations"] = map[string]string{"io.containerd.image.name": ref}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "manifests": []any{md}})
	if err != nil {
		return nil, err
	}

	var out bytes.Buffer
	w := tar.NewWriter(&out)
	add := func(name string, data []byte) error {
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, err
	}
	if err := add("index.json", index); err != nil {
		return nil, err
	}
	for sum, data := range blobs {
		if err := add("blobs/sha256/"+sum, data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// SmokePod runs image with args, as Pod Security restricted admits it; with
// probe, Ready only once GET :8080/ answers 200.
func SmokePod(name, image string, labels map[string]string, args []string, probe bool) Obj {
	c := Obj{
		"name": "app", "image": image, "imagePullPolicy": "Never", "args": args,
		"env": []Obj{{"name": "POD_NAME", "valueFrom": Obj{"fieldRef": Obj{"fieldPath": "metadata.name"}}}},
		"securityContext": Obj{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
			"capabilities": Obj{"drop": []string{"ALL"}}},
		"resources": Obj{"limits": Obj{"memory": "32Mi"}, "requests": Obj{"cpu": "10m", "memory": "16Mi"}},
	}
	if probe {
		c["ports"] = []Obj{{"containerPort": 8080}}
		c["readinessProbe"] = Obj{"httpGet": Obj{"path": "/", "port": 8080}, "periodSeconds": 1}
	}
	return Obj{"metadata": Obj{"name": name, "labels": labels},
		"spec": Obj{"containers": []Obj{c}, "terminationGracePeriodSeconds": 2,
			"securityContext": Obj{"runAsNonRoot": true, "seccompProfile": Obj{"type": "RuntimeDefault"}}}}
}
