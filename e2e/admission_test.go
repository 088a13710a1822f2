//go:build e2e

package e2e

import (
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmission proves the CRD's OpenAPI and CEL rules reject invalid specs at
// admission, with a message naming the field and the rule in words a user
// understands — rather than stackdome finding out at sync time.
func TestAdmission(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	k := suite.cluster.Kube
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"

	valid := func() obj { return specWith(nil) }
	with := specWith
	ports := func(ps ...obj) []any {
		out := make([]any, len(ps))
		for i, p := range ps {
			out[i] = p
		}
		return out
	}

	cases := map[string]admissionCase{
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
			spec: with(obj{"type": "Lambda"}),
			want: []string{"spec.type", `Unsupported value: "Lambda"`, `"Service"`, `"StatefulService"`},
		},
		"missing image": {
			spec: with(obj{"image": nil}),
			want: []string{"spec.image", "Required value"},
		},
		"replicas with autoscaling": {
			spec: with(obj{"replicas": 2, "autoscaling": obj{"maxReplicas": 4}, "resources": obj{"requests": obj{"cpu": "100m"}}}),
			want: []string{"replicas and autoscaling cannot be set together"},
		},
		"autoscaling without a cpu request": {
			spec: with(obj{"autoscaling": obj{"maxReplicas": 4}}),
			want: []string{"autoscaling needs resources.requests.cpu"},
		},
		"autoscaling min over max": {
			spec: with(obj{"autoscaling": obj{"minReplicas": 5, "maxReplicas": 4}, "resources": obj{"requests": obj{"cpu": "100m"}}}),
			want: []string{"autoscaling.minReplicas must not exceed maxReplicas"},
		},
		"hosts without host route a public port": {
			spec: with(obj{"hosts": []any{"a.example.com", "b.example.com"}, "ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
		},
		"a host twice in hosts": {
			spec: with(obj{"hosts": []any{"a.example.com", "a.example.com"}, "ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
			want: []string{"spec.hosts", "hosts must be unique"},
		},
		"hosts repeating host": {
			spec: with(obj{"host": "a.example.com", "hosts": []any{"a.example.com"}, "ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
			want: []string{"hosts must not repeat host"},
		},
		"an empty or upper-case host in hosts": {
			spec: with(obj{"host": "a.example.com", "hosts": []any{"", "B.example.com"}}),
			want: []string{"spec.hosts[0]", "spec.hosts[1]", "should match"},
		},
		"hosts of the wrong type": {
			spec: with(obj{"hosts": "a.example.com"}),
			want: []string{"spec.hosts", "must be of type array"},
		},
		"middlewares on a public port": {
			spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": "sso"}, obj{"name": "rate-limit"}}}),
		},
		"a middleware twice": {
			spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": "sso"}, obj{"name": "sso"}}}),
			want: []string{"spec.middlewares", "middlewares must be unique"},
		},
		"a middleware without a name": {
			spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": ""}, obj{}}}),
			want: []string{"spec.middlewares[0].name", "spec.middlewares[1].name", "Required value"},
		},
		"a middleware name that is not a DNS name": {
			spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": "sso@kubernetescrd"}}}),
			want: []string{"spec.middlewares[0].name", "should match"},
		},
		"middlewares without a public port": {
			spec: with(obj{"middlewares": []any{obj{"name": "sso"}}}),
			want: []string{"middlewares need a public port"},
		},
		"middlewares of the wrong type": {
			spec: with(obj{"middlewares": []any{"sso"}}),
			want: []string{"spec.middlewares[0]", "must be of type object"},
		},
		"tls with secretName and certResolver": {
			spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "tls": obj{"secretName": "s", "certResolver": "le"}}),
			want: []string{"tls takes secretName or certResolver, not both"},
		},
		"tls without a public port": {
			spec: with(obj{"tls": obj{"certResolver": "le"}}),
			want: []string{"tls needs a public port"},
		},
		"a path not starting with /": {
			spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true, "path": "api"})}),
			want: []string{"spec.ports[0].path", "should match"},
		},
		"a file with configMap and secret": {
			spec: with(obj{"files": []any{obj{"name": "f", "mountPath": "/etc/f", "configMap": obj{"name": "c"}, "secret": obj{"secretName": "s"}}}}),
			want: []string{"a file takes exactly one of configMap and secret"},
		},
		"two files at one path": {
			spec: with(obj{"files": []any{obj{"name": "a", "mountPath": "/etc/f", "configMap": obj{"name": "c"}}, obj{"name": "b", "mountPath": "/etc/f", "secret": obj{"secretName": "s"}}}}),
			want: []string{"file mountPaths must be unique"},
		},
		"a pod label stackdome selects by": {
			spec: with(obj{"podLabels": obj{"app.kubernetes.io/instance": "other"}}),
			want: []string{"spec.podLabels[app.kubernetes.io/instance]", "podLabels cannot set app.kubernetes.io/instance"},
		},
		"the revision annotation": {
			spec: with(obj{"podAnnotations": obj{"stackdome.io/revision": "x"}}),
			want: []string{"podAnnotations cannot set stackdome.io/revision"},
		},
	}
	tryAdmission(t, path, cases)
	names := map[string][]string{
		"shop":                  nil,
		"my.app":                {"metadata.name must be a DNS label of at most 51 characters"},
		"9lives":                {"metadata.name must be a DNS label"},
		strings.Repeat("a", 52): {"at most 51 characters"},
		"db-headless":           {"metadata.name cannot end in -headless, -error-pages or -redirect"},
		"shop-error-pages":      {"metadata.name cannot end in"},
		"shop-redirect":         {"metadata.name cannot end in"},
		"headless-" + "db":      nil,
		strings.Repeat("a", 51): nil,
	}
	// A Middleware of the spec named like one stackdome makes for the
	// resource would be stackdome's own child.
	for _, own := range []string{"shop-errors", "shop-strip", "shop-https"} {
		t.Run("middleware "+own+" of StackResource shop", func(t *testing.T) {
			spec := with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": own}}})
			_, err := k.Create(t.Context(), path, obj{"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": "shop"}, "spec": spec})
			checkRefusal(t, err, []string{"spec.middlewares cannot name <name>-errors, <name>-strip or <name>-https"})
		})
	}
	for name, want := range names {
		t.Run("name "+name, func(t *testing.T) {
			_, err := k.Create(t.Context(), path, obj{
				"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
				"metadata": obj{"name": name}, "spec": valid(),
			})
			checkRefusal(t, err, want)
		})
	}
}

// checkRefusal fails unless err is the API server's 422 Invalid whose message
// holds every fragment of want, or, with want empty, unless err is nil.
// admissionCase is a spec tried at admission and fragments of the API
// server's message refusing it; none: it is admitted.
type admissionCase struct {
	spec obj
	want []string
}

// specWith is a valid spec (a Service of one port) with edits over it; an
// edit to nil removes the field.
func specWith(edits obj) obj {
	s := obj{"type": "Service", "image": "example.invalid/app:1", "ports": []any{obj{"name": "http", "port": 8080}}}
	maps.Copy(s, edits)
	for key, v := range edits {
		if v == nil {
			delete(s, key)
		}
	}
	return s
}

// tryAdmission creates, at the collection path (a dry run), a StackResource
// "bad" of each case's spec, and checks the refusal or admission it wants.
func tryAdmission(t *testing.T, path string, cases map[string]admissionCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := suite.cluster.Kube.Create(t.Context(), path, obj{
				"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
				"metadata": obj{"name": "bad"}, "spec": tc.spec,
			})
			checkRefusal(t, err, tc.want)
		})
	}
}

func checkRefusal(t *testing.T, err error, want []string) {
	t.Helper()
	{
		{
			if len(want) == 0 {
				if err != nil {
					t.Fatalf("valid object rejected: %v", err)
				}
				return
			}
			var ae *framework.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("accepted, want rejection mentioning %q (err %v)", want, err)
			}
			if ae.Code != http.StatusUnprocessableEntity || ae.Reason != "Invalid" {
				t.Errorf("rejected with %d %s, want 422 Invalid", ae.Code, ae.Reason)
			}
			for _, frag := range want {
				if !strings.Contains(ae.Message, frag) {
					t.Errorf("message %q lacks %q", ae.Message, frag)
				}
			}
		}
	}
}
