package schema

// Graceful termination. When a pod is deleted (a rollout, a scale-in, a
// drain), the EndpointSlice controller marks its endpoint terminating at
// once, but Traefik and every Service proxy take a moment to read that and
// stop sending requests — Traefik at least its providers throttle (2s by
// default) after the watch event. A pod that got SIGTERM at once would
// refuse the requests still sent to it. So the app container waits
// DrainSeconds in a preStop sleep — the API's own lifecycle.preStop.sleep,
// no shell needed in the image (KEP-3960: beta and on by default from
// Kubernetes 1.30, the chart's floor; GA in 1.34) — and only then gets
// SIGTERM, with what is left of the grace period to finish.
const (
	// DefaultDrainSeconds is the drain of an app with ports.
	DefaultDrainSeconds int32 = 5
	// DefaultTerminationGracePeriodSeconds is the API server's default.
	DefaultTerminationGracePeriodSeconds int64 = 30
)

// Drain is the preStop sleep of the spec's app container in seconds:
// DrainSeconds, else DefaultDrainSeconds for an app with ports (something
// routes to it) and 0 for one without (nothing does, and a sleep would
// only delay its SIGTERM). 0 means no preStop hook at all: a sleep of zero
// seconds is refused by API servers before 1.33.
func (s Spec) Drain() int32 {
	if s.DrainSeconds != nil {
		return *s.DrainSeconds
	}
	if len(s.Ports) > 0 {
		return DefaultDrainSeconds
	}
	return 0
}

// GracePeriod is the pod's terminationGracePeriodSeconds as the kubelet
// applies it: the spec's, else the API server's default.
func (s Spec) GracePeriod() int64 {
	if s.TerminationGracePeriodSeconds != nil {
		return *s.TerminationGracePeriodSeconds
	}
	return DefaultTerminationGracePeriodSeconds
}
