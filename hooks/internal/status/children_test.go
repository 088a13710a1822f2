package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// TestChildrenSeen is the state table's rows for children the answer
// returns and the request does not show (#25: a Service refused by a
// ResourceQuota left a public app reading Available and Converged).
func TestChildrenSeen(t *testing.T) {
	cfg := Config{ChildSettle: 30 * time.Second}
	now := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	ago := func(d time.Duration) *metav1.Time { t := metav1.NewTime(now.Add(-d)); return &t }
	private := schema.Spec{Type: schema.TypeService, Ports: []schema.Port{{Name: "http", Port: 8080}}}
	public := schema.Spec{Type: schema.TypeService, Host: "web.example.com", Ports: []schema.Port{{Name: "http", Port: 8080, Public: true}}}
	svc := observed.ChildRef{Kind: "Service", APIVersion: "v1", Name: "web"}
	route := observed.ChildRef{Kind: "IngressRoute", APIVersion: "traefik.io/v1alpha1", Name: "web"}
	redirect := observed.ChildRef{Kind: "IngressRoute", APIVersion: "traefik.io/v1alpha1", Name: "web-redirect"}
	pdb := observed.ChildRef{Kind: "PodDisruptionBudget", APIVersion: "policy/v1", Name: "web"}
	dep := observed.ChildRef{Kind: "Deployment", APIVersion: "apps/v1", Name: "web"}
	serving := health{available: true, converged: true, reason: schema.ReasonServing, message: "every declared port answered"}
	progressing := health{reason: schema.ReasonProgressing, message: "Deployment web is not created yet"}
	crashing := health{reason: schema.ReasonCrashLooping, message: "container app of pod p is crash-looping"}
	where := " not created: not observed for more than 30s after stackdome returned it (a ResourceQuota, an admission webhook, a full Service IP range, or a name taken by an object Metacontroller does not own). " +
		"Metacontroller's SyncError events on the StackResource say why: kubectl describe sr -n shop web, or kubectl get events -n shop --field-selector involvedObject.name=web,reason=SyncError"
	// notCreated is the row past the settle time; names is "Kind/name was"
	// or "…, Kind/name were".
	notCreated := func(available bool, names string) health {
		return health{available: available, stalled: true, reason: schema.ReasonChildNotCreated, message: names + where}
	}
	type result struct {
		Health   health
		Since    *metav1.Time
		ResyncIn time.Duration
	}
	tests := map[string]struct {
		reason  string
		spec    schema.Spec
		row     health
		missing []observed.ChildRef
		prev    *metav1.Time // the status's childrenMissingSince
		want    result
	}{
		"every child observed": {
			reason: "the row as the workload says, no anchor",
			spec:   public, row: serving, want: result{Health: serving},
		},
		"every child back": {
			reason: "a child created at last clears the anchor",
			spec:   public, row: serving, prev: ago(time.Hour), want: result{Health: serving},
		},
		"first sync of a new resource": {
			reason: "nothing observed yet: Progressing as before, the anchor set now, called back when the settle time ends",
			spec:   public, row: progressing, missing: []observed.ChildRef{svc, dep, route},
			want: result{Health: progressing, Since: &now, ResyncIn: 30 * time.Second},
		},
		"inside the settle time": {
			reason: "a Service missing for 29s is still being created",
			spec:   public, row: serving, missing: []observed.ChildRef{svc}, prev: ago(29 * time.Second),
			want: result{Health: serving, Since: ago(29 * time.Second), ResyncIn: time.Second},
		},
		"public Service refused": {
			reason: "a public app without its Service serves nothing: neither Available nor Converged",
			spec:   public, row: serving, missing: []observed.ChildRef{svc}, prev: ago(30 * time.Second),
			want: result{Health: notCreated(false, "Service/web was"), Since: ago(30 * time.Second)},
		},
		"public IngressRoute refused": {
			reason: "nor without its route",
			spec:   public, row: serving, missing: []observed.ChildRef{route}, prev: ago(time.Hour),
			want: result{Health: notCreated(false, "IngressRoute/web was"), Since: ago(time.Hour)},
		},
		"redirect route refused": {
			reason: "the HTTPS route still serves: Available, not Converged",
			spec:   public, row: serving, missing: []observed.ChildRef{redirect}, prev: ago(time.Hour),
			want: result{Health: health{available: true, stalled: true, reason: schema.ReasonChildNotCreated, message: "IngressRoute/web-redirect was" + where}, Since: ago(time.Hour)},
		},
		"private Service refused": {
			reason: "the pods serve; in-cluster clients cannot reach them by name, and the app is not what was asked: not Converged",
			spec:   private, row: serving, missing: []observed.ChildRef{svc}, prev: ago(time.Hour),
			want: result{Health: notCreated(true, "Service/web was"), Since: ago(time.Hour)},
		},
		"disruption budget refused": {
			reason: "the app serves without its PodDisruptionBudget: Available, not Converged",
			spec:   public, row: serving, missing: []observed.ChildRef{pdb}, prev: ago(time.Hour),
			want: result{Health: notCreated(true, "PodDisruptionBudget/web was"), Since: ago(time.Hour)},
		},
		"workload refused": {
			reason: "a Deployment never created is no longer Progressing",
			spec:   private, row: progressing, missing: []observed.ChildRef{svc, dep}, prev: ago(time.Minute),
			want: result{Health: notCreated(false, "Service/web, Deployment/web were"), Since: ago(time.Minute)},
		},
		"refused while crash-looping": {
			reason: "the missing child is named; the crash stays in lastFailureDetails; not Available either way",
			spec:   public, row: crashing, missing: []observed.ChildRef{pdb}, prev: ago(time.Minute),
			want: result{Health: notCreated(false, "PodDisruptionBudget/web was"), Since: ago(time.Minute)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			since := childrenMissingSince(tc.prev, tc.missing, now)
			f := &facts{cfg: cfg, name: "web", namespace: "shop", spec: tc.spec, now: now, missing: tc.missing, missingSince: since}
			r := childrenSeen(f, row{health: tc.row})
			got := result{Health: r.health, Since: since, ResyncIn: r.resyncIn}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(health{})); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
