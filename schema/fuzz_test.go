package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzValidate decodes any bytes as a Spec, the way the hook does, and
// validates the defaulted result: never a panic; an error is one line (it
// becomes a condition message and an event); and a spec Validate accepts
// holds every invariant the children are built on.
func FuzzValidate(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "sync", "*.request.json"))
	if err != nil || len(paths) == 0 {
		f.Fatalf("no golden requests: %v", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var req struct {
			Parent struct {
				Spec json.RawMessage `json:"spec"`
			} `json:"parent"`
		}
		if err := json.Unmarshal(b, &req); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(req.Parent.Spec))
	}
	for _, s := range []string{
		`{}`, `{"type":"Bogus","image":" "}`, `{"type":"Service","image":"i","replicas":-1}`,
		`{"type":"Service","image":"i","ports":[{"name":"HTTP","port":0},{"name":"HTTP","port":0,"public":true}]}`,
		`{"type":"Service","image":"i","host":"-a-.example.com"}`, `{"type":"Service","image":"i","host":"` + strings.Repeat("a", 300) + `"}`,
		`{"type":"Service","image":"i","storage":{"size":"0","mountPath":"d"}}`, `{"type":"StatefulService","image":"i","storage":{"size":"-1Gi","mountPath":"/d"}}`,
		`{"type":"Service\n","image":"i\u0000"}`, `{"type":"Service","image":"i","ports":[{"name":"a\nb","port":70000}]}`,
		`{"type":"Service","image":"i","errorPages":{"enabled":false}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Spec
		if json.Unmarshal(data, &s) != nil {
			return
		}
		d := Default(s)
		err := Validate(d)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if d.Type != TypeService && d.Type != TypeStatefulService {
			t.Fatalf("accepted type %q", d.Type)
		}
		if strings.TrimSpace(d.Image) == "" || d.Replicas == nil || *d.Replicas < 0 {
			t.Fatalf("accepted image %q replicas %v", d.Image, d.Replicas)
		}
		names, numbers := map[string]bool{}, map[int32]bool{}
		for _, p := range d.Ports {
			if p.Port < 1 || p.Port > 65535 || p.Name == "" || len(p.Name) > 15 || names[p.Name] || numbers[p.Port] {
				t.Fatalf("accepted port %+v among %+v", p, d.Ports)
			}
			names[p.Name], numbers[p.Port] = true, true
		}
		if len(d.PublicPorts()) > 0 && d.Host == "" {
			t.Fatal("accepted a public port without host")
		}
		if d.Host != "" && (len(d.Host) > 253 || strings.ContainsAny(d.Host, "`()& \"")) {
			t.Fatalf("accepted host %q, which would break the IngressRoute rule", d.Host)
		}
		if d.Storage != nil && (d.Type != TypeStatefulService || d.Storage.Size.Sign() <= 0 || !strings.HasPrefix(d.Storage.MountPath, "/")) {
			t.Fatalf("accepted storage %+v for %s", d.Storage, d.Type)
		}
	})
}
