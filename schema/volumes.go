package schema

import "k8s.io/apimachinery/pkg/api/resource"

// ShmMountPath is where Shm is mounted: the path POSIX shared memory lives
// at, and nothing else may be mounted there.
const ShmMountPath = "/dev/shm"

// Scratch is a writable directory of the node's disk, empty when a pod
// starts and gone when it ends (an emptyDir volume): what an image needs for
// /tmp or a cache once readOnlyRootFilesystem is on. SizeLimit is required:
// a pod that writes past it is evicted, instead of filling the node's disk
// for every pod on it.
//
// +kubebuilder:validation:XValidation:rule="self.mountPath != '/dev/shm'",fieldPath=".mountPath",reason=FieldValueForbidden,message="scratch cannot be mounted at /dev/shm: set spec.shm for a memory-backed /dev/shm"
type Scratch struct {
	// Name names the volume (scratch-<name>): a DNS label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=55
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// MountPath is the directory, writable by the app.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`
	// SizeLimit is the most the app may write there; the kubelet evicts the
	// pod past it.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="sizeLimit must be positive"
	SizeLimit resource.Quantity `json:"sizeLimit"`
}

// Shm is a memory-backed /dev/shm (an emptyDir of medium Memory): the
// container runtime's default is 64 MiB, too small for PostgreSQL's parallel
// queries or a headless browser. What is written there counts against the
// container's memory limit.
type Shm struct {
	// SizeLimit is the size of /dev/shm.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="shm.sizeLimit must be positive"
	SizeLimit resource.Quantity `json:"sizeLimit"`
}

// Migration is a step run to completion before the app starts in every pod:
// an init container with the app's image, env, envFrom, files, scratch,
// storage, resources and security context, and its own command and args
// (a schema migration, a cache warm-up). Each pod runs it on every start, so
// it must be idempotent and safe to run in several pods at once (take the
// database's own lock). A migration that fails keeps the pod from starting
// and reads in status as a crash of container migrate.
//
// +kubebuilder:validation:XValidation:rule="has(self.command) || has(self.args)",fieldPath=".command",reason=FieldValueRequired,message="migration needs a command or args: without them it would run the app itself, which never exits, and no pod would start"
type Migration struct {
	// Command overrides the image's entrypoint.
	// +kubebuilder:validation:MinItems=1
	// +listType=atomic
	// +optional
	Command []string `json:"command,omitempty"`
	// Args overrides the image's arguments.
	// +kubebuilder:validation:MinItems=1
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`
}

// MigrationContainerName is the init container of Spec.Migration.
const MigrationContainerName = "migrate"
