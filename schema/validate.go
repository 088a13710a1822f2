package schema

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks a spec the way the CRD's OpenAPI and CEL rules do, and a
// little more (what a Pod would reject later), so that a spec that slipped
// past admission — an older CRD, a disabled webhook — is caught before it
// reaches a child. It returns nil or one error naming every problem — except
// that a spec past one of the CRD's size limits (validateLimits) is refused
// with those alone: the per-item checks are not run over a forged list of
// 65,535 ports, and the message stays short.
func Validate(s Spec) error {
	if lim := validateLimits(s); len(lim) > 0 {
		msgs := make([]string, len(lim))
		for i, e := range lim {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("invalid spec: %s", strings.Join(msgs, "; "))
	}
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	switch s.Type {
	case TypeService, TypeStatefulService, TypeJob, TypeCronJob:
	case "":
		add("spec.type is required (Service, StatefulService, Job or CronJob)")
	default:
		add("spec.type %q is not Service, StatefulService, Job or CronJob", s.Type)
	}
	if strings.TrimSpace(s.Image) == "" {
		add("spec.image is required")
	}
	if s.Replicas != nil && *s.Replicas < 0 {
		add("spec.replicas %d must not be negative", *s.Replicas)
	}
	errs = append(errs, validateAutoscaling(s)...)
	names := map[string]bool{}
	numbers := map[int32]bool{}
	public := false
	for i, p := range s.Ports {
		for _, msg := range validation.IsValidPortName(p.Name) {
			add("spec.ports[%d].name %q: %s", i, p.Name, msg)
		}
		if p.Port < 1 || p.Port > 65535 {
			add("spec.ports[%d].port %d must be between 1 and 65535", i, p.Port)
		}
		if names[p.Name] {
			add("spec.ports[%d].name %q: port names must be unique", i, p.Name)
		}
		if numbers[p.Port] {
			add("spec.ports[%d].port %d: port numbers must be unique", i, p.Port)
		}
		names[p.Name], numbers[p.Port] = true, true
		public = public || p.Public
	}
	if public && len(s.RouteHosts()) == 0 {
		add("spec.host is required when a port is public, or spec.hosts")
	}
	if s.Host != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.Host) {
			add("spec.host %q: %s", s.Host, msg)
		}
	}
	hosts := map[string]bool{s.Host: s.Host != ""}
	for i, h := range s.Hosts {
		for _, msg := range validation.IsDNS1123Subdomain(h) {
			add("spec.hosts[%d] %q: %s", i, h, msg)
		}
		if hosts[h] {
			add("spec.hosts[%d] %q: hosts must be unique and not repeat host", i, h)
		}
		hosts[h] = true
	}
	if s.Storage != nil {
		if s.Type != TypeStatefulService {
			add("spec.storage is only allowed for type StatefulService")
		}
		if s.Storage.Size.Sign() <= 0 {
			add("spec.storage.size must be positive")
		}
		if !strings.HasPrefix(s.Storage.MountPath, "/") {
			add("spec.storage.mountPath %q must be an absolute path", s.Storage.MountPath)
		}
	}
	errs = append(errs, validateRouting(s)...)
	errs = append(errs, validateMiddlewares(s)...)
	errs = append(errs, validatePod(s)...)
	errs = append(errs, messages(validateBrand(s))...)
	errs = append(errs, messages(validateMetrics(s))...)
	for _, e := range validateWorkloads(s) {
		errs = append(errs, e.Error())
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid spec: %s", strings.Join(errs, "; "))
}

// ValidateName checks a StackResource's name the way its children need it:
// a DNS label (RFC 1035) names its Services. The CRD also refuses, at
// creation, names longer than 51 characters or ending in a child's suffix.
func ValidateName(name string) error {
	if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
		return fmt.Errorf("invalid name %q: %s (it names the Services)", name, strings.Join(msgs, "; "))
	}
	return nil
}

// validateAutoscaling checks spec.autoscaling against the spec it scales.
func validateAutoscaling(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	a := s.Autoscaling
	if a == nil {
		return nil
	}
	if s.Replicas != nil {
		add("spec.replicas and spec.autoscaling cannot be set together: the HorizontalPodAutoscaler owns the number of pods")
	}
	if a.MinReplicas != nil && *a.MinReplicas < 1 {
		add("spec.autoscaling.minReplicas %d must be at least 1", *a.MinReplicas)
	}
	if a.MaxReplicas < 1 || (a.MinReplicas != nil && a.MaxReplicas < *a.MinReplicas) {
		add("spec.autoscaling.maxReplicas %d must be at least 1 and at least minReplicas", a.MaxReplicas)
	}
	if t := a.TargetCPUUtilizationPercentage; t != nil && *t < 1 {
		add("spec.autoscaling.targetCPUUtilizationPercentage %d must be at least 1", *t)
	}
	if s.Resources == nil || s.Resources.Requests.Cpu().IsZero() {
		add("spec.autoscaling needs spec.resources.requests.cpu: the HorizontalPodAutoscaler measures CPU utilization against it")
	}
	return errs
}
