// Package monitoring holds, as tests, the proof of the chart's monitoring
// artefacts against the real tools and the real exports: the PrometheusRule
// through promtool (tools/promtool's pin, built by `make promtool`), every
// alert and dashboard query through Prometheus' own PromQL parser against a
// scrape of the stackdome binary, and the kube-state-metrics config against
// the generated StackResource CRD. Its own module, so the Prometheus
// dependency tree never reaches stackdome's go.mod.
package monitoring
