package schema

// NetworkPolicy asks for a NetworkPolicy around the app's pods: ingress to
// its public ports from Traefik's namespace, to every declared port from
// stackdome's pods (the port gate's dials) and from the app's own
// namespace, and nothing else.
type NetworkPolicy struct {
	// Enabled makes the NetworkPolicy; unset: the platform's default (the
	// chart's appDefaults.networkPolicy).
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// NetworkPolicyEnabled reports whether the spec gets a NetworkPolicy: its
// own choice when it makes one, else the platform's default.
func (s Spec) NetworkPolicyEnabled(platformDefault bool) bool {
	if s.NetworkPolicy == nil || s.NetworkPolicy.Enabled == nil {
		return platformDefault
	}
	return *s.NetworkPolicy.Enabled
}
