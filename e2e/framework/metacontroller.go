//go:build e2e

package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The real Metacontroller is built from its pinned source
// (e2e/metacontroller/build.sh): e2e/node runs it as its production
// manifests install it, the ./e2e suite installs its CRDs.

// MetacontrollerSourcePath says where the pinned Metacontroller source is, or
// the one line telling what to set: the suite never runs without it.
func MetacontrollerSourcePath(shared string) (string, error) {
	if src := os.Getenv("METACONTROLLER_SRC"); src != "" {
		if _, err := os.Stat(src); err != nil {
			return "", fmt.Errorf("METACONTROLLER_SRC=%s: %w", src, err)
		}
		return src, nil
	}
	archive := filepath.Join(shared, "vendor", "metacontroller-4.17.2.tar.gz")
	if _, err := os.Stat(archive); err != nil {
		return "", errors.New("no Metacontroller v4.17.2 source: set METACONTROLLER_SRC to a checkout or tar.gz archive of github.com/metacontroller/metacontroller at v4.17.2 (or provide ../shared/vendor/metacontroller-4.17.2.tar.gz)")
	}
	return archive, nil
}

// BuildMetacontroller runs e2e/metacontroller/build.sh, which builds only
// when its cache lacks the binary, and returns the cache directory (the
// binary and the extracted source tree src/).
func BuildMetacontroller(root, shared string) (string, error) {
	if _, err := MetacontrollerSourcePath(shared); err != nil {
		return "", err
	}
	os.Setenv("STACKDOME_SHARED", shared)
	return runBuildScript(root, "metacontroller", "Metacontroller")
}

// HookVersion is the version of one of a CompositeController's hooks: "v1"
// when unset, as the CRD's default and Metacontroller's GetVersion have it.
func HookVersion(cc Obj, hook string) string {
	if v, _ := Dig(cc, "spec", "hooks", hook, "version").(string); v != "" {
		return v
	}
	return "v1"
}
