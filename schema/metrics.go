package schema

import "k8s.io/apimachinery/pkg/util/validation/field"

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

// validateMetrics checks spec.metrics as the CRD does: its port is a
// declared port.
func validateMetrics(s Spec) field.ErrorList {
	m := s.Metrics
	if m == nil {
		return nil
	}
	p := field.NewPath("spec", "metrics")
	for _, port := range s.Ports {
		if port.Name == m.Port {
			return nil
		}
	}
	if m.Port == "" {
		return field.ErrorList{field.Required(p.Child("port"), "the name of a declared port")}
	}
	return field.ErrorList{field.NotFound(p.Child("port"), m.Port)}
}
