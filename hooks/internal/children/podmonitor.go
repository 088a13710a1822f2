package children

import "github.com/stackdome/stackdome/schema"

// podMonitor is the Prometheus Operator PodMonitor of spec.metrics, built
// as a map like every custom resource (stackdome carries no Go types of the
// operator's CRDs): the app's pods, scraped on the named port at the path.
// Nil unless the platform has PodMonitors on and the spec names metrics:
// Metacontroller refuses a child kind the cluster does not serve, so the
// kind is a child only where the chart registers it, with this flag.
func podMonitor(cfg Config, name string, spec schema.Spec) object {
	if !cfg.PodMonitors || spec.Metrics == nil {
		return nil
	}
	sel := object{}
	for k, v := range Selector(name) {
		sel[k] = v
	}
	return object{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PodMonitor",
		"metadata":   crdMeta(name, name),
		"spec": object{
			"selector":            object{"matchLabels": sel},
			"podMetricsEndpoints": []any{object{"port": spec.Metrics.Port, "path": spec.Metrics.MetricsPath()}},
		},
	}
}
