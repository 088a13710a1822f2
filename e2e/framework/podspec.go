//go:build e2e

package framework

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// What a stand-in pod runs, read from the pod object: its containers, their
// mounts and environment.

// container is one container of a pod spec, as the stand-in kubelet runs it.
type container struct {
	name    string
	image   string
	command []string
	args    []string
	env     []string // NAME=value, from the spec's env (values and fieldRefs to the pod's name and namespace)
	ports   []int    // containerPorts
	mounts  []mount  // the spec's volumeMounts of the volumes the stand-in fills
}

// mount is a volumeMount: the directory on this machine holding the
// volume's files, mounted read-only at path in the container.
type mount struct{ path, volume, source string }

// containersOf reads the containers of a pod spec (init containers first
// when init is true).
func containersOf(pod Obj, init bool) ([]container, error) {
	field := "containers"
	if init {
		field = "initContainers"
	}
	raw, _ := Dig(pod, "spec", field).([]any)
	var out []container
	for _, r := range raw {
		var c struct {
			Name    string   `json:"name"`
			Image   string   `json:"image"`
			Command []string `json:"command"`
			Args    []string `json:"args"`
			Env     []struct {
				Name      string `json:"name"`
				Value     string `json:"value"`
				ValueFrom *struct {
					FieldRef *struct {
						FieldPath string `json:"fieldPath"`
					} `json:"fieldRef"`
					ResourceFieldRef *struct {
						Resource string `json:"resource"`
						Divisor  any    `json:"divisor"`
					} `json:"resourceFieldRef"`
				} `json:"valueFrom"`
			} `json:"env"`
			VolumeMounts []struct {
				Name      string `json:"name"`
				MountPath string `json:"mountPath"`
			} `json:"volumeMounts"`
			Resources struct {
				Requests map[string]string `json:"requests"`
				Limits   map[string]string `json:"limits"`
			} `json:"resources"`
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, err
		}
		ct := container{name: c.Name, image: c.Image, command: c.Command, args: c.Args, ports: containerPorts(r)}
		for _, m := range c.VolumeMounts {
			ct.mounts = append(ct.mounts, mount{path: m.MountPath, volume: m.Name})
		}
		for _, e := range c.Env {
			value := e.Value
			switch {
			case e.ValueFrom == nil:
			case e.ValueFrom.FieldRef != nil && (e.ValueFrom.FieldRef.FieldPath == "metadata.name" || e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"):
				// The downward API's pod fields a chart commonly reads.
				value = fmt.Sprint(Dig(pod, strings.Split(e.ValueFrom.FieldRef.FieldPath, ".")...))
			case e.ValueFrom.ResourceFieldRef != nil && fmt.Sprint(e.ValueFrom.ResourceFieldRef.Divisor) == "1":
				// The container's own requests and limits, as the kubelet
				// resolves them: CPU rounded up to a whole core, an unset
				// limit the node's allocatable (this machine's).
				v, err := resourceField(e.ValueFrom.ResourceFieldRef.Resource, c.Resources.Requests, c.Resources.Limits)
				if err != nil {
					return nil, fmt.Errorf("container %s: env %s: %w", c.Name, e.Name, err)
				}
				value = strconv.FormatInt(v, 10)
			default:
				return nil, fmt.Errorf("container %s: env %s: the stand-in kubelet resolves only fieldRefs to metadata.name and metadata.namespace and resourceFieldRefs of divisor 1", c.Name, e.Name)
			}
			ct.env = append(ct.env, e.Name+"="+value)
		}
		out = append(out, ct)
	}
	return out, nil
}

// ContainerEnv is the environment the stand-in kubelet gives the container
// name of pod: its env, fieldRefs and resourceFieldRefs resolved (the
// chart's GOMAXPROCS and GOMEMLIMIT), for a test that runs the container's
// binary itself.
func ContainerEnv(pod Obj, name string) ([]string, error) {
	cs, err := containersOf(pod, false)
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if c.name == name {
			return c.env, nil
		}
	}
	return nil, fmt.Errorf("pod %v has no container %s", Dig(pod, "metadata", "name"), name)
}
