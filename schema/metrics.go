package schema

// Metrics names the app's metrics endpoint: with the platform's PodMonitors
// on (the chart's appDefaults.podMonitor.enabled), a Prometheus Operator
// PodMonitor scrapes it.
type Metrics struct {
	// Port is the name of the declared port that serves the metrics.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Port string `json:"port"`
	// Path of the metrics; /metrics when unset.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^/[-a-zA-Z0-9._~/%]*$`
	// +optional
	Path string `json:"path,omitempty"`
}

// DefaultMetricsPath is the path of spec.metrics without one.
const DefaultMetricsPath = "/metrics"

// MetricsPath is the path the metrics are scraped at.
func (m Metrics) MetricsPath() string {
	if m.Path == "" {
		return DefaultMetricsPath
	}
	return m.Path
}
