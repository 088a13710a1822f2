//go:build e2e

package framework

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Cluster is a real control plane on loopback: etcd, kube-apiserver and
// kube-controller-manager, with no kubelet and no scheduler. Pods are created
// by the controllers and stay Pending unless a real node joins (ForRealNode,
// node.go).
type Cluster struct {
	dir          string
	Kube         *Kube
	Kubeconfig   string // admin kubeconfig (helm, kube-controller-manager)
	caFile       string // the CA of the API server's serving certificate
	token        string // the admin's bearer token
	serviceRange string // --service-cluster-ip-range
	Procs        []*Proc
	opts         clusterOptions
	pki          *pki
	apiPort      int
}

const (
	ClusterVersion = "v1.37.2"
	adminUser      = "e2e-admin"
)

// StartCluster starts the control plane from the binaries in binDir, with all
// state under dir and ClusterIPs from serviceRange; without options, on
// loopback, where no node can join (node_cluster.go has the options a real
// node needs). On error everything started so far is stopped.
func StartCluster(ctx context.Context, binDir, dir, serviceRange string, opts ...ClusterOption) (*Cluster, error) {
	c := &Cluster{dir: dir, serviceRange: serviceRange}
	for _, o := range opts {
		o(&c.opts)
	}
	if err := c.start(ctx, binDir); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, binDir string) error {
	dir := c.dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}

	// The kubernetes Service takes the first address of the Service range:
	// pods reach the API server there (KUBERNETES_SERVICE_HOST).
	sr, err := netip.ParsePrefix(c.serviceRange)
	if err != nil {
		return fmt.Errorf("service range %q: %w", c.serviceRange, err)
	}
	sans := []net.IP{net.IP(sr.Masked().Addr().Next().AsSlice())}
	if c.opts.address.IsValid() {
		sans = append(sans, net.IP(c.opts.address.AsSlice()))
	}
	p, err := newPKI(dir, sans...)
	if err != nil {
		return err
	}
	c.pki = p
	token, err := randomToken()
	if err != nil {
		return err
	}
	c.caFile, c.token = p.caFile, token
	// token,user,uid,"group1,group2": the admin is in system:masters, which
	// RBAC's bootstrap policy binds to cluster-admin.
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(fmt.Sprintf("%s,%s,%s,\"system:masters\"\n", token, adminUser, adminUser)), 0o600); err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}

	ports, err := FreePorts(3)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	c.apiPort = apiPort
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)

	etcd, err := startProc(dir, "etcd", filepath.Join(binDir, "etcd"),
		"--name=e2e",
		"--data-dir="+filepath.Join(dir, "etcd-data"),
		"--listen-client-urls="+etcdURL,
		"--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=e2e="+peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	if err != nil {
		return err
	}
	c.Procs = append(c.Procs, etcd)

	apiURL := "https://" + net.JoinHostPort(c.opts.apiHost(), strconv.Itoa(apiPort))
	addrArgs, err := c.opts.apiserverArgs(dir, p)
	if err != nil {
		return err
	}
	apiArgs := append([]string{
		"--etcd-servers=" + etcdURL,
		"--secure-port=" + strconv.Itoa(apiPort),
	}, addrArgs...)
	apiserver, err := startProc(dir, "kube-apiserver", filepath.Join(binDir, "kube-apiserver"), append(apiArgs,
		"--tls-cert-file="+p.certFile,
		"--tls-private-key-file="+p.keyFile,
		"--client-ca-file="+p.caFile,
		"--token-auth-file="+tokenFile,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.saPubFile,
		"--service-account-signing-key-file="+p.saKeyFile,
		"--service-cluster-ip-range="+c.serviceRange,
		"--allow-privileged=false",
		"--profiling=false",
		"--v=1",
	)...)
	if err != nil {
		return err
	}
	c.Procs = append(c.Procs, apiserver)

	c.Kube, err = newKube(apiURL, token, p.caPEM)
	if err != nil {
		return err
	}
	if err := WaitUntil(90*time.Second, 250*time.Millisecond, "kube-apiserver /readyz", func() (bool, error) {
		for _, pr := range c.Procs {
			if done, err := pr.Exited(); done {
				return false, fmt.Errorf("%s exited (%v):\n%s", pr.Name, err, Indent(pr.Tail(30)))
			}
		}
		var raw []byte
		err := c.Kube.Do(ctx, "GET", "/readyz", "", nil, &raw)
		return err == nil, err
	}); err != nil {
		return err
	}

	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, apiURL, token, p.caPEM); err != nil {
		return err
	}

	kcm, err := startProc(dir, "kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"), append(c.opts.controllerManagerArgs(),
		"--kubeconfig="+c.Kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=0", // serve nothing: readiness is seen through the API instead
		"--leader-elect=false",
		"--service-account-private-key-file="+p.saKeyFile,
		"--root-ca-file="+p.caFile,
		"--use-service-account-credentials=false",
		"--service-cluster-ip-range="+c.serviceRange,
		"--cluster-name=stackdome-e2e",
		"--concurrent-deployment-syncs=5",
		"--concurrent-statefulset-syncs=5",
		"--v=1",
	)...)
	if err != nil {
		return err
	}
	c.Procs = append(c.Procs, kcm)

	// The service-account controller creating "default" in namespace default
	// proves kube-controller-manager is up and talking to the API server;
	// without that account, pod creation fails ServiceAccount admission.
	if err := WaitUntil(90*time.Second, 250*time.Millisecond, "kube-controller-manager (default ServiceAccount)", func() (bool, error) {
		if done, err := kcm.Exited(); done {
			return false, fmt.Errorf("kube-controller-manager exited (%v):\n%s", err, Indent(kcm.Tail(30)))
		}
		_, err := c.Kube.Get(ctx, "/api/v1/namespaces/default/serviceaccounts/default")
		return err == nil, err
	}); err != nil {
		return err
	}
	return nil
}

// Stop stops the processes in reverse start order.
func (c *Cluster) Stop() {
	for i := len(c.Procs) - 1; i >= 0; i-- {
		c.Procs[i].Stop(10 * time.Second)
	}
	c.Procs = nil
}

// Healthy reports the first control-plane process that has died.
func (c *Cluster) Healthy() error {
	for _, p := range c.Procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v):\n%s", p.Name, err, Indent(p.Tail(30)))
		}
	}
	return nil
}

func writeKubeconfig(path, server, token string, caPEM []byte) error {
	// JSON is YAML: kubectl, helm and kube-controller-manager read it as is.
	cfg := fmt.Sprintf(`{
  "apiVersion": "v1",
  "kind": "Config",
  "clusters": [{"name": "e2e", "cluster": {"server": %q, "certificate-authority-data": %q}}],
  "users": [{"name": "admin", "user": {"token": %q}}],
  "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "admin", "namespace": "default"}}],
  "current-context": "e2e"
}
`, server, base64.StdEncoding.EncodeToString(caPEM), token)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
