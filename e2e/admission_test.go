//go:build e2e

package e2e

import (
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmission proves the CRD's OpenAPI and CEL rules reject invalid specs at
// admission, with a message naming the field and the rule in words a user
// understands — rather than stackdome finding out at sync time.
func TestAdmission(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ns := f.Namespace
	k := f.Kube
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"

	valid := func() obj { return framework.SpecWith(nil) }
	with := framework.SpecWith
	ports := func(ps ...obj) []any {
		out := make([]any, len(ps))
		for i, p := range ps {
			out[i] = p
		}
		return out
	}

	cases := map[string]framework.AdmissionCase{
		"valid spec is accepted": {Spec: valid()},
		"duplicate port names": {
			Spec: with(obj{"ports": ports(obj{"name": "http", "port": 8080}, obj{"name": "http", "port": 8081})}),
			Want: []string{"spec.ports", "port names must be unique"},
		},
		"duplicate port numbers": {
			Spec: with(obj{"ports": ports(obj{"name": "http", "port": 8080}, obj{"name": "admin", "port": 8080})}),
			Want: []string{"spec.ports", "port numbers must be unique"},
		},
		"port 0": {
			Spec: with(obj{"ports": ports(obj{"name": "http", "port": 0})}),
			Want: []string{"spec.ports[0].port", "greater than or equal to 1"},
		},
		"port 70000": {
			Spec: with(obj{"ports": ports(obj{"name": "http", "port": 70000})}),
			Want: []string{"spec.ports[0].port", "less than or equal to 65535"},
		},
		"public port without host": {
			Spec: with(obj{"ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
			Want: []string{"host is required when a port is public"},
		},
		"storage on type Service": {
			Spec: with(obj{"storage": obj{"size": "1Gi", "mountPath": "/data"}}),
			Want: []string{"storage is only allowed for type StatefulService"},
		},
		"unknown type": {
			Spec: with(obj{"type": "Lambda"}),
			Want: []string{"spec.type", `Unsupported value: "Lambda"`, `"Service"`, `"StatefulService"`},
		},
		"missing image": {
			Spec: with(obj{"image": nil}),
			Want: []string{"spec.image", "Required value"},
		},
		"replicas with autoscaling": {
			Spec: with(obj{"replicas": 2, "autoscaling": obj{"maxReplicas": 4}, "resources": obj{"requests": obj{"cpu": "100m"}}}),
			Want: []string{"replicas and autoscaling cannot be set together"},
		},
		"autoscaling without a cpu request": {
			Spec: with(obj{"autoscaling": obj{"maxReplicas": 4}}),
			Want: []string{"autoscaling needs resources.requests.cpu"},
		},
		"autoscaling min over max": {
			Spec: with(obj{"autoscaling": obj{"minReplicas": 5, "maxReplicas": 4}, "resources": obj{"requests": obj{"cpu": "100m"}}}),
			Want: []string{"autoscaling.minReplicas must not exceed maxReplicas"},
		},
		"hosts without host route a public port": {
			Spec: with(obj{"hosts": []any{"a.example.com", "b.example.com"}, "ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
		},
		"a host twice in hosts": {
			Spec: with(obj{"hosts": []any{"a.example.com", "a.example.com"}, "ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
			Want: []string{"spec.hosts", "hosts must be unique"},
		},
		"hosts repeating host": {
			Spec: with(obj{"host": "a.example.com", "hosts": []any{"a.example.com"}, "ports": ports(obj{"name": "http", "port": 8080, "public": true})}),
			Want: []string{"hosts must not repeat host"},
		},
		"an empty or upper-case host in hosts": {
			Spec: with(obj{"host": "a.example.com", "hosts": []any{"", "B.example.com"}}),
			Want: []string{"spec.hosts[0]", "spec.hosts[1]", "should match"},
		},
		"hosts of the wrong type": {
			Spec: with(obj{"hosts": "a.example.com"}),
			Want: []string{"spec.hosts", "must be of type array"},
		},
		"middlewares on a public port": {
			Spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": "sso"}, obj{"name": "rate-limit"}}}),
		},
		"a middleware twice": {
			Spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": "sso"}, obj{"name": "sso"}}}),
			Want: []string{"spec.middlewares", "middlewares must be unique"},
		},
		"a middleware without a name": {
			Spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": ""}, obj{}}}),
			Want: []string{"spec.middlewares[0].name", "spec.middlewares[1].name", "Required value"},
		},
		"a middleware name that is not a DNS name": {
			Spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "middlewares": []any{obj{"name": "sso@kubernetescrd"}}}),
			Want: []string{"spec.middlewares[0].name", "should match"},
		},
		"middlewares without a public port": {
			Spec: with(obj{"middlewares": []any{obj{"name": "sso"}}}),
			Want: []string{"middlewares need a public port"},
		},
		"middlewares of the wrong type": {
			Spec: with(obj{"middlewares": []any{"sso"}}),
			Want: []string{"spec.middlewares[0]", "must be of type object"},
		},
		"tls with secretName and certResolver": {
			Spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true}), "tls": obj{"secretName": "s", "certResolver": "le"}}),
			Want: []string{"tls takes secretName or certResolver, not both"},
		},
		"tls without a public port": {
			Spec: with(obj{"tls": obj{"certResolver": "le"}}),
			Want: []string{"tls needs a public port"},
		},
		"a path not starting with /": {
			Spec: with(obj{"host": "a.example.com", "ports": ports(obj{"name": "http", "port": 8080, "public": true, "path": "api"})}),
			Want: []string{"spec.ports[0].path", "should match"},
		},
		"a file with configMap and secret": {
			Spec: with(obj{"files": []any{obj{"name": "f", "mountPath": "/etc/f", "configMap": obj{"name": "c"}, "secret": obj{"secretName": "s"}}}}),
			Want: []string{"a file takes exactly one of configMap and secret"},
		},
		"two files at one path": {
			Spec: with(obj{"files": []any{obj{"name": "a", "mountPath": "/etc/f", "configMap": obj{"name": "c"}}, obj{"name": "b", "mountPath": "/etc/f", "secret": obj{"secretName": "s"}}}}),
			Want: []string{"file mountPaths must be unique"},
		},
		"a pod label stackdome selects by": {
			Spec: with(obj{"podLabels": obj{"app.kubernetes.io/instance": "other"}}),
			Want: []string{"spec.podLabels[app.kubernetes.io/instance]", "podLabels cannot set app.kubernetes.io/instance"},
		},
		"the revision annotation": {
			Spec: with(obj{"podAnnotations": obj{"stackdome.io/revision": "x"}}),
			Want: []string{"podAnnotations cannot set stackdome.io/revision"},
		},
	}
	f.TryAdmission(path, cases)
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
			framework.CheckRefusal(t, err, []string{"spec.middlewares cannot name <name>-errors, <name>-strip or <name>-https"})
		})
	}
	for name, want := range names {
		t.Run("name "+name, func(t *testing.T) {
			_, err := k.Create(t.Context(), path, obj{
				"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
				"metadata": obj{"name": name}, "spec": valid(),
			})
			framework.CheckRefusal(t, err, want)
		})
	}
}
