package schema

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validation, in the layout of Kubernetes' own API packages: one validate
// function a type (validation*.go), each taking the *field.Path of the value
// it checks and returning a field.ErrorList. Each rule here that the CRD
// also states (a kubebuilder marker in types.go, pod.go, volumes.go,
// scaling.go, types_batch.go) refuses at the same field path with the same
// error type: TestTwoDoors runs one table of invalid specs through Validate
// and through the API server's own CRD validators.

// InvalidError is what Validate, ValidateName and ValidateChildNames return
// for a spec or name they refuse: every problem, each at its field path. Its
// message becomes the InvalidSpec status message.
type InvalidError struct {
	Errors field.ErrorList
}

// Error is "invalid spec: " and every problem, in spec order, joined by "; ".
func (e *InvalidError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, err := range e.Errors {
		msgs[i] = err.Error()
	}
	return "invalid spec: " + strings.Join(msgs, "; ")
}

// invalid is errs as Validate's error, nil when there are none.
func invalid(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Errors: errs}
}

// Validate checks a spec the way the CRD's OpenAPI and CEL rules do, and a
// little more (what a Pod would reject later, what CEL cannot compute), so
// that a spec that slipped past admission — an older CRD, a forged request
// — is caught before it reaches a child. It returns nil or an
// *InvalidError naming every problem at spec.<field>.
func Validate(s Spec) error {
	return invalid(ValidateSpec(s, field.NewPath("spec")))
}

// ValidateSpec is Validate's ErrorList, the spec at path. A spec past one
// of the CRD's size limits (validateLimits) is refused with those alone:
// the per-item checks are not run over a forged list of 65,535 ports, and
// the message stays short.
func ValidateSpec(s Spec, path *field.Path) field.ErrorList {
	if errs := validateLimits(s, path); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, validateType(s.Type, path.Child("type"))...)
	errs = append(errs, validateImage(s.Image, path.Child("image"))...)
	if s.Replicas != nil && *s.Replicas < 0 {
		errs = append(errs, field.Invalid(path.Child("replicas"), *s.Replicas, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateAutoscaling(s, path)...)
	errs = append(errs, validatePorts(s.Ports, path.Child("ports"))...)
	errs = append(errs, validateHosts(s, path)...)
	errs = append(errs, validateStorage(s, path.Child("storage"))...)
	errs = append(errs, validateRouting(s, path)...)
	errs = append(errs, validateMiddlewares(s, path)...)
	errs = append(errs, validatePod(s, path)...)
	errs = append(errs, validateErrorPages(s.ErrorPages, path.Child("errorPages"))...)
	errs = append(errs, validateMetrics(s, path.Child("metrics"))...)
	return append(errs, validateWorkloads(s, path)...)
}

// ImagePattern is the CRD's pattern of an image: one character at least
// that is not a space.
const ImagePattern = `\S`

var imagePattern = regexp.MustCompile(ImagePattern)

// validateImage checks an image reference as the CRD does: not blank.
// (Its length is validateLimits'.)
func validateImage(image string, path *field.Path) field.ErrorList {
	if imagePattern.MatchString(image) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, image, "an image is required")}
}

// workloadTypes are the values of spec.type, as the CRD's enum.
var workloadTypes = []WorkloadType{TypeService, TypeStatefulService, TypeJob, TypeCronJob}

// validateType checks spec.type against the CRD's enum.
func validateType(t WorkloadType, path *field.Path) field.ErrorList {
	switch t {
	case TypeService, TypeStatefulService, TypeJob, TypeCronJob:
		return nil
	}
	return field.ErrorList{field.NotSupported(path, t, workloadTypes)}
}

// ValidateName checks a StackResource's name the way its children need it:
// a DNS label (RFC 1035) names its Services. The CRD also refuses, at
// creation only, names longer than MaxNameLength or ending in a child's
// suffix; a resource admitted before those rules keeps working.
func ValidateName(name string) error {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, msg+" (it names the Services)"))
	}
	return invalid(errs)
}

// ValidateChildNames checks that what the spec names in the resource's
// namespace does not collide with a child stackdome makes for the resource
// name: a team's Middleware named <name>-errors, <name>-strip or
// <name>-https would be stackdome's own. The CRD refuses the same at
// admission.
func ValidateChildNames(name string, s Spec) error {
	var errs field.ErrorList
	path := field.NewPath("spec", "middlewares")
	for i, m := range s.Middlewares {
		for _, sfx := range middlewareSuffixes {
			if m.Name == name+sfx {
				errs = append(errs, field.Forbidden(path.Index(i).Child("name"), "stackdome makes and owns the Middleware "+m.Name+" for "+name))
			}
		}
	}
	return invalid(errs)
}

// validateAutoscaling checks spec.autoscaling against the spec it scales.
func validateAutoscaling(s Spec, path *field.Path) field.ErrorList {
	a := s.Autoscaling
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	p := path.Child("autoscaling")
	if s.Replicas != nil {
		errs = append(errs, field.Forbidden(path.Child("replicas"), "replicas and autoscaling cannot be set together: with autoscaling the HorizontalPodAutoscaler owns the number of pods; remove replicas"))
	}
	if a.MinReplicas != nil && *a.MinReplicas < 1 {
		errs = append(errs, field.Invalid(p.Child("minReplicas"), *a.MinReplicas, "must be greater than or equal to 1"))
	}
	switch {
	case a.MaxReplicas < 1:
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), a.MaxReplicas, "must be greater than or equal to 1"))
	case a.MinReplicas != nil && a.MaxReplicas < *a.MinReplicas:
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), a.MaxReplicas, "autoscaling.minReplicas must not exceed maxReplicas"))
	}
	if t := a.TargetCPUUtilizationPercentage; t != nil && *t < 1 {
		errs = append(errs, field.Invalid(p.Child("targetCPUUtilizationPercentage"), *t, "must be greater than or equal to 1"))
	}
	if s.Resources == nil || s.Resources.Requests.Cpu().Sign() <= 0 {
		errs = append(errs, field.Required(path.Child("resources", "requests").Key("cpu"), "autoscaling needs resources.requests.cpu: the HorizontalPodAutoscaler measures CPU utilization against it"))
	}
	return errs
}

// validateStorage checks spec.storage: StatefulService only, a positive
// size, an absolute mount path not taken by a file or scratch directory.
func validateStorage(s Spec, path *field.Path) field.ErrorList {
	st := s.Storage
	if st == nil {
		return nil
	}
	var errs field.ErrorList
	if s.Type != TypeStatefulService {
		errs = append(errs, field.Forbidden(path, "storage is only allowed for type StatefulService"))
	}
	if st.Size.Sign() <= 0 {
		errs = append(errs, field.Invalid(path.Child("size"), st.Size.String(), "storage.size must be positive"))
	}
	mp := path.Child("mountPath")
	switch {
	case !strings.HasPrefix(st.MountPath, "/"):
		errs = append(errs, field.Invalid(mp, st.MountPath, "must be an absolute path"))
	case s.Shm != nil && st.MountPath == ShmMountPath:
		errs = append(errs, field.Forbidden(mp, "/dev/shm is spec.shm's: no file or storage can be mounted there"))
	}
	for _, f := range s.Files {
		if f.MountPath == st.MountPath {
			errs = append(errs, field.Invalid(mp, st.MountPath, "a file's mountPath cannot be storage.mountPath"))
			break
		}
	}
	for _, v := range s.Scratch {
		if v.MountPath == st.MountPath {
			errs = append(errs, field.Invalid(mp, st.MountPath, "a scratch mountPath cannot be storage.mountPath"))
			break
		}
	}
	return errs
}
