package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

func TestCrashOf(t *testing.T) {
	oom := &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
	tests := map[string]struct {
		reason string
		cs     corev1.ContainerStatus
		want   *schema.FailureDetail // nil: not a crash
	}{
		"running": {
			reason: "a running container is no crash",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		},
		"creating": {
			reason: "ContainerCreating is a pod starting, not failing",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}},
		},
		"crash loop after OOM": {
			reason: "CrashLoopBackOff names the last termination's reason and exit code",
			cs: corev1.ContainerStatus{Name: "app", RestartCount: 6,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 2m40s"}},
				LastTerminationState: corev1.ContainerState{Terminated: oom}},
			want: &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "OOMKilled", ExitCode: new(int32(137)),
				Message: "container app of pod p exited with code 137 (OOMKilled) and is restarting"},
		},
		"crash loop without last state": {
			reason: "the back-off alone still says crash-looping",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}},
			want:   &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "CrashLoopBackOff", Message: "container app of pod p is crash-looping"},
		},
		"terminated with an error": {
			reason: "a terminated container with a non-zero code, reason defaulted to Error",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}},
			want: &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "Error", ExitCode: new(int32(1)),
				Message: "container app of pod p exited with code 1 (Error) and is restarting"},
		},
		"terminated cleanly": {
			reason: "exit 0 is not a crash",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
		},
		"OOMKilled with exit 0": {
			reason: "an OOM kill is a crash whatever the code",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "OOMKilled"}}},
			want: &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "OOMKilled", ExitCode: new(int32(0)),
				Message: "container app of pod p exited with code 0 (OOMKilled) and is restarting"},
		},
		"restarted, running again": {
			reason: "running between restarts: the last termination speaks",
			cs: corev1.ContainerStatus{Name: "app", RestartCount: 2,
				State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: oom}},
			want: &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "OOMKilled", ExitCode: new(int32(137)),
				Message: "container app of pod p exited with code 137 (OOMKilled) and is restarting"},
		},
		"restarted after a clean exit": {
			reason: "a restart after exit 0 is not a crash",
			cs: corev1.ContainerStatus{Name: "app", RestartCount: 1, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		},
		"image pull": {
			reason: "ImagePullBackOff with the kubelet's message",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "x"`}}},
			want: &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "ImagePullBackOff",
				Message: `container app of pod p cannot start: ImagePullBackOff: Back-off pulling image "x"`},
		},
		"invalid image name without message": {
			reason: "a waiting reason without a message still names the cause",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "InvalidImageName"}}},
			want:   &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "InvalidImageName", Message: "container app of pod p cannot start: InvalidImageName"},
		},
		"config error": {
			reason: "CreateContainerConfigError: a missing Secret or ConfigMap",
			cs:     corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "smtp" not found`}}},
			want: &schema.FailureDetail{Type: schema.RuntimeCrash, Container: "app", Reason: "CreateContainerConfigError",
				Message: `container app of pod p cannot start: CreateContainerConfigError: secret "smtp" not found`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := crashOf("p", tc.cs)
			if tc.want == nil {
				if ok {
					t.Fatalf("%s: got a crash %+v", tc.reason, got)
				}
				return
			}
			if !ok {
				t.Fatalf("%s: no crash found", tc.reason)
			}
			if diff := cmp.Diff(*tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCrashDetails(t *testing.T) {
	crashing := corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	readyButRestarted := corev1.ContainerStatus{Name: "app", Ready: true, RestartCount: 3,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	podWith := func(name string, cs ...corev1.ContainerStatus) *observed.Related {
		p := &observed.Related{Metadata: observed.Meta{Name: name}}
		p.Status.ContainerStatuses = cs
		return p
	}
	podWithInit := func(name string, init []corev1.ContainerStatus, cs ...corev1.ContainerStatus) *observed.Related {
		p := podWith(name, cs...)
		p.Status.InitContainerStatuses = init
		return p
	}
	initializing := corev1.ContainerStatus{Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	migrateFailing := corev1.ContainerStatus{Name: "migrate", RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 1m20s"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3}}}
	migrateDone := corev1.ContainerStatus{Name: "migrate", RestartCount: 1,
		State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}
	migrateRunning := corev1.ContainerStatus{Name: "migrate", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	tests := map[string]struct {
		reason string
		pods   []*observed.Related
		want   []schema.FailureDetail
	}{
		"none":  {reason: "no pods, no crash"},
		"ready": {reason: "a ready container that restarted once is healthy now", pods: []*observed.Related{podWith("a", readyButRestarted)}},
		"a failing migration": {
			reason: "an init container exiting non-zero, crash-looping: named as the init container it is; the app waiting behind it is no crash",
			pods:   []*observed.Related{podWithInit("a", []corev1.ContainerStatus{migrateFailing}, initializing)},
			want: []schema.FailureDetail{{Type: schema.RuntimeCrash, Container: "migrate", Reason: "Error", ExitCode: new(int32(3)), Revision: "r1",
				Message: "init container migrate of pod a exited with code 3 (Error) and is restarting"}},
		},
		"a migration done after a failure": {
			reason: "completed (exit 0) after a restart: over, whatever its last termination said",
			pods:   []*observed.Related{podWithInit("a", []corev1.ContainerStatus{migrateDone})},
		},
		"a migration running": {reason: "running for the first time is no crash", pods: []*observed.Related{podWithInit("a", []corev1.ContainerStatus{migrateRunning}, initializing)}},
		"first pod speaks for the container": {
			reason: "two pods crash the same container: one detail, from the first pod",
			pods:   []*observed.Related{podWith("a", crashing), podWith("b", crashing)},
			want: []schema.FailureDetail{{Type: schema.RuntimeCrash, Container: "app", Reason: "CrashLoopBackOff", Revision: "r1",
				Message: "container app of pod a is crash-looping"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, crashDetails(tc.pods, "r1")); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCrashReason(t *testing.T) {
	tests := map[string]schema.Reason{
		"ImagePullBackOff": schema.ReasonImagePullFailed, "ErrImagePull": schema.ReasonImagePullFailed, "InvalidImageName": schema.ReasonImagePullFailed,
		"ErrImageNeverPull": schema.ReasonImagePullFailed, "CreateContainerConfigError": schema.ReasonConfigError, "CreateContainerError": schema.ReasonConfigError,
		"RunContainerError": schema.ReasonConfigError, "OOMKilled": schema.ReasonCrashLooping, "Error": schema.ReasonCrashLooping, "CrashLoopBackOff": schema.ReasonCrashLooping,
	}
	got := map[string]schema.Reason{}
	for r := range tests {
		got[r] = crashReason(schema.FailureDetail{Reason: r})
	}
	if diff := cmp.Diff(tests, got); diff != "" {
		t.Errorf("crashReason (-want +got):\n%s", diff)
	}
}
