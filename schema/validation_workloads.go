package schema

import (
	"fmt"
	"strings"
	"time"
	// The IANA zones embedded, so that a timeZone reads the same on every
	// stackdome image, whatever its base holds: the API server checks it
	// the same way (time.LoadLocation).
	_ "time/tzdata"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// portOnlyFields are the spec fields that only a serving type means
// something with, by JSON name, and whether s sets each.
func portOnlyFields(s Spec) []struct {
	name string
	set  bool
} {
	return []struct {
		name string
		set  bool
	}{
		{"ports", len(s.Ports) > 0}, {"host", s.Host != ""}, {"hosts", len(s.Hosts) > 0}, {"tls", s.TLS != nil},
		{"middlewares", len(s.Middlewares) > 0}, {"autoscaling", s.Autoscaling != nil},
		// Default fills replicas and errorPages for every type: only a
		// value other than the default is the user's.
		{"replicas", s.Replicas != nil && *s.Replicas != DefaultReplicas},
		{"errorPages", s.ErrorPages != nil && (s.ErrorPages.Brand != "" || s.ErrorPages.Enabled != nil && !*s.ErrorPages.Enabled)},
		{"drainSeconds", s.DrainSeconds != nil},
	}
}

// validateWorkloads checks what the run-to-completion types and the
// sidecars add, as the CRD's rules do, and the schedule as the CronJob
// controller parses it (kube-controller-manager's cron.ParseStandard, which
// the API server also runs on a CronJob): a schedule it cannot parse would
// make the CronJob refused on every sync.
func validateWorkloads(s Spec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.RunsToCompletion() {
		for _, f := range portOnlyFields(s) {
			if f.set {
				errs = append(errs, field.Forbidden(spec.Child(f.name), fmt.Sprintf("type %s runs to completion and serves nothing: %s is for type Service and StatefulService", s.Type, f.name)))
			}
		}
	} else if s.Job != nil {
		errs = append(errs, field.Forbidden(spec.Child("job"), "job is only for type Job or CronJob"))
	}
	switch {
	case s.Type == TypeCronJob && s.CronJob == nil:
		errs = append(errs, field.Required(spec.Child("cronJob"), "type CronJob needs a schedule"))
	case s.Type != TypeCronJob && s.CronJob != nil:
		errs = append(errs, field.Forbidden(spec.Child("cronJob"), "cronJob is only for type CronJob"))
	case s.CronJob != nil:
		errs = append(errs, validateCronJob(spec.Child("cronJob"), *s.CronJob)...)
	}
	if j := s.Job; j != nil {
		if j.BackoffLimit != nil && (*j.BackoffLimit < 0 || *j.BackoffLimit > MaxBackoffLimit) {
			errs = append(errs, field.Invalid(spec.Child("job", "backoffLimit"), *j.BackoffLimit, validation.InclusiveRangeError(0, MaxBackoffLimit)))
		}
		if j.ActiveDeadlineSeconds != nil && *j.ActiveDeadlineSeconds < 1 {
			errs = append(errs, field.Invalid(spec.Child("job", "activeDeadlineSeconds"), *j.ActiveDeadlineSeconds, "must be at least 1"))
		}
	}
	errs = append(errs, validateSidecars(s, spec)...)
	return append(errs, validateWorkloadLimits(s, spec)...)
}

// The size limits of the batch and sidecar fields the CRD states
// (types_batch.go) and validateWorkloadLimits enforces beside the range
// checks above (TestValidateEnforcesEveryCRDLimit holds them equal).
const (
	MaxSidecars         = 8   // spec.sidecars
	MaxSidecarFiles     = 16  // spec.sidecars[*].files
	MaxFileNameLength   = 57  // spec.sidecars[*].files[*], as spec.files[*].name
	MaxScheduleLength   = 128 // spec.cronJob.schedule
	MaxTimeZoneLength   = 32  // spec.cronJob.timeZone
	MaxContainerNameLen = 63  // spec.ports[*].container, a DNS label
)

// validateWorkloadLimits checks the CRD's lengths and counts of the batch
// and sidecar fields, each list only within its limit (as validateLimits).
func validateWorkloadLimits(s Spec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	tooLong := func(p *field.Path, v string, limit int) {
		if len(v) > limit {
			errs = append(errs, field.TooLong(p, "", limit))
		}
	}
	if c := s.CronJob; c != nil {
		tooLong(spec.Child("cronJob", "schedule"), c.Schedule, MaxScheduleLength)
		if c.TimeZone != nil {
			tooLong(spec.Child("cronJob", "timeZone"), *c.TimeZone, MaxTimeZoneLength)
		}
	}
	for i, p := range s.Ports[:min(len(s.Ports), MaxPorts)] {
		tooLong(spec.Child("ports").Index(i).Child("container"), p.Container, MaxContainerNameLen)
	}
	for i, c := range s.Sidecars[:min(len(s.Sidecars), MaxSidecars)] {
		p := spec.Child("sidecars").Index(i)
		tooLong(p.Child("image"), c.Image, MaxImageLength)
		if len(c.Files) > MaxSidecarFiles {
			errs = append(errs, field.TooMany(p.Child("files"), len(c.Files), MaxSidecarFiles))
			continue
		}
		seen := map[string]bool{}
		for j, f := range c.Files {
			tooLong(p.Child("files").Index(j), f, MaxFileNameLength)
			if seen[f] {
				errs = append(errs, field.Duplicate(p.Child("files").Index(j), f))
			}
			seen[f] = true
		}
	}
	return errs
}

// validateCronJob checks a CronJob's schedule and settings.
func validateCronJob(path *field.Path, c CronJobSettings) field.ErrorList {
	var errs field.ErrorList
	sched := path.Child("schedule")
	switch {
	case strings.TrimSpace(c.Schedule) == "":
		errs = append(errs, field.Required(sched, "a cron expression such as '0 3 * * *', or @daily"))
	case strings.Contains(c.Schedule, "TZ"):
		errs = append(errs, field.Invalid(sched, c.Schedule, "cannot hold TZ= or CRON_TZ=: set cronJob.timeZone instead"))
	default:
		if _, err := cron.ParseStandard(c.Schedule); err != nil {
			errs = append(errs, field.Invalid(sched, c.Schedule, "the CronJob controller cannot parse it: "+err.Error()))
		}
	}
	if tz := c.TimeZone; tz != nil {
		// LoadLocation also takes "" (UTC) and "Local"; the API server
		// refuses both as a timeZone.
		if _, err := time.LoadLocation(*tz); err != nil || *tz == "" || *tz == "Local" {
			errs = append(errs, field.Invalid(path.Child("timeZone"), *tz, "not an IANA time zone such as Europe/Berlin"))
		}
	}
	switch c.ConcurrencyPolicy {
	case "", "Allow", "Forbid", "Replace":
	default:
		errs = append(errs, field.NotSupported(path.Child("concurrencyPolicy"), c.ConcurrencyPolicy, []string{"Allow", "Forbid", "Replace"}))
	}
	if d := c.StartingDeadlineSeconds; d != nil && *d < 1 {
		errs = append(errs, field.Invalid(path.Child("startingDeadlineSeconds"), *d, "must be at least 1"))
	}
	for _, l := range []struct {
		name string
		v    *int32
	}{{"successfulJobsHistoryLimit", c.SuccessfulJobsHistoryLimit}, {"failedJobsHistoryLimit", c.FailedJobsHistoryLimit}} {
		if l.v != nil && (*l.v < 0 || *l.v > MaxJobsHistoryLimit) {
			errs = append(errs, field.Invalid(path.Child(l.name), *l.v, validation.InclusiveRangeError(0, MaxJobsHistoryLimit)))
		}
	}
	return errs
}

// validateSidecars checks the sidecars and the ports that name one.
func validateSidecars(s Spec, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	path := spec.Child("sidecars")
	names := map[string]bool{}
	files := map[string]bool{}
	for _, f := range s.Files {
		files[f.Name] = true
	}
	if len(s.Sidecars) > MaxSidecars {
		errs = append(errs, field.TooMany(path, len(s.Sidecars), MaxSidecars))
	}
	for i, c := range s.Sidecars[:min(len(s.Sidecars), MaxSidecars)] {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
		}
		switch {
		case c.Name == ContainerName || c.Name == MigrationContainerName:
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, "a sidecar cannot be named app or migrate: those are the app container and the migration"))
		case names[c.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		names[c.Name] = true
		errs = append(errs, validateImage(c.Image, p.Child("image"))...)
		for j, f := range c.Files[:min(len(c.Files), MaxSidecarFiles)] {
			if !files[f] {
				errs = append(errs, field.Invalid(p.Child("files").Index(j), f, "a sidecar's files must name entries of spec.files"))
			}
		}
		// The env rules are the app's, under the sidecar's path.
		errs = append(errs, validateEnv(c.EnvFrom, c.Env, p)...)
	}
	for i, pt := range s.Ports {
		if pt.Container != "" && pt.Container != ContainerName && (!names[pt.Container] || pt.Container == MigrationContainerName) {
			errs = append(errs, field.Invalid(spec.Child("ports").Index(i).Child("container"), pt.Container, "a port's container must be app or the name of a sidecar"))
		}
	}
	return errs
}

// sidecarEnv is every sidecar's env and envFrom, in order: ConfigRefs
// follows the ConfigMaps and Secrets they use like the app's.
func (s Spec) sidecarEnv() (env []EnvVar, envFrom []EnvFromSource) {
	for _, c := range s.Sidecars {
		env = append(env, c.Env...)
		envFrom = append(envFrom, c.EnvFrom...)
	}
	return env, envFrom
}
