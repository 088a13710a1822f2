package schema

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validateWritable checks spec.scratch and spec.shm the way the CRD does:
// names that make volume names, one mount a path — across files, storage,
// scratch and /dev/shm — and sizes that are positive (a zero sizeLimit
// would evict the pod at its first write).
func validateWritable(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	mounted := map[string]bool{}
	for _, f := range s.Files {
		mounted[f.MountPath] = true
	}
	if s.Storage != nil {
		mounted[s.Storage.MountPath] = true
	}
	names := map[string]bool{}
	for i, v := range s.Scratch {
		for _, msg := range validation.IsDNS1123Label("scratch-" + v.Name) {
			add("spec.scratch[%d].name %q: %s", i, v.Name, msg)
		}
		if names[v.Name] {
			add("spec.scratch[%d].name %q: scratch names must be unique", i, v.Name)
		}
		names[v.Name] = true
		switch {
		case !strings.HasPrefix(v.MountPath, "/") || len(v.MountPath) < 2:
			add("spec.scratch[%d].mountPath %q must be an absolute path below /", i, v.MountPath)
		case v.MountPath == ShmMountPath:
			add("spec.scratch[%d] cannot be mounted at /dev/shm: set spec.shm for a memory-backed /dev/shm", i)
		case mounted[v.MountPath]:
			add("spec.scratch[%d].mountPath %q is already mounted", i, v.MountPath)
		}
		mounted[v.MountPath] = true
		if v.SizeLimit.Sign() <= 0 {
			add("spec.scratch[%d].sizeLimit %s must be positive", i, v.SizeLimit.String())
		}
	}
	if s.Shm != nil {
		if s.Shm.SizeLimit.Sign() <= 0 {
			add("spec.shm.sizeLimit %s must be positive", s.Shm.SizeLimit.String())
		}
		for i, f := range s.Files {
			if f.MountPath == ShmMountPath {
				add("spec.files[%d].mountPath /dev/shm is spec.shm's", i)
			}
		}
		if s.Storage != nil && s.Storage.MountPath == ShmMountPath {
			add("spec.storage.mountPath /dev/shm is spec.shm's")
		}
	}
	return errs
}

// validateMigration checks spec.migration: it must say what to run, or the
// init container would run the app's own entrypoint, which never exits.
func validateMigration(s Spec) []string {
	m := s.Migration
	if m == nil || len(m.Command) > 0 || len(m.Args) > 0 {
		return nil
	}
	return []string{"spec.migration needs a command or args: without them it would run the app itself, which never exits, and no pod would start"}
}
