package schema

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Status is what stackdome reports. Metacontroller replaces it whole with
// each sync's answer and sets ObservedGeneration; every timestamp in it
// changes only when the fact it stamps changes.
type Status struct {
	// ObservedGeneration is the parent generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Revision is the hash of the desired pod template.
	// +optional
	Revision string `json:"revision,omitempty"`
	// URL is https://<host> when a port is public.
	// +optional
	URL string `json:"url,omitempty"`
	// Conditions are Available, Converged, Stalled and Reconciling, in that
	// order, then ErrorPages for an app that wants the branded error pages.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// LastFailureDetails say why the app is not healthy, one entry a cause.
	// +optional
	LastFailureDetails []FailureDetail `json:"lastFailureDetails,omitempty"`
	// PortCheck is the grace window for believing a closed port, kept on the
	// object so that it survives restarts of stackdome.
	// +optional
	PortCheck *PortCheck `json:"portCheck,omitempty"`
	// Ports is each declared port as the last verdict saw it.
	// +optional
	Ports []PortStatus `json:"ports,omitempty"`
	// Run is what the runs of a Job or CronJob say; unset for the other
	// types.
	// +optional
	Run *RunStatus `json:"run,omitempty"`
	// ChildrenMissingSince is when a child stackdome returns was first seen
	// missing from the sync request (Metacontroller could not create it),
	// without a break since; unset once every child is observed again,
	// with the next status change besides it (no write of its own). Kept on
	// the object so that every replica, a restarted one included, reads the
	// same settle time.
	// +optional
	ChildrenMissingSince *metav1.Time `json:"childrenMissingSince,omitempty"`
}

// FailureType says what kind of failure a detail records.
// +kubebuilder:validation:Enum=runtime_crash;readiness_failure;start_failure
type FailureType string

// Failure types. An empty type, written by older versions, means RuntimeCrash.
const (
	// RuntimeCrash: a container crashes, is OOMKilled, exits, or cannot start
	// (image pull, container config).
	RuntimeCrash FailureType = "runtime_crash"
	// ReadinessFailure: a declared port refuses connections, or a pod stays
	// not ready past the boot grace.
	ReadinessFailure FailureType = "readiness_failure"
	// StartFailure: pods cannot start at all: unschedulable, refused at
	// creation, or a StatefulSet rollout blocked on a broken pod.
	StartFailure FailureType = "start_failure"
)

// FailureDetail is one cause of an unhealthy app.
type FailureDetail struct {
	// Type is runtime_crash, readiness_failure or start_failure; empty reads as runtime_crash.
	// +optional
	Type FailureType `json:"type,omitempty"`
	// Reason is a CamelCase cause such as CrashLoopBackOff, OOMKilled or PortNotListening.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is for humans.
	// +optional
	Message string `json:"message,omitempty"`
	// Container is the container that failed.
	// +optional
	Container string `json:"container,omitempty"`
	// Port is the declared port that failed.
	// +optional
	Port int32 `json:"port,omitempty"`
	// ExitCode is the container's last exit code.
	// +optional
	ExitCode *int32 `json:"exitCode,omitempty"`
	// Revision is the workload revision (pod-template-hash or
	// controller-revision-hash) of the pods the failure was seen on.
	// +optional
	Revision string `json:"revision,omitempty"`
	// ObservedAt is when stackdome first saw this failure.
	// +optional
	ObservedAt *metav1.Time `json:"observedAt,omitempty"`
}

// UnmarshalJSON decodes a FailureDetail, reading an empty or missing type as
// runtime_crash so that details written before the type existed keep their
// meaning.
func (d *FailureDetail) UnmarshalJSON(b []byte) error {
	type plain FailureDetail
	if err := json.Unmarshal(b, (*plain)(d)); err != nil {
		return err
	}
	if d.Type == "" {
		d.Type = RuntimeCrash
	}
	return nil
}

// PortCheck is the port gate's memory, kept on the object so that every
// replica of stackdome, a restarted one included, reads the same: which
// verdict the status was built from, and the grace window of a refused port.
type PortCheck struct {
	// Revision is the workload revision the verdicts belong to: the
	// pod-template-hash (Deployment) or controller-revision-hash
	// (StatefulSet) of the pods dialed. A new one — a rollout restart
	// included — verifies from scratch.
	Revision string `json:"revision"`
	// CheckedAt is when the dial was made whose verdict last changed this
	// status. Only a verdict dialed later may change it again, so replicas
	// holding verdicts of different ages never undo each other.
	// +optional
	CheckedAt *metav1.MicroTime `json:"checkedAt,omitempty"`
	// FailingSince is when a declared port of the serving app was first seen
	// refusing connections; unset while none is.
	// +optional
	FailingSince *metav1.Time `json:"failingSince,omitempty"`
}

// PortState is a declared port's state as the last verdict saw it.
// +kubebuilder:validation:Enum=Open;Closed;Unknown
type PortState string

// Port states.
const (
	PortOpen    PortState = "Open"
	PortClosed  PortState = "Closed"
	PortUnknown PortState = "Unknown"
)

// PortStatus is one declared port's last verdict.
type PortStatus struct {
	Name  string    `json:"name"`
	Port  int32     `json:"port"`
	State PortState `json:"state"`
	// Message says why a port is not Open, as the dial saw it.
	// +optional
	Message string `json:"message,omitempty"`
}
