//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// kube is a deliberately small API-server client: net/http, a bearer token,
// JSON in and out. The e2e suite speaks the wire protocol itself so it proves
// what Metacontroller's requests do, not what a client library smooths over.
type kube struct {
	base  string // https://127.0.0.1:<port>
	token string
	http  *http.Client
}

func newKube(base, token string, caPEM []byte) (*kube, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in PEM")
	}
	return &kube{
		base:  base,
		token: token,
		http: &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
				// Never dial anything but the loopback API server.
				Proxy: nil,
			},
		},
	}, nil
}

// apiError is a non-2xx answer, carrying the server's Status message.
type apiError struct {
	Method, Path string
	Code         int
	Reason       string
	Message      string
	Body         string
	retryAfter   time.Duration
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, e.Reason, e.Message)
}

func isCode(err error, code int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == code
}

// do sends body (bytes sent as is, anything else JSON-encoded) and decodes a
// 2xx JSON answer into out (if non-nil). Numbers decode as json.Number so an
// integer can be told from a float.
func (k *kube) do(ctx context.Context, method, path, contentType string, body, out any) error {
	var payload []byte
	switch b := body.(type) {
	case nil:
	case []byte:
		payload = b
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("encoding %s %s: %w", method, path, err)
		}
		payload = data
	}
	// Like client-go, honour 429 + Retry-After: a freshly Established CRD
	// answers "storage is (re)initializing" for a moment.
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := k.once(ctx, method, path, contentType, payload, body != nil)
		var ae *apiError
		if errors.As(err, &ae) && ae.Code == http.StatusTooManyRequests && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return err
			case <-time.After(ae.retryAfter):
			}
			continue
		}
		if err != nil || out == nil {
			return err
		}
		if raw, ok := out.(*[]byte); ok {
			*raw = data
			return nil
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return fmt.Errorf("decoding %s %s: %w", method, path, err)
		}
		return nil
	}
}

// once sends one request and returns the body of a 2xx answer.
func (k *kube) once(ctx context.Context, method, path, contentType string, payload []byte, hasBody bool) ([]byte, error) {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	req.Header.Set("Accept", "application/json")
	if hasBody {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := k.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		return data, nil
	}
	ae := &apiError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data), retryAfter: 200 * time.Millisecond}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 && s < 2 {
		ae.retryAfter = time.Duration(s) * time.Second
	}
	var st struct{ Reason, Message string }
	if json.Unmarshal(data, &st) == nil {
		ae.Reason, ae.Message = st.Reason, st.Message
	} else {
		ae.Message = strings.TrimSpace(string(data))
	}
	return nil, ae
}

// obj is a Kubernetes object as generic JSON.
type obj = map[string]any

func (k *kube) get(ctx context.Context, path string) (obj, error) {
	var o obj
	return o, k.do(ctx, http.MethodGet, path, "", nil, &o)
}

func (k *kube) create(ctx context.Context, path string, body any) (obj, error) {
	var o obj
	return o, k.do(ctx, http.MethodPost, path, "", body, &o)
}

// createYAML posts a YAML document; kube-apiserver decodes YAML natively, so
// the suite needs no YAML library.
func (k *kube) createYAML(ctx context.Context, path string, doc []byte) (obj, error) {
	var o obj
	return o, k.do(ctx, http.MethodPost, path, "application/yaml", doc, &o)
}

func (k *kube) put(ctx context.Context, path string, body any) (obj, error) {
	var o obj
	return o, k.do(ctx, http.MethodPut, path, "", body, &o)
}

func (k *kube) mergePatch(ctx context.Context, path string, patch any) (obj, error) {
	var o obj
	return o, k.do(ctx, http.MethodPatch, path, "application/merge-patch+json", patch, &o)
}

// apply is exactly Metacontroller's server-side apply of a child: PATCH
// application/apply-patch+yaml (with a JSON body, which is YAML),
// fieldManager=metacontroller, force=true.
func (k *kube) apply(ctx context.Context, path string, body any) (obj, error) {
	var o obj
	q := url.Values{"fieldManager": {"metacontroller"}, "force": {"true"}}
	return o, k.do(ctx, http.MethodPatch, path+"?"+q.Encode(), "application/apply-patch+yaml", body, &o)
}

// resourcePath maps apiVersion/kind to the REST path of a named object (name
// may be empty for the collection), through the API server's discovery, so a
// kind the server does not serve is an error here rather than a 404 later.
func (k *kube) resourcePath(ctx context.Context, apiVersion, kind, namespace, name string) (string, error) {
	m, err := k.mapping(ctx, apiVersion, kind)
	if err != nil {
		return "", err
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	if m.namespaced {
		if namespace == "" {
			return "", fmt.Errorf("%s %s is namespaced: no namespace given", apiVersion, kind)
		}
		p += "/namespaces/" + namespace
	}
	p += "/" + m.plural
	if name != "" {
		p += "/" + name
	}
	return p, nil
}

// objectPath is resourcePath for an object's own apiVersion, kind and name;
// namespace is used when the kind is namespaced.
func (k *kube) objectPath(ctx context.Context, o obj, namespace string) (string, error) {
	apiVersion, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	name, _ := dig(o, "metadata", "name").(string)
	if apiVersion == "" || kind == "" || name == "" {
		return "", fmt.Errorf("object without apiVersion, kind or metadata.name: %v", o)
	}
	return k.resourcePath(ctx, apiVersion, kind, namespace, name)
}

type restMapping struct {
	plural     string
	namespaced bool
}

var discovery = struct {
	sync.Mutex
	groups map[string]map[string]restMapping // apiVersion → kind → mapping
}{groups: map[string]map[string]restMapping{}}

// mapping reads the discovery document of apiVersion (cached; a miss is
// re-read, since CRDs appear while the suite runs).
func (k *kube) mapping(ctx context.Context, apiVersion, kind string) (restMapping, error) {
	discovery.Lock()
	defer discovery.Unlock()
	if m, ok := discovery.groups[apiVersion][kind]; ok {
		return m, nil
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	var list struct {
		Resources []struct {
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			Namespaced bool   `json:"namespaced"`
		} `json:"resources"`
	}
	if err := k.do(ctx, http.MethodGet, p, "", nil, &list); err != nil {
		return restMapping{}, fmt.Errorf("discovering %s: %w", apiVersion, err)
	}
	kinds := map[string]restMapping{}
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") { // skip subresources
			kinds[r.Kind] = restMapping{plural: r.Name, namespaced: r.Namespaced}
		}
	}
	discovery.groups[apiVersion] = kinds
	m, ok := kinds[kind]
	if !ok {
		return restMapping{}, fmt.Errorf("the API server serves no kind %s in %s", kind, apiVersion)
	}
	return m, nil
}

// dig walks nested maps by key; nil when any step is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// splitYAML splits a multi-document YAML stream on its `---` separators,
// dropping documents that hold only comments or whitespace.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur []string
	flush := func() {
		doc := strings.Join(cur, "\n")
		cur = nil
		for _, line := range strings.Split(doc, "\n") {
			t := strings.TrimSpace(line)
			if t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, []byte(doc+"\n"))
				return
			}
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimRight(line, " \t\r") == "---" || strings.HasPrefix(line, "--- ") {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return docs
}
