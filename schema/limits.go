package schema

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The size limits the CRD states with kubebuilder markers (types.go,
// pod.go, volumes.go, scaling.go) and Validate enforces. The markers are
// the source; TestValidateEnforcesEveryCRDLimit walks the generated
// crd.yaml and fails when a limit here and there differ, or when the CRD
// states one Validate does not hold.
const (
	MaxPorts           = 64   // spec.ports
	MaxHosts           = 16   // spec.hosts
	MaxMiddlewares     = 16   // spec.middlewares
	MaxFiles           = 16   // spec.files
	MaxScratch         = 8    // spec.scratch
	MaxPodMetadata     = 64   // spec.podLabels, spec.podAnnotations (entries each)
	MaxImageLength     = 4096 // spec.image
	MaxPathLength      = 253  // spec.ports[*].path
	MaxMountPathLength = 256  // spec.files[*], spec.scratch[*], spec.storage mountPath
	MaxResolverLength  = 253  // spec.tls.certResolver
	MaxPortNameLength  = 15   // spec.metrics.port (an IANA service name, as spec.ports[*].name)
)

// The ranges the CRD states with Minimum and Maximum markers, and the
// numbers its CEL rules hold as literals (DefaultDrainSeconds and
// DefaultTerminationGracePeriodSeconds, lifecycle.go; MaxNameLength).
// TestCRDStatesTheConstants reads them back from the generated crd.yaml.
const (
	MinPortNumber                    = 1     // spec.ports[*].port
	MaxPortNumber                    = 65535 // spec.ports[*].port
	MaxDrainSeconds                  = 300   // spec.drainSeconds
	MinTerminationGracePeriodSeconds = 1     // spec.terminationGracePeriodSeconds
	MaxTerminationGracePeriodSeconds = 3600  // spec.terminationGracePeriodSeconds
	MaxBackoffLimit                  = 100   // spec.job.backoffLimit
	MaxJobsHistoryLimit              = 100   // spec.cronJob.{successful,failed}JobsHistoryLimit
	// MaxNameLength is the longest metadata.name the CRD admits at
	// creation: the StatefulSet's pods are <name>-<ordinal> and carry the
	// label controller-revision-hash=<name>-<10-character hash>, a label
	// value of at most 63 characters.
	MaxNameLength = 51
)

// validateLimits checks the CRD's MaxItems, MaxLength and MaxProperties of
// spec that the older checks in Validate do not already hold (port numbers,
// names and DNS names have their own, more specific, messages). It reports
// a list past its limit once, with its length, and never walks a forged
// 65,535-item list item by item to say so.
func validateLimits(s Spec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	tooMany := func(p *field.Path, n, limit int) {
		if n > limit {
			errs = append(errs, field.TooMany(p, n, limit))
		}
	}
	tooLong := func(p *field.Path, v string, limit int) {
		if len(v) > limit {
			// field.TooLong never echoes the value: a forged one may be
			// megabytes, and the message becomes a status message.
			errs = append(errs, field.TooLong(p, "", limit))
		}
	}
	tooMany(spec.Child("ports"), len(s.Ports), MaxPorts)
	tooMany(spec.Child("hosts"), len(s.Hosts), MaxHosts)
	tooMany(spec.Child("middlewares"), len(s.Middlewares), MaxMiddlewares)
	tooMany(spec.Child("files"), len(s.Files), MaxFiles)
	tooMany(spec.Child("scratch"), len(s.Scratch), MaxScratch)
	tooMany(spec.Child("podLabels"), len(s.PodLabels), MaxPodMetadata)
	tooMany(spec.Child("podAnnotations"), len(s.PodAnnotations), MaxPodMetadata)
	tooLong(spec.Child("image"), s.Image, MaxImageLength)
	if s.TLS != nil {
		tooLong(spec.Child("tls", "certResolver"), s.TLS.CertResolver, MaxResolverLength)
	}
	if s.Storage != nil {
		tooLong(spec.Child("storage", "mountPath"), s.Storage.MountPath, MaxMountPathLength)
	}
	if s.Metrics != nil {
		tooLong(spec.Child("metrics", "port"), s.Metrics.Port, MaxPortNameLength)
		tooLong(spec.Child("metrics", "path"), s.Metrics.Path, MaxPathLength)
	}

	// Items are checked only within the limit: past it the list is
	// refused already, and a forged list must not cost one error per item.
	for i, p := range s.Ports[:min(len(s.Ports), MaxPorts)] {
		tooLong(spec.Child("ports").Index(i).Child("path"), p.Path, MaxPathLength)
	}
	for i, f := range s.Files[:min(len(s.Files), MaxFiles)] {
		tooLong(spec.Child("files").Index(i).Child("mountPath"), f.MountPath, MaxMountPathLength)
	}
	for i, v := range s.Scratch[:min(len(s.Scratch), MaxScratch)] {
		tooLong(spec.Child("scratch").Index(i).Child("mountPath"), v.MountPath, MaxMountPathLength)
	}
	return errs
}
