// Package schema defines the StackResource custom resource: its Go types,
// defaults and validation, and the CRD YAML controller-gen generates from
// them (crd.yaml, never edited by hand). Everything a StackResource can say
// is decided here; everything it makes happen is decided in hooks.
//
// +kubebuilder:object:generate=false
// +groupName=stackdome.io
// +versionName=v1alpha1
package schema

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group and Version of the StackResource API.
const (
	Group      = "stackdome.io"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version
	Kind       = "StackResource"
)

// StackResource is one app: an image, its declared ports and how to run it.
// stackdome turns it into a workload, a Service and Traefik routes, and
// reports in status whether every declared port really listens.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=sr,categories=stackdome
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || (self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 51)",optionalOldSelf=true,message="metadata.name must be a DNS label of at most 51 characters starting with a letter: it names Services (DNS labels) and, with a suffix, the other children and the StatefulSet's pods"
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || !['-headless', '-error-pages', '-redirect'].exists(s, self.metadata.name.endsWith(s))",optionalOldSelf=true,message="metadata.name cannot end in -headless, -error-pages or -redirect: stackdome names children <name>-headless, <name>-error-pages and <name>-redirect, which would collide with another StackResource's"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.middlewares) || !self.spec.middlewares.exists(m, m.name in [self.metadata.name + '-errors', self.metadata.name + '-strip', self.metadata.name + '-https'])",fieldPath=".spec.middlewares",reason=FieldValueForbidden,message="spec.middlewares cannot name <name>-errors, <name>-strip or <name>-https: stackdome makes and owns those Middlewares for this resource"
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Available",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].reason`
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`
// +kubebuilder:printcolumn:name="Last Run",type=string,JSONPath=`.status.run.last.result`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name="Last Job",type=string,JSONPath=`.status.run.last.job`,priority=1
// +kubebuilder:printcolumn:name="Scheduled",type=date,JSONPath=`.status.run.lastScheduleTime`,priority=1
type StackResource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec   `json:"spec"`
	Status Status `json:"status,omitempty"`
}

// WorkloadType selects the workload a StackResource runs as.
// +kubebuilder:validation:Enum=Service;StatefulService;Job;CronJob
type WorkloadType string

// The workload types: a Service runs as a Deployment, a StatefulService as a
// StatefulSet with a headless Service and optional storage.
const (
	TypeService         WorkloadType = "Service"
	TypeStatefulService WorkloadType = "StatefulService"
)

// Spec is what the user declares.
//
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || !has(self.replicas)",fieldPath=".replicas",reason=FieldValueForbidden,message="replicas and autoscaling cannot be set together: with autoscaling the HorizontalPodAutoscaler owns the number of pods; remove replicas"
// +kubebuilder:validation:XValidation:rule="!has(self.autoscaling) || (has(self.resources) && has(self.resources.requests) && 'cpu' in self.resources.requests && quantity(string(self.resources.requests['cpu'])).isGreaterThan(quantity('0')))",fieldPath=".resources.requests['cpu']",reason=FieldValueRequired,message="autoscaling needs resources.requests.cpu: the HorizontalPodAutoscaler measures CPU utilization against it"
// +kubebuilder:validation:XValidation:rule="!has(self.middlewares) || (has(self.ports) && self.ports.exists(p, has(p.public) && p.public))",fieldPath=".middlewares",reason=FieldValueForbidden,message="middlewares need a public port: they apply to the routes of public ports"
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || (has(self.ports) && self.ports.exists(p, has(p.public) && p.public))",fieldPath=".tls",reason=FieldValueForbidden,message="tls needs a public port: it applies to the routes of public ports"
// +kubebuilder:validation:XValidation:rule="!has(self.metrics) || (has(self.ports) && self.ports.exists(p, p.name == self.metrics.port))",fieldPath=".metrics.port",message="metrics.port must name a declared port"
// +kubebuilder:validation:XValidation:rule="!has(self.files) || !has(self.storage) || !self.files.exists(f, f.mountPath == self.storage.mountPath)",fieldPath=".storage.mountPath",message="a file's mountPath cannot be storage.mountPath"
// +kubebuilder:validation:XValidation:rule="!has(self.scratch) || !has(self.files) || !self.scratch.exists(v, self.files.exists(f, f.mountPath == v.mountPath))",fieldPath=".scratch",message="a scratch mountPath cannot be a file's mountPath"
// +kubebuilder:validation:XValidation:rule="!has(self.scratch) || !has(self.storage) || !self.scratch.exists(v, v.mountPath == self.storage.mountPath)",fieldPath=".storage.mountPath",message="a scratch mountPath cannot be storage.mountPath"
// +kubebuilder:validation:XValidation:rule="!has(self.shm) || !has(self.files) || !self.files.exists(f, f.mountPath == '/dev/shm')",fieldPath=".files",reason=FieldValueForbidden,message="/dev/shm is spec.shm's: no file or storage can be mounted there"
// +kubebuilder:validation:XValidation:rule="!has(self.shm) || !has(self.storage) || self.storage.mountPath != '/dev/shm'",fieldPath=".storage.mountPath",reason=FieldValueForbidden,message="/dev/shm is spec.shm's: no file or storage can be mounted there"
// +kubebuilder:validation:XValidation:rule="!has(self.drainSeconds) || self.drainSeconds < (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30)",fieldPath=".drainSeconds",message="drainSeconds (5 by default for an app with ports) must be less than terminationGracePeriodSeconds (30 when unset): the grace period counts from the pod's deletion, drain included, and the app needs what is left to finish its requests after SIGTERM"
// +kubebuilder:validation:XValidation:rule="has(self.drainSeconds) || !has(self.ports) || size(self.ports) == 0 || 5 < (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30)",fieldPath=".terminationGracePeriodSeconds",message="drainSeconds (5 by default for an app with ports) must be less than terminationGracePeriodSeconds (30 when unset): the grace period counts from the pod's deletion, drain included, and the app needs what is left to finish its requests after SIGTERM"
//
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || !self.ports.exists(p, has(p.public) && p.public) || (has(self.host) && size(self.host) > 0) || (has(self.hosts) && size(self.hosts) > 0)",fieldPath=".host",reason=FieldValueRequired,message="host is required when a port is public, or hosts"
// +kubebuilder:validation:XValidation:rule="!has(self.hosts) || !has(self.host) || !(self.host in self.hosts)",fieldPath=".hosts",message="hosts must not repeat host: host is the first host already"
// +kubebuilder:validation:XValidation:rule="!has(self.storage) || self.type == 'StatefulService'",fieldPath=".storage",reason=FieldValueForbidden,message="storage is only allowed for type StatefulService"
// +kubebuilder:validation:XValidation:rule="self.type == oldSelf.type",fieldPath=".type",message="spec.type cannot change: the workload would be replaced and its pods and volumes lost. Create a new StackResource of the other type, move traffic to it, then delete this one"
// +kubebuilder:validation:XValidation:rule="self.type in ['Job', 'CronJob'] || !has(self.job)",fieldPath=".job",reason=FieldValueForbidden,message="job is only for type Job or CronJob"
// +kubebuilder:validation:XValidation:rule="self.type != 'CronJob' || has(self.cronJob)",fieldPath=".cronJob",reason=FieldValueRequired,message="cronJob is required for type CronJob"
// +kubebuilder:validation:XValidation:rule="self.type == 'CronJob' || !has(self.cronJob)",fieldPath=".cronJob",reason=FieldValueForbidden,message="cronJob is only for type CronJob"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.ports)",fieldPath=".ports",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: ports is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.host)",fieldPath=".host",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: host is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.hosts)",fieldPath=".hosts",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: hosts is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.tls)",fieldPath=".tls",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: tls is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.middlewares)",fieldPath=".middlewares",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: middlewares is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.autoscaling)",fieldPath=".autoscaling",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: autoscaling is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.replicas)",fieldPath=".replicas",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: replicas is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.drainSeconds)",fieldPath=".drainSeconds",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: drainSeconds is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Job', 'CronJob']) || !has(self.errorPages) || ((!has(self.errorPages.enabled) || self.errorPages.enabled) && !has(self.errorPages.brand))",fieldPath=".errorPages",reason=FieldValueForbidden,message="type Job and CronJob run to completion and serve nothing: errorPages is for type Service and StatefulService; remove it"
// +kubebuilder:validation:XValidation:rule="!has(self.ports) || self.ports.all(p, !has(p.container) || p.container == 'app' || (has(self.sidecars) && self.sidecars.exists(c, c.name == p.container)))",fieldPath=".ports",message="a port's container must be app or the name of a sidecar"
// +kubebuilder:validation:XValidation:rule="!has(self.sidecars) || self.sidecars.all(c, !has(c.files) || c.files.all(n, has(self.files) && self.files.exists(f, f.name == n)))",fieldPath=".sidecars",message="a sidecar's files must name entries of spec.files"
// +kubebuilder:validation:XValidation:rule="!has(self.podAnnotations) || !('stackdome.io/revision' in self.podAnnotations)",fieldPath=".podAnnotations['stackdome.io/revision']",reason=FieldValueForbidden,message="podAnnotations cannot set stackdome.io/revision: stackdome marks the pods of each revision with it"
// +kubebuilder:validation:XValidation:rule="!has(self.podAnnotations) || !('stackdome.io/config-digest' in self.podAnnotations)",fieldPath=".podAnnotations['stackdome.io/config-digest']",reason=FieldValueForbidden,message="podAnnotations cannot set stackdome.io/config-digest: stackdome rolls the pods with it when their ConfigMaps and Secrets change"
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !('app.kubernetes.io/name' in self.podLabels)",fieldPath=".podLabels['app.kubernetes.io/name']",reason=FieldValueForbidden,message="podLabels cannot set app.kubernetes.io/name: the workload and its Service select the pods by it"
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !('app.kubernetes.io/instance' in self.podLabels)",fieldPath=".podLabels['app.kubernetes.io/instance']",reason=FieldValueForbidden,message="podLabels cannot set app.kubernetes.io/instance: the workload and its Service select the pods by it"
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !('app.kubernetes.io/managed-by' in self.podLabels)",fieldPath=".podLabels['app.kubernetes.io/managed-by']",reason=FieldValueForbidden,message="podLabels cannot set app.kubernetes.io/managed-by: the workload and its Service select the pods by it"
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !('pod-template-hash' in self.podLabels)",fieldPath=".podLabels['pod-template-hash']",reason=FieldValueForbidden,message="podLabels cannot set pod-template-hash: the workload and its Service select the pods by it"
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !('controller-revision-hash' in self.podLabels)",fieldPath=".podLabels['controller-revision-hash']",reason=FieldValueForbidden,message="podLabels cannot set controller-revision-hash: the workload and its Service select the pods by it"
// +kubebuilder:validation:XValidation:rule="!has(self.podLabels) || !('statefulset.kubernetes.io/pod-name' in self.podLabels)",fieldPath=".podLabels['statefulset.kubernetes.io/pod-name']",reason=FieldValueForbidden,message="podLabels cannot set statefulset.kubernetes.io/pod-name: the workload and its Service select the pods by it"
// +kubebuilder:validation:XValidation:rule="has(self.storage) == has(oldSelf.storage)",fieldPath=".storage",message="spec.storage cannot be added or removed: it becomes the StatefulSet's volumeClaimTemplates, which Kubernetes never changes. Create a new StackResource with the storage you want and move the data"
type Spec struct {
	// Type is Service (a Deployment), StatefulService (a StatefulSet), Job
	// (a Job run once per spec revision) or CronJob (a CronJob).
	Type WorkloadType `json:"type"`

	// Image is the app container's image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`\S`
	Image string `json:"image"`

	// Command overrides the image's entrypoint.
	// +optional
	Command []string `json:"command,omitempty"`
	// Args overrides the image's arguments.
	// +optional
	Args []string `json:"args,omitempty"`
	// Env is the app container's environment. The pods roll when the
	// content of a ConfigMap or Secret a valueFrom names changes, unless
	// the variable's rollOnChange is false. On an install that does not relate
	// Secrets (ConfigMaps) — chart relate.secrets (relate.configMaps)
	// false — a change of one never rolls the pods (status: Config
	// Unknown NotWatched): kubectl rollout restart applies it.
	// +optional
	Env []EnvVar `json:"env,omitempty"`
	// Resources are the app container's requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// Replicas is the number of pods; 1 when neither it nor Autoscaling is
	// set. With Autoscaling the HorizontalPodAutoscaler owns the count.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Autoscaling makes a HorizontalPodAutoscaler own the number of pods.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`

	// Ports are the TCP ports the app listens on. Every one is verified.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.name == p.name))",message="port names must be unique"
	// +kubebuilder:validation:XValidation:rule="self.all(p, self.exists_one(q, q.port == p.port))",message="port numbers must be unique"
	// +listType=atomic
	// +optional
	Ports []Port `json:"ports,omitempty"`

	// Host is the first host of the public routes (and of status.url); a
	// public port needs it or Hosts.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	Host string `json:"host,omitempty"`
	// Hosts are further hosts every public route answers for, besides Host
	// (which, when set, stays the first and names status.url). Each gets
	// the route, its TLS and, with TLS, its plain-HTTP redirect.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +kubebuilder:validation:XValidation:rule="self.all(h, self.exists_one(g, g == h))",message="hosts must be unique"
	// +listType=atomic
	// +optional
	Hosts []string `json:"hosts,omitempty"`

	// HealthChecks override the probes; an explicit readiness probe replaces
	// the synthesized TCP one.
	// +optional
	HealthChecks *HealthChecks `json:"healthChecks,omitempty"`

	// Storage is a volume per pod, for StatefulService only.
	// +optional
	Storage *Storage `json:"storage,omitempty"`

	// ErrorPages controls the branded error pages on public routes.
	// +optional
	ErrorPages *ErrorPages `json:"errorPages,omitempty"`

	// TLS serves the public routes over TLS.
	// +optional
	TLS *TLS `json:"tls,omitempty"`

	// Middlewares are Traefik Middlewares of the resource's namespace (auth,
	// rate limits, headers, allow lists) that every public route uses, in
	// this order, before the errors Middleware. Each is attached once it
	// exists: Traefik disables a route referring to a Middleware it cannot
	// find, so a missing one is named in status instead.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(m, self.exists_one(n, n.name == m.name))",message="middlewares must be unique: a route uses each once"
	// +listType=atomic
	// +optional
	Middlewares []MiddlewareRef `json:"middlewares,omitempty"`

	// NetworkPolicy puts a NetworkPolicy around the app's pods that admits
	// Traefik to the public ports, stackdome to every declared port and the
	// app's own namespace, and nothing else; unset: the platform's default.
	// +optional
	NetworkPolicy *NetworkPolicy `json:"networkPolicy,omitempty"`

	// Metrics names the declared port (and path) Prometheus scrapes: a
	// PodMonitor when the platform has them on.
	// +optional
	Metrics *Metrics `json:"metrics,omitempty"`

	Pod `json:",inline"`

	Workloads `json:",inline"`
}

// Port is one declared TCP port.
type Port struct {
	// Name is an IANA service name: at most 15 lowercase letters, digits and
	// dashes, with at least one letter.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self.matches('[a-z]') && !self.contains('--')",message="must be an IANA service name: at least one letter (a-z), and no two dashes in a row"
	Name string `json:"name"`
	// Port is the number the app listens on.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// Public routes the port through Traefik at Host.
	// +optional
	Public bool `json:"public,omitempty"`
	// Path routes Host(host) && PathPrefix(path) to a public port, passed to
	// the app as it is. Without it the first public port gets every path and
	// each further one PathPrefix(/<name>), stripped before it reaches the app.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^/[-a-zA-Z0-9._~/%]*$`
	// +optional
	Path string `json:"path,omitempty"`
	// Container is the container listening on the port: app (the default)
	// or a sidecar's name, e.g. an oauth2-proxy in front of the app. Every
	// container of a pod shares its network, so the port is served,
	// routed and dialed like the app's; only the containerPort moves.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Container string `json:"container,omitempty"`
}

// HealthChecks are explicit probes for the app container.
type HealthChecks struct {
	// +optional
	Readiness *corev1.Probe `json:"readiness,omitempty"`
	// +optional
	Liveness *corev1.Probe `json:"liveness,omitempty"`
	// +optional
	Startup *corev1.Probe `json:"startup,omitempty"`
}

// Storage is one persistent volume per pod of a StatefulService. Size and
// StorageClassName become the StatefulSet's volumeClaimTemplates, which
// Kubernetes never updates, so they cannot change once set; MountPath can.
//
// +kubebuilder:validation:XValidation:rule="has(self.storageClassName) == has(oldSelf.storageClassName) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName)",message="spec.storage.storageClassName cannot change: the claims data-<name>-<ordinal> keep the class they were made with. Create a new StackResource and move the data"
type Storage struct {
	// Size of the volume.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0'))",message="storage.size must be positive"
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).compareTo(quantity(string(oldSelf))) == 0",message="spec.storage.size cannot change: it is the StatefulSet's volumeClaimTemplates, which Kubernetes never updates. Grow the volumes instead by expanding each claim: kubectl patch pvc data-<name>-<ordinal> with the new spec.resources.requests.storage (the StorageClass must allow volume expansion), and leave spec.storage.size as it is"
	Size resource.Quantity `json:"size"`
	// MountPath in the app container.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`
	// StorageClassName; the cluster default when empty.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
}

// ErrorPages controls the branded error pages.
//
// +kubebuilder:validation:XValidation:rule="!has(self.brand) || !has(self.enabled) || self.enabled",fieldPath=".brand",reason=FieldValueForbidden,message="errorPages.brand needs errorPages.enabled: a brand is drawn only on the branded pages"
type ErrorPages struct {
	// Enabled sends 5xx answers of this resource's public routes to the
	// branded pages; default true.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Brand names one of the platform's brands (the chart's
	// errorPages.brands) to draw the pages in; the errors Middleware asks
	// for it. Unset, or a name the platform does not have: its default
	// brand.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	Brand string `json:"brand,omitempty"`
}
