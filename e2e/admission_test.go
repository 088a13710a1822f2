//go:build e2e

package e2e

import (
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// TestAdmission proves the CRD's OpenAPI and CEL rules reject invalid specs at
// admission, with a message naming the field and the rule in words a user
// understands — rather than stackdome finding out at sync time.
func TestAdmission(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	k := suite.cluster.kube
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"

	valid := func() obj {
		return obj{
			"type":  "Service",
			"image": "example.invalid/app:1",
			"ports": []any{obj{"name": "http", "port": 8080}},
		}
	}
	with := func(edits obj) obj {
		s := valid()
		maps.Copy(s, edits)
		for key, v := range edits {
			if v == nil {
				delete(s, key)
			}
		}
		return s
	}
	ports := func(ps ...obj) []any {
		out := make([]any, len(ps))
		for i, p := range ps {
			out[i] = p
		}
		return out
	}

	cases := map[string]struct {
		spec obj
		want []string // fragments of the API server's message; none = accepted
	}{
		"valid spec is accepted": {spec: valid()},
		"duplicate port names": {
			spec: with(obj{"ports": ports(obj{"name": "http", "port": 8080}, obj{"name": "http", "port": 8081})}),
			want: []string{"spec.ports", "port names must be unique"},
		},
		"duplicate port numbers": {
			spec: with(obj{"ports": ports(obj{"name": "http", "port": 8080}, obj{"name": "admin", "port": 8080})}),
			want: []string{"spec.ports", "port numbers must be unique"},
		},
		"port 0": {
			spec: with(obj{"ports": ports(obj{"name": "http", "port": 0})}),
			want: []string{"spec.ports[0].port", "greater than or equal to 1"},
		},
		"port 70000": {
			spec: with(obj{"ports": ports(obj{"name": "http", "port": 70000})}),
			want: []string{"spec.ports[0].port", "less than or equal to 65535"},
		},
		"public port without host": {
			spec: with(obj{"ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
			want: []string{"host is required when a port is public"},
		},
		"storage on type Service": {
			spec: with(obj{"storage": obj{"size": "1Gi", "mountPath": "/data"}}),
			want: []string{"storage is only allowed for type StatefulService"},
		},
		"unknown type": {
			spec: with(obj{"type": "Job"}),
			want: []string{"spec.type", `Unsupported value: "Job"`, `"Service"`, `"StatefulService"`},
		},
		"missing image": {
			spec: with(obj{"image": nil}),
			want: []string{"spec.image", "Required value"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := k.create(t.Context(), path, obj{
				"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
				"metadata": obj{"name": "bad"},
				"spec":     tc.spec,
			})
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("valid spec rejected: %v", err)
				}
				return
			}
			var ae *apiError
			if !errors.As(err, &ae) {
				t.Fatalf("accepted, want rejection mentioning %q (err %v)", tc.want, err)
			}
			if ae.Code != http.StatusUnprocessableEntity || ae.Reason != "Invalid" {
				t.Errorf("rejected with %d %s, want 422 Invalid", ae.Code, ae.Reason)
			}
			for _, frag := range tc.want {
				if !strings.Contains(ae.Message, frag) {
					t.Errorf("message %q lacks %q", ae.Message, frag)
				}
			}
		})
	}
}
