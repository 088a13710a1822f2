//go:build e2e

package framework

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TraefikChartVersion is the Traefik Helm chart the suite installs: the
// pinned archive's, whose appVersion the Traefik binary (e2e/traefik) is.
const TraefikChartVersion = "41.3.0"

// traefikImageBinPath is where the Traefik image holds its binary (its
// entrypoint.sh runs `traefik "$@"` when the first argument is a flag, as
// the chart's are).
const traefikImageBinPath = "/usr/local/bin/traefik"

// TraefikChartPath extracts the pinned chart (shared/vendor's
// traefik-helm-chart-<version>.tar.gz) under dir and returns the chart's
// directory, traefik/.
func TraefikChartPath(shared, dir string) (string, error) {
	archive := filepath.Join(shared, "vendor", "traefik-helm-chart-"+TraefikChartVersion+".tar.gz")
	f, err := os.Open(archive)
	if err != nil {
		return "", fmt.Errorf("the pinned Traefik chart: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		name := filepath.Clean(h.Name)
		if strings.HasPrefix(name, "..") || filepath.IsAbs(name) {
			return "", fmt.Errorf("%s: entry %s outside the archive", archive, h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return "", err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return "", err
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(target, data, 0o644); err != nil {
				return "", err
			}
		}
	}
	chart := filepath.Join(dir, "traefik-helm-chart-"+TraefikChartVersion, "traefik")
	if _, err := os.Stat(filepath.Join(chart, "Chart.yaml")); err != nil {
		return "", fmt.Errorf("%s: no traefik/Chart.yaml: %w", archive, err)
	}
	return chart, nil
}

// TraefikChart installs Traefik as its Helm chart renders it: `helm
// install` of the pinned chart, and the chart's Deployment pod run by the
// kubelet stand-in as the real Traefik binary with the arguments the chart
// rendered, authenticated as the chart's ServiceAccount (its ClusterRole, a
// TokenRequest token), on an address of the test host.
type TraefikChart struct {
	// Helm runs bin/helm against the cluster.
	Helm    func(ctx context.Context, args ...string) ([]byte, error)
	Chart   string // the chart's directory (TraefikChartPath)
	Binary  string // the directory of the Traefik binary (e2e/traefik/build.sh)
	Kubelet *Kubelet
	Host    *TestHost
}

// Install installs the chart as release traefik in namespace ns, with the
// values set (--set), and runs its pod at ip, an address it gives the test
// host for the test. The test's cleanup stops the pod, uninstalls the
// release and takes the address away. The entry points it returns are the
// pod's: web :8000, websecure :8443, traefik :8080 (/ping, and /api when
// set says api.insecure=true).
func (tc *TraefikChart) Install(t *testing.T, ns string, ip netip.Addr, set ...string) *Traefik {
	t.Helper()
	ctx := t.Context()
	if err := tc.Host.AddAddress(ip); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.Host.DelAddress(ip) })
	args := []string{"install", "traefik", tc.Chart, "--namespace", ns, "--create-namespace"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	if out, err := tc.Helm(ctx, args...); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var pod *Pod
	t.Cleanup(func() {
		if pod != nil {
			pod.Stop()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := tc.Helm(ctx, "uninstall", "traefik", "--namespace", ns, "--wait=false"); err != nil {
			t.Errorf("helm uninstall traefik: %v\n%s", err, out)
		}
		if pod != nil {
			tc.Kubelet.ForceDeletePod(pod.Namespace, pod.Name)
		}
	})
	var pods []Obj
	err := WaitUntil(60*time.Second, 200*time.Millisecond, "the Traefik chart's pod", func() (bool, error) {
		var err error
		pods, err = tc.Kubelet.kube.List(ctx, "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/name=traefik")
		return err == nil && len(pods) == 1, err
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := Dig(pods[0], "spec", "containers").([]any)
	if len(cs) != 1 {
		t.Fatalf("the Traefik chart's pod has %d containers, want 1", len(cs))
	}
	tc.Kubelet.AddImage(fmt.Sprint(Dig(cs[0], "image")), tc.Image())
	pod, err = tc.Kubelet.StartOnHost(ctx, pods[0], ip.String(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tr := &Traefik{
		Web:       "http://" + ip.String() + ":8000",
		Websecure: "http://" + ip.String() + ":8443",
		API:       "http://" + ip.String() + ":8080",
		Proc:      pod.Proc(fmt.Sprint(Dig(cs[0], "name"))),
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("traefik log:\n%s", Indent(tr.Proc.Tail(60)))
		}
	})
	return tr
}

// Image is the chart's Traefik image as the kubelet stand-in runs it: the
// Traefik binary at the image's path, as its entrypoint.
func (tc *TraefikChart) Image() Image {
	return Image{
		Entrypoint: []string{traefikImageBinPath},
		Files:      map[string]string{traefikImageBinPath: filepath.Join(tc.Binary, "traefik")},
	}
}
