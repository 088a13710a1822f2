//go:build e2e

package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// A stand-in pod's ConfigMap volumes, written to files its processes read.

// configMapVolumes writes the files of each configMap volume of the pod, as
// the kubelet does (every key, or the items' keys at their paths), under
// dir: volume name → its directory. A ConfigMap that is not there fails the
// start unless the volume is optional, as it keeps a kubelet's pod from
// starting.
func (kl *Kubelet) configMapVolumes(ctx context.Context, pod Obj, dir string) (map[string]string, error) {
	out := map[string]string{}
	vols, _ := Dig(pod, "spec", "volumes").([]any)
	for _, v := range vols {
		cmName, ok := Dig(v, "configMap", "name").(string)
		if !ok {
			continue
		}
		name := fmt.Sprint(Dig(v, "name"))
		ns := fmt.Sprint(Dig(pod, "metadata", "namespace"))
		cm, err := kl.kube.Get(ctx, "/api/v1/namespaces/"+ns+"/configmaps/"+cmName)
		if IsCode(err, 404) && Dig(v, "configMap", "optional") == true {
			cm = Obj{}
		} else if err != nil {
			return nil, fmt.Errorf("volume %s: ConfigMap %s/%s: %w", name, ns, cmName, err)
		}
		files := map[string]string{}
		data, _ := Dig(cm, "data").(map[string]any)
		if items, _ := Dig(v, "configMap", "items").([]any); len(items) > 0 {
			for _, it := range items {
				key := fmt.Sprint(Dig(it, "key"))
				val, ok := data[key]
				if !ok {
					return nil, fmt.Errorf("volume %s: ConfigMap %s/%s has no key %s", name, ns, cmName, key)
				}
				files[fmt.Sprint(Dig(it, "path"))] = fmt.Sprint(val)
			}
		} else {
			for key, val := range data {
				files[key] = fmt.Sprint(val)
			}
		}
		d := filepath.Join(dir, name)
		for p, content := range files {
			f := filepath.Join(d, filepath.Clean("/"+p))
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
				return nil, err
			}
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		out[name] = d
	}
	return out, nil
}

// withVolumes points each container's mounts at the volumes' directories.
func withVolumes(cs []container, vols map[string]string) {
	for i := range cs {
		for j := range cs[i].mounts {
			cs[i].mounts[j].source = vols[cs[i].mounts[j].volume]
		}
	}
}
