//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"path/filepath"
)

// Pods on the test host: the kubelet stand-in running pods at the test
// host's addresses.

// UseHost lets the kubelet run pods on the test host h (StartOnHost): the
// kubernetes Service's ClusterIP is given to h and forwarded to the API
// server, as kube-proxy would, so a pod's in-cluster client
// (KUBERNETES_SERVICE_HOST, the ServiceAccount token) reaches it. Once per
// cluster; stop removes the forward.
func (kl *Kubelet) UseHost(ctx context.Context, h *TestHost) (stop func(), err error) {
	svc, err := kl.kube.Get(ctx, "/api/v1/namespaces/default/services/kubernetes")
	if err != nil {
		return nil, err
	}
	clusterIP, err := netip.ParseAddr(fmt.Sprint(Dig(svc, "spec", "clusterIP")))
	if err != nil {
		return nil, fmt.Errorf("the kubernetes Service's ClusterIP: %w", err)
	}
	if err := h.AddAddress(clusterIP); err != nil {
		return nil, err
	}
	apiURL, err := url.Parse(kl.kube.Base)
	if err != nil {
		return nil, err
	}
	stop, err = forwardAPIIn(h.netns, net.JoinHostPort(clusterIP.String(), "443"), apiURL.Host)
	if err != nil {
		return nil, err
	}
	kl.mu.Lock()
	kl.host = h
	kl.hostEnv = []string{"KUBERNETES_SERVICE_HOST=" + clusterIP.String(), "KUBERNETES_SERVICE_PORT=443", "KUBERNETES_SERVICE_PORT_HTTPS=443"}
	kl.mu.Unlock()
	return stop, nil
}

// StartOnHost is Start on the test host (UseHost) at ip, an address the
// caller gave it; the pod's scratch directory is under dir.
func (kl *Kubelet) StartOnHost(ctx context.Context, pod Obj, ip, dir string) (*Pod, error) {
	kl.mu.Lock()
	h, env := kl.host, kl.hostEnv
	kl.mu.Unlock()
	if h == nil {
		return nil, errors.New("the kubelet has no test host (Kubelet.UseHost)")
	}
	ns, _ := Dig(pod, "metadata", "namespace").(string)
	name, _ := Dig(pod, "metadata", "name").(string)
	return kl.Start(ctx, pod, Placement{Host: h, IP: ip, Env: env, Dir: filepath.Join(dir, ns+"_"+name)})
}

// Knows reports whether the kubelet knows the image ref (AddImage).
func (kl *Kubelet) Knows(ref string) bool {
	_, ok := kl.image(ref)
	return ok
}
