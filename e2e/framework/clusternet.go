//go:build e2e

package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// clusterNet stands in for the cluster network a pod's process sees: cluster
// DNS and the service proxy (kube-proxy). It is the only such stand-in, in
// this one file; docs/e2e.md describes it.
//
// A container is given HTTP_PROXY pointing at it. Go's net/http (so
// Metacontroller's hook client, an http.Client on http.DefaultTransport,
// pkg/hooks/webhook.go) sends every http:// request through it; the proxy
// resolves the URL's host <service>.<namespace>[.svc[.cluster.local]] as
// cluster DNS would, finds the Service's port, and forwards to a ready
// endpoint of that port in the Service's EndpointSlices (kube-controller-
// manager's, from pods the stand-in kubelet reported), round robin per
// request, where kube-proxy picks per connection at random and
// Metacontroller's client keeps connections alive: the replica changes more
// often here than in a cluster (docs/e2e.md, "Which replica answers a hook
// call"). A name that is no Service answers 502 (DNS would say
// NXDOMAIN); a Service without a ready endpoint answers 503 (kube-proxy
// would reject the connection): the hook client sees a failed call either way.
//
// The API server is reached the way a pod reaches it: the `kubernetes`
// Service's ClusterIP, port 443 (KUBERNETES_SERVICE_HOST/PORT), given to
// the pod's namespace and forwarded to the API server's loopback address.
//
// Every hook exchange through it is recorded, so a test can read what the
// real Metacontroller sent and what stackdome answered.
type clusterNet struct {
	kube *Kube
	next atomic.Uint64

	mu        sync.Mutex
	exchanges []HookExchange
}

// HookExchange is one request through the proxy and its answer.
type HookExchange struct {
	At         time.Time // when the answer came back
	url        string
	path       string // /sync, /customize ...
	parentNS   string // the request's parent, when it names one
	parentName string
	Request    Obj
	Response   Obj // nil unless a 200 with a JSON body
	Status     int
	Err        string // the forwarding error, if any
	Endpoint   string // address:port the request went to
	// ClientCN is the common name of the client certificate the caller
	// presented (https:// hooks, serveConnect); "" over http://.
	ClientCN string
}

func newClusterNet(k *Kube) *clusterNet { return &clusterNet{kube: k} }

// serveIn serves the proxy inside the network namespace netns at addr.
func (n *clusterNet) serveIn(netns, addr string) (stop func(), err error) {
	l, err := listenIn(netns, addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: n, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return func() { srv.Close() }, nil
}

// ServeHTTP is the proxy: it forwards one http:// request and records it,
// or relays a CONNECT of an https:// hook (serveConnect).
func (n *clusterNet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		n.serveConnect(w, r)
		return
	}
	if r.URL.Host == "" {
		http.Error(w, "the cluster-network stand-in forwards proxy requests only", http.StatusMethodNotAllowed)
		return
	}
	n.relay(w, r, "http", proxyTransport, HookExchange{})
}

// relay forwards r (its URL absolute: scheme, host of the Service) over up
// to a ready endpoint, records the exchange (ex: what the caller knows of
// it already) and writes the answer to w.
func (n *clusterNet) relay(w http.ResponseWriter, r *http.Request, scheme string, up http.RoundTripper, ex HookExchange) {
	ex.url, ex.path = r.URL.String(), r.URL.Path
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req Obj
	if decodeNumbers(body, &req) == nil {
		ex.Request = req
		ex.parentNS, _ = Dig(req, "parent", "metadata", "namespace").(string)
		ex.parentName, _ = Dig(req, "parent", "metadata", "name").(string)
	}
	code, answer, err := n.forward(r, body, scheme, up, &ex)
	ex.At = time.Now()
	if err != nil {
		ex.Err, ex.Status = err.Error(), code
		n.record(ex)
		http.Error(w, err.Error(), code)
		return
	}
	ex.Status = code
	if code == http.StatusOK {
		var resp Obj
		if decodeNumbers(answer.body, &resp) == nil {
			ex.Response = resp
		}
	}
	n.record(ex)
	for k, vs := range answer.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(code)
	w.Write(answer.body)
}

type answerOf struct {
	header http.Header
	body   []byte
}

func (n *clusterNet) forward(r *http.Request, body []byte, scheme string, up http.RoundTripper, ex *HookExchange) (int, answerOf, error) {
	ctx := r.Context()
	host, portText, err := net.SplitHostPort(r.URL.Host)
	if err != nil {
		host, portText = r.URL.Host, "80"
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return http.StatusBadGateway, answerOf{}, fmt.Errorf("port %q", portText)
	}
	addr, code, err := n.resolve(ctx, host, port)
	if err != nil {
		return code, answerOf{}, err
	}
	ex.Endpoint = addr
	u := url.URL{Scheme: scheme, Host: addr, Path: r.URL.Path, RawQuery: r.URL.RawQuery}
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return http.StatusBadGateway, answerOf{}, err
	}
	out.Header = r.Header.Clone()
	out.Header.Del("Proxy-Connection")
	out.Host = r.Host
	resp, err := up.RoundTrip(out)
	if err != nil {
		return http.StatusBadGateway, answerOf{}, fmt.Errorf("dial %s (endpoint of %s): %w", addr, host, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return http.StatusBadGateway, answerOf{}, err
	}
	return resp.StatusCode, answerOf{header: resp.Header, body: b}, nil
}

var proxyTransport = &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}

// resolve is cluster DNS and the service proxy: <service>.<namespace>
// [.svc[.cluster.local]] and a Service port to one ready endpoint's
// address:port.
func (n *clusterNet) resolve(ctx context.Context, host string, port int) (string, int, error) {
	name, ns, ok := serviceName(host)
	if !ok {
		return "", http.StatusBadGateway, fmt.Errorf("%s: no such host (the stand-in resolves <service>.<namespace>[.svc[.cluster.local]] only)", host)
	}
	svc, err := n.kube.Get(ctx, "/api/v1/namespaces/"+ns+"/services/"+name)
	if err != nil {
		return "", http.StatusBadGateway, fmt.Errorf("%s: no such host: %w", host, err)
	}
	portName, found := "", false
	ports, _ := Dig(svc, "spec", "ports").([]any)
	for _, p := range ports {
		if fmt.Sprint(Dig(p, "port")) == strconv.Itoa(port) {
			portName, _ = Dig(p, "name").(string)
			found = true
		}
	}
	if !found {
		return "", http.StatusServiceUnavailable, fmt.Errorf("the Service %s/%s has no port %d", ns, name, port)
	}
	slices, err := n.kube.List(ctx, "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices", "kubernetes.io/service-name="+name)
	if err != nil {
		return "", http.StatusBadGateway, err
	}
	var addrs []string
	for _, s := range slices {
		target := 0
		sp, _ := s["ports"].([]any)
		for _, p := range sp {
			pn, _ := Dig(p, "name").(string)
			if pn == portName {
				v, _ := Dig(p, "port").(json.Number)
				i, _ := v.Int64()
				target = int(i)
			}
		}
		if target == 0 {
			continue
		}
		eps, _ := s["endpoints"].([]any)
		for _, e := range eps {
			if Dig(e, "conditions", "ready") != true {
				continue
			}
			as, _ := Dig(e, "addresses").([]any)
			for _, a := range as {
				addrs = append(addrs, net.JoinHostPort(fmt.Sprint(a), strconv.Itoa(target)))
			}
		}
	}
	if len(addrs) == 0 {
		return "", http.StatusServiceUnavailable, fmt.Errorf("the Service %s/%s has no ready endpoint on port %d", ns, name, port)
	}
	return addrs[int(n.next.Add(1)-1)%len(addrs)], 0, nil
}

// serviceName splits <service>.<namespace>[.svc[.cluster.local]].
func serviceName(host string) (name, ns string, ok bool) {
	host = strings.TrimSuffix(strings.TrimSuffix(host, "."), ".cluster.local")
	host = strings.TrimSuffix(host, ".svc")
	parts := strings.Split(host, ".")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// decodeNumbers decodes JSON keeping numbers as json.Number, as the suite
// compares them.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
