package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/robfig/cron/v3"
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
		`{"type":"Service","image":"i","replicas":2,"autoscaling":{"maxReplicas":3}}`, `{"type":"Service","image":"i","autoscaling":{"minReplicas":5,"maxReplicas":3}}`,
		`{"type":"Service","image":"i","autoscaling":{"maxReplicas":3},"resources":{"requests":{"cpu":"0"}}}`,
		`{"type":"Service","image":"i","files":[{"name":"a","mountPath":"/a","configMap":{"name":"c"},"secret":{"secretName":"s"}},{"name":"a","mountPath":"a"}]}`,
		`{"type":"Service","image":"i","podLabels":{"app.kubernetes.io/instance":"x","Bad Key":"v"},"podAnnotations":{"stackdome.io/revision":"x"}}`,
		`{"type":"Service","image":"i","tls":{"secretName":"s","certResolver":"r"}}`, `{"type":"Service","image":"i","host":"h","ports":[{"name":"a","port":1,"public":true},{"name":"b","port":2,"public":true,"path":"/a"}]}`,
		`{"type":"Service","image":"i","tolerations":[{"operator":"Bogus","effect":"Never"}],"topologySpreadConstraints":[{"maxSkew":0,"whenUnsatisfiable":"Maybe"}]}`,
		`{"type":"Service","image":"i","serviceAccountName":"Not_Valid","imagePullSecrets":[{"name":""}],"nodeSelector":{"k":"bad value"}}`,
		// #20: scratch, shm and the migration, each wrong.
		`{"type":"Service","image":"i","scratch":[{"name":"tmp","mountPath":"/tmp","sizeLimit":"64Mi"},{"name":"tmp","mountPath":"/tmp","sizeLimit":"0"}]}`,
		`{"type":"Service","image":"i","scratch":[{"name":"","mountPath":"tmp","sizeLimit":"-1"},{"name":"Bad_Name","mountPath":"/dev/shm","sizeLimit":"1Gi"}]}`,
		`{"type":"Service","image":"i","scratch":[{"name":"a","mountPath":"/etc/f","sizeLimit":"1Mi"}],"files":[{"name":"f","mountPath":"/etc/f","configMap":{"name":"c"}}]}`,
		`{"type":"StatefulService","image":"i","shm":{"sizeLimit":"0"},"storage":{"size":"1Gi","mountPath":"/dev/shm"}}`,
		`{"type":"Service","image":"i","scratch":{"name":"tmp"},"shm":[],"migration":"migrate"}`,
		`{"type":"Service","image":"i","migration":{}}`, `{"type":"Service","image":"i","migration":{"command":[],"args":[]}}`,
		`{"type":"Service","image":"i","ports":[{"name":"a","port":1}],"terminationGracePeriodSeconds":5}`, `{"type":"Service","image":"i","drainSeconds":-1,"terminationGracePeriodSeconds":0}`,
		`{"type":"Service","image":"i","drainSeconds":"5","terminationGracePeriodSeconds":1e9}`, `{"type":"Service","image":"i","drainSeconds":301}`,
		// #20: hosts and the team's Middlewares, each wrong.
		`{"type":"Service","image":"i","hosts":["a.example.com","a.example.com",""],"ports":[{"name":"a","port":1,"public":true}]}`,
		`{"type":"Service","image":"i","host":"a.example.com","hosts":["a.example.com","b) || Host(` + "`x`" + `"],"ports":[{"name":"a","port":1,"public":true}]}`,
		`{"type":"Service","image":"i","hosts":"a.example.com"}`, `{"type":"Service","image":"i","hosts":[1]}`,
		`{"type":"Service","image":"i","host":"h","ports":[{"name":"a","port":1,"public":true}],"middlewares":[{"name":"auth"},{"name":"auth"},{"name":""},{"name":"A@b"}]}`,
		`{"type":"Service","image":"i","middlewares":[{"name":"auth"}]}`, `{"type":"Service","image":"i","middlewares":{"name":"auth"}}`, `{"type":"Service","image":"i","middlewares":["auth"]}`,
		// #20: config follows, each wrong.
		`{"type":"Service","image":"i","envFrom":[{"configMapRef":{"name":""},"rollOnChange":"no"},{"configMapRef":{"name":"a"},"secretRef":{"name":"a"}},{"rollOnChange":false}]}`,
		`{"type":"Service","image":"i","env":[{"name":"A","value":"x","rollOnChange":false},{"name":"B","valueFrom":{"secretKeyRef":{"name":"Bad_Name","key":""}}}]}`,
		`{"type":"Service","image":"i","files":[{"name":"a","mountPath":"/a","configMap":{"name":"c"},"rollOnChange":1}],"envFrom":[{"configMapRef":{"name":"c"},"rollOnChange":true},{"configMapRef":{"name":"c"},"rollOnChange":false}]}`,
		`{"type":"Service","image":"i","envFrom":{"configMapRef":{"name":"c"}}}`, `{"type":"Service","image":"i","podAnnotations":{"stackdome.io/config-digest":"x"}}`,
		`{"type":"Service","image":"i","env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"c","key":"k","optional":true}},"rollOnChange":false}]}`,
		// Sidecars, Jobs and CronJobs, each wrong.
		`{"type":"Service","image":"i","ports":[{"name":"a","port":1,"container":"proxy"}],"sidecars":[{"name":"app","image":"x"},{"name":"p","image":" "},{"name":"p","image":"y","files":["nope"]}]}`,
		`{"type":"Job","image":"i","ports":[{"name":"a","port":1}],"host":"h","cronJob":{"schedule":"0 3 * * *"}}`,
		`{"type":"CronJob","image":"i","cronJob":{"schedule":"61 * * * *","timeZone":"Mars/Olympus","concurrencyPolicy":"Sometimes"}}`,
		`{"type":"CronJob","image":"i","cronJob":{"schedule":"TZ=UTC 0 3 * * *"}}`, `{"type":"CronJob","image":"i"}`,
		`{"type":"Service","image":"i","job":{"backoffLimit":-1}}`,
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
		switch d.Type {
		case TypeService, TypeStatefulService:
			if d.Job != nil || d.CronJob != nil {
				t.Fatalf("accepted job %+v or cronJob %+v for %s", d.Job, d.CronJob, d.Type)
			}
		case TypeJob, TypeCronJob:
			if len(d.Ports) > 0 || d.Host != "" || len(d.Hosts) > 0 || d.TLS != nil || len(d.Middlewares) > 0 || d.Autoscaling != nil || d.DrainSeconds != nil {
				t.Fatalf("accepted a port-only field for %s: %s", d.Type, data)
			}
			if (d.Type == TypeCronJob) != (d.CronJob != nil) {
				t.Fatalf("accepted cronJob %+v for %s", d.CronJob, d.Type)
			}
			if c := d.CronJob; c != nil {
				if _, err := cron.ParseStandard(c.Schedule); err != nil || strings.Contains(c.Schedule, "TZ") {
					t.Fatalf("accepted schedule %q the CronJob controller cannot take (%v)", c.Schedule, err)
				}
			}
		default:
			t.Fatalf("accepted type %q", d.Type)
		}
		containers := map[string]bool{ContainerName: true}
		for _, c := range d.Sidecars {
			if c.Name == ContainerName || c.Name == MigrationContainerName || containers[c.Name] || c.Name == "" || len(c.Name) > 63 || strings.TrimSpace(c.Image) == "" {
				t.Fatalf("accepted sidecar %+v among %+v", c, d.Sidecars)
			}
			containers[c.Name] = true
		}
		for _, p := range d.Ports {
			if p.Container != "" && !containers[p.Container] {
				t.Fatalf("accepted port %+v of no container", p)
			}
		}
		if strings.TrimSpace(d.Image) == "" || (d.Replicas == nil) == (d.Autoscaling == nil) || (d.Replicas != nil && *d.Replicas < 0) {
			t.Fatalf("accepted image %q replicas %v autoscaling %+v", d.Image, d.Replicas, d.Autoscaling)
		}
		if a := d.Autoscaling; a != nil && (a.MinReplicas == nil || *a.MinReplicas < 1 || a.MaxReplicas < *a.MinReplicas ||
			a.TargetCPUUtilizationPercentage == nil || *a.TargetCPUUtilizationPercentage < 1 || d.Resources == nil || d.Resources.Requests.Cpu().IsZero()) {
			t.Fatalf("accepted autoscaling %+v with resources %+v", a, d.Resources)
		}
		for i, f := range d.Files {
			if (f.ConfigMap == nil) == (f.Secret == nil) || !strings.HasPrefix(f.MountPath, "/") {
				t.Fatalf("accepted file %d %+v", i, f)
			}
		}
		for k := range d.PodLabels {
			if slices.Contains(reservedPodLabels, k) {
				t.Fatalf("accepted pod label %q", k)
			}
		}
		names, numbers := map[string]bool{}, map[int32]bool{}
		for _, p := range d.Ports {
			if p.Port < 1 || p.Port > 65535 || p.Name == "" || len(p.Name) > 15 || names[p.Name] || numbers[p.Port] {
				t.Fatalf("accepted port %+v among %+v", p, d.Ports)
			}
			names[p.Name], numbers[p.Port] = true, true
		}
		if len(d.PublicPorts()) > 0 && len(d.RouteHosts()) == 0 {
			t.Fatal("accepted a public port without host")
		}
		seen := map[string]bool{}
		for _, h := range d.RouteHosts() {
			if h == "" || seen[h] || len(h) > 253 || strings.ContainsAny(h, "`()&| \"") {
				t.Fatalf("accepted host %q among %q, which would break the IngressRoute rule", h, d.RouteHosts())
			}
			seen[h] = true
		}
		mws := map[string]bool{}
		for _, m := range d.Middlewares {
			if m.Name == "" || mws[m.Name] || len(m.Name) > 253 || strings.ContainsAny(m.Name, "@/ `\"") || len(d.PublicPorts()) == 0 {
				t.Fatalf("accepted middleware %q among %+v", m.Name, d.Middlewares)
			}
			mws[m.Name] = true
		}
		mounts := map[string]bool{}
		for _, f := range d.Files {
			mounts[f.MountPath] = true
		}
		for i, v := range d.Scratch {
			if mounts[v.MountPath] || v.MountPath == ShmMountPath || !strings.HasPrefix(v.MountPath, "/") || v.SizeLimit.Sign() <= 0 ||
				(d.Storage != nil && d.Storage.MountPath == v.MountPath) || len("scratch-"+v.Name) > 63 || v.Name == "" {
				t.Fatalf("accepted scratch %d %+v among files %+v", i, v, d.Files)
			}
			mounts[v.MountPath] = true
		}
		if d.Shm != nil && (d.Shm.SizeLimit.Sign() <= 0 || mounts[ShmMountPath] || (d.Storage != nil && d.Storage.MountPath == ShmMountPath)) {
			t.Fatalf("accepted shm %+v", d.Shm)
		}
		if int64(d.Drain()) >= d.GracePeriod() || d.Drain() < 0 {
			t.Fatalf("accepted drain %d in a grace period of %d", d.Drain(), d.GracePeriod())
		}
		if m := d.Migration; m != nil && len(m.Command) == 0 && len(m.Args) == 0 {
			t.Fatal("accepted a migration that runs the app's own entrypoint")
		}
		if d.Storage != nil && (d.Type != TypeStatefulService || d.Storage.Size.Sign() <= 0 || !strings.HasPrefix(d.Storage.MountPath, "/")) {
			t.Fatalf("accepted storage %+v for %s", d.Storage, d.Type)
		}
	})
}
