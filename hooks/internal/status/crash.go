package status

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// Waiting reasons that are not crashes of a running app but stop it all the same.
var (
	imagePullReasons = map[string]bool{"ImagePullBackOff": true, "ErrImagePull": true, "InvalidImageName": true, "ErrImageNeverPull": true}
	configReasons    = map[string]bool{"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true}
)

// crashing is the row "container crash-looping / OOMKilled / exiting" (and
// the image-pull and container-config failures that stop it the same way):
// the first crash names the reason; the port table and the window stand as
// they were.
func crashing(f *facts) (row, bool) {
	crashes := crashDetails(f.pods, f.workloadRev)
	return crashRow(f, crashes), len(crashes) > 0
}

// crashKept is the row of a crash seen before, kept while the app is not
// serving: a crash-looping container is Running between restarts, and a
// port verdict taken then must not overwrite the real cause.
func crashKept(f *facts) (row, bool) {
	kept := f.prev.of(schema.RuntimeCrash, f.workloadRev)
	return crashRow(f, kept), len(kept) > 0
}

// crashRow is the row of crashes, the first naming the reason.
func crashRow(f *facts, crashes []schema.FailureDetail) row {
	if len(crashes) == 0 {
		return row{}
	}
	return row{
		health:       health{reason: crashReason(crashes[0]), message: crashes[0].Message},
		details:      crashes,
		ports:        f.prev.ports,
		failingSince: f.prev.failingSince,
	}
}

// crashDetails returns one runtime_crash detail per container of the
// current-revision pods that is not ready because it crashes, was
// OOMKilled, exits, or cannot start — the init containers (spec.migration's
// migrate and the sidecars) first, read alike: a migration exiting non-zero
// keeps the pod from starting the way a crashing app does. The first pod
// (by name) that shows a container's failure speaks for it.
func crashDetails(pods []*observed.Related, workloadRev string) []schema.FailureDetail {
	var out []schema.FailureDetail
	seen := map[string]bool{}
	for _, p := range pods {
		for _, cs := range p.Status.InitContainerStatuses {
			if t := cs.State.Terminated; cs.Ready || seen[cs.Name] || (t != nil && t.ExitCode == 0 && t.Reason != "OOMKilled") {
				// Done: an init container that completed is not ready in
				// some kubelets' reports, and its earlier failures are over.
				continue
			}
			d, ok := crashOf(p.Metadata.Name, cs)
			if !ok {
				continue
			}
			// The init containers are the migration and the native
			// sidecars (restartPolicy Always), which crash-loop like the app.
			kind := "sidecar "
			if cs.Name == schema.MigrationContainerName {
				kind = "init "
			}
			d.Revision, d.Message = workloadRev, kind+d.Message
			seen[cs.Name] = true
			out = append(out, d)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready || seen[cs.Name] {
				continue
			}
			d, ok := crashOf(p.Metadata.Name, cs)
			if !ok {
				continue
			}
			d.Revision = workloadRev
			seen[cs.Name] = true
			out = append(out, d)
		}
	}
	return out
}

// crashOf reads one container status the way kubectl users do: a waiting
// reason, the current termination, or the last one of a restarted container.
func crashOf(podName string, cs corev1.ContainerStatus) (schema.FailureDetail, bool) {
	d := schema.FailureDetail{Type: schema.RuntimeCrash, Container: cs.Name}
	last := cs.LastTerminationState.Terminated
	w, term := cs.State.Waiting, cs.State.Terminated
	switch {
	case w != nil && (imagePullReasons[w.Reason] || configReasons[w.Reason]):
		d.Reason = w.Reason
		d.Message = fmt.Sprintf("container %s of pod %s cannot start: %s", cs.Name, podName, w.Reason)
		if w.Message != "" {
			d.Message += ": " + w.Message
		}
		return d, true
	case w != nil && w.Reason == "CrashLoopBackOff":
		d.Reason = w.Reason
		if last != nil {
			d.Reason, d.ExitCode = terminationReason(last), new(last.ExitCode)
		}
	case term != nil && (term.ExitCode != 0 || term.Reason == "OOMKilled"):
		d.Reason, d.ExitCode = terminationReason(term), new(term.ExitCode)
	case cs.RestartCount > 0 && last != nil && (last.ExitCode != 0 || last.Reason == "OOMKilled"):
		d.Reason, d.ExitCode = terminationReason(last), new(last.ExitCode)
	default:
		return d, false
	}
	d.Message = fmt.Sprintf("container %s of pod %s is crash-looping", cs.Name, podName)
	if d.ExitCode != nil {
		d.Message = fmt.Sprintf("container %s of pod %s exited with code %d (%s) and is restarting", cs.Name, podName, *d.ExitCode, d.Reason)
	}
	return d, true
}

func terminationReason(t *corev1.ContainerStateTerminated) string {
	if t.Reason != "" {
		return t.Reason
	}
	return "Error"
}

// crashReason is the condition reason of a runtime_crash detail.
func crashReason(d schema.FailureDetail) schema.Reason {
	switch {
	case imagePullReasons[d.Reason]:
		return schema.ReasonImagePullFailed
	case configReasons[d.Reason]:
		return schema.ReasonConfigError
	}
	return schema.ReasonCrashLooping
}
