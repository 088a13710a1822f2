//go:build e2e

package framework

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// A pod's secret volumes, laid out as the kubelet lays them out (its
// AtomicWriter, pkg/volume/util/atomic_writer.go): each key a symlink
// through ..data to a timestamped directory, so that a new content is
// swapped in whole by renaming ..data, and a bind mount of the volume's
// directory shows the swap to the container. The stand-in writes them once,
// when the pod starts; the real kubelet swaps a changed Secret in at its
// sync of the pod (every minute or so), which e2e/node's
// TestHooksOverMutualTLSOnRealNode proves with a rotated serving leaf.

// secretVolume is one secret volume of a pod and the directory holding it.
type secretVolume struct {
	volume, namespace, secret string
	dir                       string
}

var secretGeneration atomic.Int64

// secretVolumes writes every secret volume of pod under dir (volume name
// → its directory). A Secret that is not there fails the start unless the
// volume is optional, as it keeps a kubelet's pod from starting.
func (kl *Kubelet) secretVolumes(ctx context.Context, pod Obj, dir string) ([]secretVolume, error) {
	var out []secretVolume
	vols, _ := Dig(pod, "spec", "volumes").([]any)
	for _, v := range vols {
		name, ok := Dig(v, "secret", "secretName").(string)
		if !ok {
			continue
		}
		sv := secretVolume{volume: fmt.Sprint(Dig(v, "name")), namespace: fmt.Sprint(Dig(pod, "metadata", "namespace")), secret: name}
		sv.dir = filepath.Join(dir, sv.volume)
		if err := os.MkdirAll(sv.dir, 0o755); err != nil {
			return nil, err
		}
		if err := kl.writeSecretVolume(ctx, sv, Dig(v, "secret", "optional") == true); err != nil {
			return nil, err
		}
		out = append(out, sv)
	}
	return out, nil
}

// writeSecretVolume swaps the Secret's current data into sv.dir.
func (kl *Kubelet) writeSecretVolume(ctx context.Context, sv secretVolume, optional bool) error {
	sec, err := kl.kube.Get(ctx, "/api/v1/namespaces/"+sv.namespace+"/secrets/"+sv.secret)
	if IsCode(err, 404) && optional {
		sec = Obj{}
	} else if err != nil {
		return fmt.Errorf("volume %s: Secret %s/%s: %w", sv.volume, sv.namespace, sv.secret, err)
	}
	data, _ := Dig(sec, "data").(map[string]any)
	ts := fmt.Sprintf("..%d", secretGeneration.Add(1))
	if err := os.Mkdir(filepath.Join(sv.dir, ts), 0o755); err != nil {
		return err
	}
	keys := make([]string, 0, len(data))
	for k, val := range data {
		b, err := base64.StdEncoding.DecodeString(fmt.Sprint(val))
		if err != nil {
			return fmt.Errorf("volume %s: Secret %s/%s key %s: %w", sv.volume, sv.namespace, sv.secret, k, err)
		}
		if err := os.WriteFile(filepath.Join(sv.dir, ts, k), b, 0o644); err != nil {
			return err
		}
		keys = append(keys, k)
	}
	tmp := filepath.Join(sv.dir, "..data_tmp")
	os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(sv.dir, "..data")); err != nil {
		return err
	}
	// Each key a symlink through ..data (made once; a key removed from
	// the Secret is left dangling, as the kubelet removes it: not needed
	// here).
	for _, k := range keys {
		link := filepath.Join(sv.dir, k)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join("..data", k), link); err != nil {
			return err
		}
	}
	// Old timestamped directories go, as the kubelet removes them.
	entries, _ := os.ReadDir(sv.dir)
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "..") && n != ts && !slices.Contains([]string{"..data", "..data_tmp"}, n) {
			os.RemoveAll(filepath.Join(sv.dir, n))
		}
	}
	return nil
}
