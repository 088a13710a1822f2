//go:build e2e

package framework

// Storage on the real node: hostPath PersistentVolumes made beforehand,
// of one storage class, in place of a provisioner.

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// PVClass is the storage class of the PersistentVolumes the test makes
// beforehand (no provisioner: the claims bind to them by class).
const PVClass = "node-local"

// MakePV makes a hostPath PersistentVolume of class PVClass under the
// run's scratch directory, deleted when the test ends.
func (f *NodeFixture) MakePV(name, size string) {
	t := f.t
	t.Helper()
	dir := filepath.Join(f.Scratch, "pv", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Kube.Create(t.Context(), "/api/v1/persistentvolumes", Obj{
		"apiVersion": "v1", "kind": "PersistentVolume", "metadata": Obj{"name": name},
		"spec": Obj{
			"capacity": Obj{"storage": size}, "accessModes": []any{"ReadWriteOnce"},
			"persistentVolumeReclaimPolicy": "Retain", "storageClassName": PVClass,
			"hostPath": Obj{"path": dir, "type": "Directory"},
		},
	}); err != nil {
		t.Fatalf("creating PersistentVolume %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = f.Kube.Do(ctx, "DELETE", "/api/v1/persistentvolumes/"+name, "", nil, nil)
	})
}
