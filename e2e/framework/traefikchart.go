//go:build e2e

package framework

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// TraefikChartVersion is the Traefik Helm chart the suite installs: the
// pinned archive's, whose appVersion the Traefik binary (e2e/traefik) is.
const TraefikChartVersion = "41.3.0"

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

// Router is one HTTP router as Traefik's API reports it
// (/api/http/routers).
type Router struct {
	Name        string   `json:"name"`
	Rule        string   `json:"rule"`
	Status      string   `json:"status"`
	Error       []string `json:"error"`
	Middlewares []string `json:"middlewares"`
	Service     string   `json:"service"`
	Provider    string   `json:"provider"`
	EntryPoints []string `json:"entryPoints"`
}
