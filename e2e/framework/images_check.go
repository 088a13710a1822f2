//go:build e2e

package framework

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// NormalizeImage returns ref as the kubelet and containerd's CRI look it up
// (Docker's reference normalization): a name without a registry is on
// docker.io, a docker.io name without a path is under library/, and one
// without a tag or digest is :latest. So a pod's "docker.io/traefik:v3.7.11"
// runs the image containerd holds as "docker.io/library/traefik:v3.7.11".
func NormalizeImage(ref string) string {
	name, digest, hasDigest := strings.Cut(ref, "@")
	first, rest, hasSlash := strings.Cut(name, "/")
	if !hasSlash || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		first, rest = "docker.io", name
	}
	if first == "index.docker.io" {
		first = "docker.io"
	}
	if first == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	name = first + "/" + rest
	if hasDigest {
		return name + "@" + digest
	}
	if i := strings.LastIndex(name, ":"); i < 0 || strings.Contains(name[i:], "/") {
		name += ":latest"
	}
	return name
}

// MissingImages returns, in order and once each, the images spec's
// containers (init, regular and ephemeral) name that have lacks, have being
// the references the node's containerd holds (Node.Images); both sides are
// compared normalized. It performs no I/O.
func MissingImages(spec *corev1.PodSpec, have []string) []string {
	held := map[string]bool{}
	for _, h := range have {
		held[NormalizeImage(h)] = true
	}
	var want []string
	for _, c := range spec.InitContainers {
		want = append(want, c.Image)
	}
	for _, c := range spec.Containers {
		want = append(want, c.Image)
	}
	for _, c := range spec.EphemeralContainers {
		want = append(want, c.Image)
	}
	var missing []string
	for _, w := range want {
		if !held[NormalizeImage(w)] && !slices.Contains(missing, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// CheckImages returns nil when the node holds every image spec needs, else
// an error naming each missing one (and the name containerd would need to
// hold it under) and what the node holds: call it before creating a pod, so
// that a missing image fails the test at once rather than as a pull that
// cannot reach a registry minutes later.
func CheckImages(pod string, spec *corev1.PodSpec, have []string) error {
	missing := MissingImages(spec, have)
	if len(missing) == 0 {
		return nil
	}
	for i, m := range missing {
		if n := NormalizeImage(m); n != m {
			missing[i] = fmt.Sprintf("%s (as %s)", m, n)
		}
	}
	held := slices.Sorted(slices.Values(have))
	return fmt.Errorf("pod %s needs images the node's containerd does not hold: %s; it holds %s (BuildImages builds the suite's images, Node.Import loads one)",
		pod, strings.Join(missing, ", "), strings.Join(held, ", "))
}
