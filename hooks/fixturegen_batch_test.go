package hooks

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// backfill is a type Job's spec; nightly a type CronJob's.
const (
	backfill = `{"type":"Job","image":"ghcr.io/acme/backfill:2.1","args":["--since","2026-01-01"],
		"job":{"backoffLimit":2,"activeDeadlineSeconds":3600},"envFrom":[{"secretRef":{"name":"warehouse-db"}}]}`
	nightly = `{"type":"CronJob","image":"ghcr.io/acme/reports:3.2","args":["nightly"],
		"cronJob":{"schedule":"0 3 * * *","timeZone":"Europe/Berlin","concurrencyPolicy":"Forbid","startingDeadlineSeconds":600,
		"successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":2%s},
		"job":{"backoffLimit":1,"activeDeadlineSeconds":1800},"resources":{"requests":{"cpu":"250m","memory":"256Mi"}}}`
)

func exit(code int32) *int32 { return &code }

// batch: sidecars, type Job and type CronJob (after every other case, so
// that no other case's uids move).
func (g *fixtureGen) batch(c map[string]fixture) {
	g.sidecars(c)
	g.jobs(c)
	g.cronJobs(c)
}

func (g *fixtureGen) sidecars(c map[string]fixture) {
	// 41. Sidecars: oauth2-proxy in front of the app holds the public port
	// (spec.ports[].container), cloud-sql-proxy serves the database locally and
	// starts before the migration; both are native sidecars. Serving.
	p, k := g.newParent("orders", "shop", `{"type":"Service","image":"ghcr.io/acme/orders:4.0","host":"orders.example.com",
		"ports":[{"name":"http","port":8080},{"name":"proxy","port":4180,"public":true,"container":"oauth2-proxy"}],
		"migration":{"command":["/app/orders"],"args":["migrate"]},
		"files":[{"name":"sql","mountPath":"/etc/sql","secret":{"secretName":"orders-sql"}}],
		"sidecars":[
		{"name":"cloud-sql-proxy","image":"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1",
		"args":["--port=5432","acme:europe-west1:orders"],"files":["sql"],"resources":{"requests":{"cpu":"50m","memory":"64Mi"}}},
		{"name":"oauth2-proxy","image":"quay.io/oauth2-proxy/oauth2-proxy:v7.7.1",
		"args":["--http-address=0.0.0.0:4180","--upstream=http://127.0.0.1:8080"],
		"envFrom":[{"secretRef":{"name":"oauth2-proxy"}}],"healthChecks":{"readiness":{"httpGet":{"path":"/ping","port":4180}}}}]}`)
	f, d := g.running(p, k, running1)
	dep := d["Deployment/orders"]
	f.pods = podObjects(pod("orders-"+templateHash(revisionOf(dep))+"-s1d3c", p, dep, "127.0.0.245", k, podOpts{}))
	c["sidecars"] = f.converged()

	// 42. A sidecar crash-loops (its exit 1, restarted by the kubelet: restartPolicy
	// Always) while the app runs: CrashLooping names the sidecar.
	p, k = g.newParent("vault-app", "secure", `{"type":"Service","image":"ghcr.io/acme/vault-app:1.0","ports":[{"name":"http","port":8080}],
		"sidecars":[{"name":"vault-agent","image":"hashicorp/vault:1.18","args":["agent","-config=/etc/vault/agent.hcl"]}]}`)
	f, d = g.running(p, k, crashing1)
	dep = d["Deployment/vault-app"]
	name := "vault-app-" + templateHash(revisionOf(dep)) + "-v4ult"
	sp := pod(name, p, dep, "127.0.0.246", k, podOpts{notReady: true})
	sp.Status.InitContainerStatuses = []corev1.ContainerStatus{*crashed("vault-agent", "hashicorp/vault:1.18",
		"back-off 1m20s restarting failed container=vault-agent pod="+name+"_secure", 4, 1, "Error",
		"2026-11-29T11:58:01Z", "2026-11-29T11:58:02Z", "containerd://7a11")}
	f.pods = podObjects(sp)
	c["sidecar-crash-looping"] = f.converged()
}

func (g *fixtureGen) jobs(c map[string]fixture) {
	// 43. type Job, first sync: the Job <name>-<revision> is created.
	p, _ := g.newParent("backfill", "data", backfill)
	c["job-created"] = fixture{g: g, parent: p}.converged()

	// 44. type Job, complete: the Job is kept as it is (returned unchanged), never rerun.
	p, k := g.newParent("backfill", "data", backfill)
	objs := observeAll(p, fixture{g: g, parent: p}.desired(), k, jobStatus("Complete", jobStart, jobEnd, 0), "Job")
	job := findKind(g.t, objs, "Job")
	c["job-complete"] = fixture{g: g, parent: p, children: objs,
		pods: podObjects(jobPod(mcrequest.Name(job)+"-x7k2p", p, job, k, exit(0), ""))}.converged()

	// 45. type Job, failed: backoffLimit reached; status names the Job, the reason and the
	// pod's exit code; Stalled until the spec changes.
	p, k = g.newParent("backfill", "data", backfill)
	objs = observeAll(p, fixture{g: g, parent: p}.desired(), k, jobStatus("Failed", jobStart, jobEnd, 3), "Job")
	job = findKind(g.t, objs, "Job")
	jn := mcrequest.Name(job)
	c["job-failed"] = fixture{g: g, parent: p, children: objs, pods: podObjects(jobPod(jn+"-a1b2c", p, job, k, exit(3), ""),
		jobPod(jn+"-d3e4f", p, job, k+1, exit(3), ""), jobPod(jn+"-g5h6i", p, job, k+2, exit(3), "2026-11-29T11:30:40Z"))}.converged()

	// 46. type Job with ports slipped past admission (a CRD without the rule): InvalidSpec,
	// the Job kept as last applied.
	p, k = g.newParent("backfill", "data", backfill)
	objs = observeAll(p, fixture{g: g, parent: p}.desired(), k, jobStatus("Running", jobStart, jobEnd, 0), "Job")
	c["invalid-spec-job-ports"] = fixture{g: g, parent: p, children: objs}.converged().withSpec(func(s map[string]any) {
		s["ports"] = []any{map[string]any{"name": "http", "port": 8080}}
	}).converged()
}

func (g *fixtureGen) cronJobs(c map[string]fixture) {
	// 47. type CronJob, the CronJob made, no run yet: Available NotYetRun.
	p, k := g.newParent("nightly-report", "finance", fmt.Sprintf(nightly, ""))
	c["cronjob-not-yet-run"] = fixture{g: g, parent: p,
		children: observeAll(p, fixture{g: g, parent: p}.desired(), k, map[string]any{}, "CronJob")}.converged()

	// 48. type CronJob, the last finished run failed (exit 2): Available False names the Job
	// and the crash of its pod; the run before succeeded.
	p, k = g.newParent("nightly-report", "finance", fmt.Sprintf(nightly, ""))
	objs := observeAll(p, fixture{g: g, parent: p}.desired(), k,
		map[string]any{"lastScheduleTime": "2026-11-29T02:00:00Z", "lastSuccessfulTime": "2026-11-28T02:01:40Z"}, "CronJob")
	cron := findKind(g.t, objs, "CronJob")
	ok := cronJobRun(p, cron, "nightly-report-29405940", k, "Complete", "2026-11-28T02:00:00Z", "2026-11-28T02:01:40Z", 0)
	bad := cronJobRun(p, cron, "nightly-report-29407380", k+1, "Failed", "2026-11-29T02:00:00Z", "2026-11-29T02:03:12Z", 2)
	c["cronjob-last-run-failed"] = fixture{g: g, parent: p, children: objs, jobs: []mcrequest.Object{ok, bad},
		pods: podObjects(jobPod("nightly-report-29407380-q8w7e", p, bad, k, exit(2), "2026-11-29T02:00:01Z"),
			jobPod("nightly-report-29407380-r5t4y", p, bad, k+1, exit(2), "2026-11-29T02:01:30Z"))}.converged()

	// 49. type CronJob, suspended, its last run succeeded: Stalled Suspended, Available True.
	p, k = g.newParent("nightly-report", "finance", fmt.Sprintf(nightly, `,"suspend":true`))
	objs = observeAll(p, fixture{g: g, parent: p}.desired(), k,
		map[string]any{"lastScheduleTime": "2026-11-28T02:00:00Z", "lastSuccessfulTime": "2026-11-28T02:01:40Z"}, "CronJob")
	cron = findKind(g.t, objs, "CronJob")
	ok = cronJobRun(p, cron, "nightly-report-29405940", k, "Complete", "2026-11-28T02:00:00Z", "2026-11-28T02:01:40Z", 0)
	c["cronjob-suspended"] = fixture{g: g, parent: p, children: objs, jobs: []mcrequest.Object{ok},
		pods: podObjects(jobPod("nightly-report-29405940-z9x8c", p, ok, k, exit(0), "2026-11-28T02:00:01Z"))}.converged()
}
