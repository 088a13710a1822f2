package status

import (
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/portcheck"
)

// What the status logic asks of the port verifier: the verdicts it reads
// (Verdicts) and the dials it wants (DialJob), under the key of the
// workload revision.

// Verdicts is the read-only view of the port verifier Sync reads. It never
// blocks; *portcheck.Verifier implements it.
type Verdicts interface {
	// Get returns the stored result of the key's revision, if any.
	Get(portcheck.Key) (portcheck.Result, bool)
	// Pending reports whether a dial for the key is queued or in flight.
	Pending(portcheck.Key) bool
}

// DialJob is a dial Sync wants scheduled. Forget asks for the stored verdict
// to be dropped first, so that the next one read is a fresh dial.
type DialJob struct {
	portcheck.Job
	Forget bool
}

// noVerdicts is the view of a verifier that knows nothing yet.
type noVerdicts struct{}

func (noVerdicts) Get(portcheck.Key) (portcheck.Result, bool) { return portcheck.Result{}, false }
func (noVerdicts) Pending(portcheck.Key) bool                 { return false }

// key is the verifier key of the workload revision: a verdict on pods of
// another ReplicaSet or ControllerRevision is never read.
func (f *facts) key() portcheck.Key {
	return portcheck.Key{Namespace: f.namespace, Name: f.name, Revision: f.workloadRev}
}

// dial returns the job that dials every declared port of the pod, or none
// while a dial for the key is already pending. Either way an answer can
// arrive, so the caller asks to be called back.
func (f *facts) dial(rep *observed.Related, forget bool) []DialJob {
	if f.verdicts.Pending(f.key()) {
		return nil
	}
	ports := make([]portcheck.Port, len(f.spec.Ports))
	for i, p := range f.spec.Ports {
		ports[i] = portcheck.Port{Name: p.Name, Port: p.Port}
	}
	return []DialJob{{Job: portcheck.Job{Key: f.key(), IP: rep.Status.PodIP, Ports: ports}, Forget: forget}}
}
