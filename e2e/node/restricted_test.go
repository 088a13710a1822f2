//go:build e2e

package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestRestrictedPodsRun proves what e2e's TestRestrictedNamespaceAdmitsPods
// can only admit: in a namespace enforcing Pod Security restricted, the
// pods of every workload shape stackdome makes run on the real kubelet,
// containerd and runc with the restricted profile's security context
// (non-root: the image's uid 65532, seccomp RuntimeDefault, no privilege
// escalation, every capability dropped): a Service, a StatefulService with storage, a Job, a
// CronJob, an app with a sidecar, an app with a migration. Each reaches its
// own end: Available=True Serving (the app and the sidecar ports dialed
// open), or Complete for the Job and the CronJob's run, whose portapp exits
// 0 when the test asks it to (POST /exit on its control port): it ran.
//
// Storage: a PersistentVolume made by the test beforehand, hostPath under
// the run's scratch directory, of class node-local, which the
// StatefulService's claim names; no provisioner runs.
//
// It bites: with the chart's config.podSecurityDefaults=false the pods
// lack the restricted security context, the namespace refuses them, and
// nothing reaches Serving.
func TestRestrictedPodsRun(t *testing.T) {
	f := framework.NewNodeFixture(t)
	f.InstallChart()
	ns := f.Namespace(map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	})
	t.Cleanup(func() { f.DescribePods(ns) })
	f.MakePV("restricted-"+ns, "1Gi")

	control := []string{"--control", "8079"}
	http8080 := obj{"name": "http", "port": 8080}
	service := framework.PortApp(framework.PortArgs("8080"), http8080)
	stateful := framework.PortApp(framework.PortArgs("8080"), http8080)
	stateful["type"] = "StatefulService"
	stateful["storage"] = obj{"size": "1Gi", "mountPath": "/data", "storageClassName": framework.PVClass}
	job := obj{"type": "Job", "image": framework.ImagePortApp, "args": framework.ToAny(control), "job": obj{"backoffLimit": 0}}
	cron := obj{"type": "CronJob", "image": framework.ImagePortApp, "args": framework.ToAny(control),
		"cronJob": obj{"schedule": "* * * * *", "concurrencyPolicy": "Forbid"}, "job": obj{"backoffLimit": 0}}
	sidecar := framework.PortApp(framework.PortArgs("8080"), http8080, obj{"name": "proxy", "port": 9000, "container": "proxy"})
	sidecar["sidecars"] = []any{obj{"name": "proxy", "image": framework.ImagePortApp, "args": framework.ToAny(framework.PortArgs("9000"))}}
	migration := framework.PortApp(framework.PortArgs("8080"), http8080)
	migration["migration"] = obj{"args": framework.ToAny(control)}

	for name, spec := range map[string]obj{"web": service, "db": stateful, "once": job, "nightly": cron, "proxied": sidecar, "migrated": migration} {
		f.CreateApp(ns, name, spec)
	}
	// The migration's init container waits for its exit; the app's
	// container starts after it.
	exitPod(t, ns, "migrated", 2*time.Minute)
	exitPod(t, ns, "once", 2*time.Minute)
	for _, name := range []string{"web", "db", "proxied", "migrated"} {
		f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	}
	f.WaitCondition(time.Minute, ns, "once", "Available", "True", "Complete")

	// The CronJob's first run starts within a minute of its creation.
	exitPod(t, ns, "nightly", 3*time.Minute)
	f.WaitFor(2*time.Minute, "the CronJob's run succeeded", func() (bool, error) {
		sr, err := f.Kube.Get(t.Context(), framework.SRPath(ns, "nightly"))
		if err != nil {
			return false, err
		}
		ok := framework.Dig(sr, "status", "run", "lastSucceeded") != nil
		return ok, fmt.Errorf("status.run %v", framework.Dig(sr, "status", "run"))
	})

	// Every pod of the namespace ran under the restricted profile's
	// security context: non-root, RuntimeDefault, no escalation, no
	// capability.
	pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		name := framework.Dig(p, "metadata", "name")
		if framework.Dig(p, "spec", "securityContext", "runAsNonRoot") != true ||
			framework.Dig(p, "spec", "securityContext", "seccompProfile", "type") != "RuntimeDefault" {
			t.Errorf("pod %s: securityContext %v", name, framework.Dig(p, "spec", "securityContext"))
		}
		cs := append(framework.ToSlice(framework.Dig(p, "spec", "initContainers")), framework.ToSlice(framework.Dig(p, "spec", "containers"))...)
		for _, c := range cs {
			sc := framework.Dig(c, "securityContext")
			if framework.Dig(sc, "allowPrivilegeEscalation") != false ||
				fmt.Sprint(framework.Dig(sc, "capabilities", "drop")) != "[ALL]" {
				t.Errorf("pod %s container %v: securityContext %v", name, framework.Dig(c, "name"), sc)
			}
		}
		switch phase := framework.Dig(p, "status", "phase"); phase {
		case "Running", "Succeeded":
		default:
			t.Errorf("pod %s is %v", name, phase)
		}
	}
}

// exitPod waits for a pod of app in ns with an address and POSTs /exit to
// its portapp's control port (8079) from the node: portapp exits 0.
func exitPod(t *testing.T, ns, app string, timeout time.Duration) {
	f := framework.NewNodeFixture(t)
	t.Helper()
	f.ExitPodOf(ns, "app.kubernetes.io/instance="+app, timeout)
}
