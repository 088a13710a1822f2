//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"
)

// hookServer is where the Metacontroller emulation sends its hook requests:
// one stackdome, or several behind a front.
type hookServer interface {
	post(ctx context.Context, path string, body, out any) error
}

// roundRobin is the chart's Service in front of its replicas: each request
// goes to the next replica in turn.
type roundRobin struct {
	mu      sync.Mutex
	servers []*stackdomeServer
	next    int
}

func (r *roundRobin) post(ctx context.Context, path string, body, out any) error {
	r.mu.Lock()
	s := r.servers[r.next%len(r.servers)]
	r.next++
	r.mu.Unlock()
	return s.post(ctx, path, body, out)
}

// set replaces the replicas behind the front.
func (r *roundRobin) set(servers ...*stackdomeServer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers, r.next = servers, 0
}

// TestReplicasAnswerAlike runs stackdome as the chart does — two `stackdome
// serve` replicas, each with its own verdict cache, behind one round-robin
// front — against live StackResources on a real control plane: the second
// replica's first contact, a restart of the first, and rechecks write no
// status for a healthy resource, and none for a condemned one either (the
// same pods stay condemned, even once their port answers); a rollout
// restart of the condemned, fixed workload reads Available.
func TestReplicasAnswerAlike(t *testing.T) {
	requireStackResourceCRD(t)
	flags := []string{"--port-check-grace", "2s", "--verdict-requeue", "1s", "--dial-allow", "127.0.0.0/8", "--dial-allow-loopback"}
	a := startStackdome(t, flags...)
	b := startStackdome(t, flags...)
	front := &roundRobin{}
	front.set(a) // until every status settles, then both
	mc := &metacontroller{kube: suite.cluster.kube, hook: front}
	ns := newNamespace(t)
	k := suite.cluster.kube

	type app struct {
		name, typ, ip string
		open, dead    []string
		numbers       map[string]int
	}
	apps := []*app{
		{name: "web", typ: "Service", ip: "127.0.0.51", open: []string{"http", "metrics"}},
		{name: "db", typ: "StatefulService", ip: "127.0.0.52", open: []string{"sql"}},
		{name: "api", typ: "Service", ip: "127.0.0.53", open: []string{"http"}, dead: []string{"admin"}},
	}
	for _, ap := range apps {
		ap.numbers = map[string]int{}
		var ports []any
		for _, pn := range ap.open {
			l, err := net.Listen("tcp", net.JoinHostPort(ap.ip, "0"))
			if err != nil {
				t.Fatal(err)
			}
			serve(t, l)
			ap.numbers[pn] = l.Addr().(*net.TCPAddr).Port
			ports = append(ports, obj{"name": pn, "port": ap.numbers[pn]})
		}
		for _, pn := range ap.dead {
			port, err := closedPort(ap.ip)
			if err != nil {
				t.Fatal(err)
			}
			ap.numbers[pn] = port
			ports = append(ports, obj{"name": pn, "port": port})
		}
		if _, err := k.create(t.Context(), "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
			"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": ap.name},
			"spec": obj{"type": ap.typ, "image": "example.invalid/" + ap.name + ":1", "ports": ports},
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := mc.sync(t.Context(), ns, ap.name); err != nil {
			t.Fatalf("%s: first sync: %v", ap.name, err)
		}
	}
	for _, ap := range apps {
		markPodReady(t, ns, waitPods(t, ns, "app.kubernetes.io/instance="+ap.name, 1)[0], ap.ip)
	}

	// syncUntil syncs name through the front until want holds of the answer.
	syncUntil := func(name, what string, want func(obj) bool) obj {
		t.Helper()
		var last obj
		err := waitUntil(40*time.Second, 250*time.Millisecond, name+": "+what, func() (bool, error) {
			res, err := mc.sync(t.Context(), ns, name)
			if err != nil {
				return false, err
			}
			last = res.response
			return want(last), fmt.Errorf("status %s", mustJSON(last["status"]))
		})
		if err != nil {
			t.Fatal(err)
		}
		return last
	}
	serving := func(r obj) bool {
		return conditionReason(r, "Available") == "Serving" && dig(condition(r, "Converged"), "status") == "True"
	}
	condemned := func(r obj) bool {
		return dig(condition(r, "Stalled"), "status") == "True" && conditionReason(r, "Stalled") == "PortNotListening"
	}
	syncUntil("web", "Serving", serving)
	syncUntil("db", "Serving", serving)
	syncUntil("api", "condemned", condemned)

	// quiet syncs every resource rounds times through the front, a requeue
	// apart, and fails on any status write or child update.
	quiet := func(phase string, rounds int) {
		t.Helper()
		for i := range rounds {
			for _, ap := range apps {
				res, err := mc.sync(t.Context(), ns, ap.name)
				if err != nil {
					t.Fatalf("%s: %s: %v", phase, ap.name, err)
				}
				if res.statusWritten {
					t.Errorf("%s, round %d: status of %s written: %s", phase, i, ap.name, mustJSON(res.response["status"]))
				}
				if len(res.childWrites) > 0 {
					t.Errorf("%s, round %d: children of %s updated: %v", phase, i, ap.name, res.childWrites)
				}
			}
			time.Sleep(time.Second) // the requeue: dials land in between
		}
	}
	front.set(a, b)
	quiet("replica b's first contact, then both in turn", 6)

	a.proc.stop(10 * time.Second)
	a2 := startStackdome(t, flags...)
	front.set(a2, b)
	quiet("replica a restarted", 6)

	// The dead port is fixed in place: these pods stay condemned.
	api := apps[2]
	l, err := net.Listen("tcp", net.JoinHostPort(api.ip, strconv.Itoa(api.numbers["admin"])))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, l)
	quiet("the same pods, now answering", 3)

	// kubectl rollout restart deployment/api: a new ReplicaSet, new pods,
	// verified from scratch.
	old := waitPods(t, ns, "app.kubernetes.io/instance=api", 1)[0]
	if _, err := k.mergePatch(t.Context(), "/apis/apps/v1/namespaces/"+ns+"/deployments/api", obj{"spec": obj{"template": obj{"metadata": obj{
		"annotations": obj{"kubectl.kubernetes.io/restartedAt": time.Now().UTC().Format(time.RFC3339)}}}}}); err != nil {
		t.Fatal(err)
	}
	var fresh obj
	if err := waitUntil(30*time.Second, 200*time.Millisecond, "a pod of the restarted ReplicaSet", func() (bool, error) {
		pods, err := listItems(t.Context(), "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/instance=api")
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			if dig(p, "metadata", "labels", "pod-template-hash") != dig(old, "metadata", "labels", "pod-template-hash") {
				fresh = p
				return true, nil
			}
		}
		return false, fmt.Errorf("%d pods, all of the old ReplicaSet", len(pods))
	}); err != nil {
		t.Fatal(err)
	}
	const freshIP = "127.0.0.54"
	for _, pn := range []string{"http", "admin"} {
		l, err := net.Listen("tcp", net.JoinHostPort(freshIP, strconv.Itoa(api.numbers[pn])))
		if err != nil {
			t.Fatal(err)
		}
		serve(t, l)
	}
	markPodReady(t, ns, fresh, freshIP)
	r := syncUntil("api", "Available after the rollout restart", serving)
	if got := dig(r, "status", "portCheck", "revision"); got != dig(fresh, "metadata", "labels", "pod-template-hash") {
		t.Errorf("portCheck.revision %v, want the new ReplicaSet's pod-template-hash %v", got, dig(fresh, "metadata", "labels", "pod-template-hash"))
	}
	quiet("after the rollout restart", 3)
}
