//go:build e2e

package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kube is a deliberately small API-server client: net/http, a bearer token,
// JSON in and out. The e2e suite speaks the wire protocol itself so it proves
// what Metacontroller's requests do, not what a client library smooths over.
type Kube struct {
	Base  string // https://127.0.0.1:<port>
	Token string
	HTTP  *http.Client

	discoveryMu sync.Mutex
	discovery   map[string]map[string]restMapping // apiVersion → kind → mapping
}

func newKube(base, token string, caPEM []byte) (*Kube, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in PEM")
	}
	return &Kube{
		Base:  base,
		Token: token,
		HTTP: &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
				// Never dial anything but the loopback API server.
				Proxy: nil,
			},
		},
	}, nil
}

// APIError is a non-2xx answer, carrying the server's Status message.
type APIError struct {
	Method, Path string
	Code         int
	Reason       string
	Message      string
	Body         string
	retryAfter   time.Duration
}

// Error names the request and the API server's answer.
func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Code, e.Reason, e.Message)
}

// IsCode reports whether err is the API server answering code.
func IsCode(err error, code int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Code == code
}

// Do sends body (bytes sent as is, anything else JSON-encoded) and decodes a
// 2xx JSON answer into out (if non-nil). Numbers decode as json.Number so an
// integer can be told from a float.
func (k *Kube) Do(ctx context.Context, method, path, contentType string, body, out any) error {
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
		var ae *APIError
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
func (k *Kube) once(ctx context.Context, method, path, contentType string, payload []byte, hasBody bool) ([]byte, error) {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, k.Base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+k.Token)
	req.Header.Set("Accept", "application/json")
	if hasBody {
		if contentType == "" {
			contentType = "application/json"
		}
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := k.HTTP.Do(req)
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
	ae := &APIError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data), retryAfter: 200 * time.Millisecond}
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

// Obj is a Kubernetes object as generic JSON.
type Obj = map[string]any

// Get reads the object at path.
func (k *Kube) Get(ctx context.Context, path string) (Obj, error) {
	var o Obj
	return o, k.Do(ctx, http.MethodGet, path, "", nil, &o)
}

// Create posts body to the collection at path and returns what was stored.
func (k *Kube) Create(ctx context.Context, path string, body any) (Obj, error) {
	var o Obj
	return o, k.Do(ctx, http.MethodPost, path, "", body, &o)
}

// CreateYAML posts a YAML document; kube-apiserver decodes YAML natively, so
// the suite needs no YAML library.
func (k *Kube) CreateYAML(ctx context.Context, path string, doc []byte) (Obj, error) {
	var o Obj
	return o, k.Do(ctx, http.MethodPost, path, "application/yaml", doc, &o)
}

// Put replaces the object at path with body.
func (k *Kube) Put(ctx context.Context, path string, body any) (Obj, error) {
	var o Obj
	return o, k.Do(ctx, http.MethodPut, path, "", body, &o)
}

// MergePatch applies a JSON merge patch to the object at path.
func (k *Kube) MergePatch(ctx context.Context, path string, patch any) (Obj, error) {
	var o Obj
	return o, k.Do(ctx, http.MethodPatch, path, "application/merge-patch+json", patch, &o)
}

// Apply is exactly Metacontroller's server-side apply of a child: PATCH
// application/apply-patch+yaml (with a JSON body, which is YAML),
// fieldManager=metacontroller, force=true.
func (k *Kube) Apply(ctx context.Context, path string, body any) (Obj, error) {
	var o Obj
	q := url.Values{"fieldManager": {"metacontroller"}, "force": {"true"}}
	return o, k.Do(ctx, http.MethodPatch, path+"?"+q.Encode(), "application/apply-patch+yaml", body, &o)
}

// List lists a collection, optionally by label selector, sorted by name.
func (k *Kube) List(ctx context.Context, path, selector string) ([]Obj, error) {
	if selector != "" {
		path += "?labelSelector=" + url.QueryEscape(selector)
	}
	l, err := k.Get(ctx, path)
	if err != nil {
		return nil, err
	}
	raw, _ := l["items"].([]any)
	items := make([]Obj, 0, len(raw))
	for _, it := range raw {
		items = append(items, it.(map[string]any))
	}
	sort.Slice(items, func(i, j int) bool {
		return Dig(items[i], "metadata", "name").(string) < Dig(items[j], "metadata", "name").(string)
	})
	return items, nil
}

// Dig walks nested maps by key; nil when any step is missing.
func Dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// SplitYAML splits a multi-document YAML stream on its `---` separators,
// dropping documents that hold only comments or whitespace.
func SplitYAML(data []byte) [][]byte {
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

// SecretData is Secret ns/name's data, decoded.
func (k *Kube) SecretData(ctx context.Context, ns, name string) (map[string][]byte, error) {
	s, err := k.Get(ctx, "/api/v1/namespaces/"+ns+"/secrets/"+name)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	data, _ := Dig(s, "data").(map[string]any)
	for key, v := range data {
		b, err := base64.StdEncoding.DecodeString(fmt.Sprint(v))
		if err != nil {
			return nil, fmt.Errorf("secret %s/%s key %s: %w", ns, name, key, err)
		}
		out[key] = b
	}
	return out, nil
}

// ResourceVersion is o's metadata.resourceVersion as a number.
func ResourceVersion(o Obj) uint64 {
	n, _ := strconv.ParseUint(fmt.Sprint(Dig(o, "metadata", "resourceVersion")), 10, 64)
	return n
}

// DigPath is the value at a dotted path of plain keys (the last may hold dots:
// an annotation or label key), and whether it is there.
func DigPath(o map[string]any, path string) (any, bool) {
	var cur any = o
	parts := strings.Split(path, ".")
	for i := 0; i < len(parts); i++ {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok := m[parts[i]]; ok {
			cur = v
			continue
		}
		if v, ok := m[strings.Join(parts[i:], ".")]; ok { // a key with dots
			return v, true
		}
		return nil, false
	}
	return cur, true
}
