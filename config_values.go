package main

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The syntax of the flags whose value is a list: comma separated, blanks
// trimmed, empty items dropped (splitList); labels as k=v, resources as
// name=quantity, CIDRs. Each parser says what it refuses; validate
// (config.go) names the flag.

// parseLabels parses k=v pairs, comma separated, each a valid label. Empty
// gives nil.
func parseLabels(csv string) (map[string]string, error) {
	var out map[string]string
	for _, item := range splitList(csv) {
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want key=value", item)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if msgs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(msgs) > 0 {
			return nil, fmt.Errorf("%q: %s", item, strings.Join(msgs, "; "))
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out, nil
}

// labelString is labels as parseLabels reads them, sorted.
func labelString(labels map[string]string) string {
	var pairs []string
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// parseResources parses --default-requests and --default-limits:
// name=quantity pairs, comma separated ("cpu=100m,memory=128Mi"), each name
// once and each quantity positive. Empty gives nil.
func parseResources(csv string) (corev1.ResourceList, error) {
	var out corev1.ResourceList
	for _, item := range splitList(csv) {
		name, value, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want name=quantity, e.g. cpu=100m", item)
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("%s=%s: must be positive", name, value)
		}
		if out == nil {
			out = corev1.ResourceList{}
		}
		if _, dup := out[corev1.ResourceName(name)]; dup {
			return nil, fmt.Errorf("%s given twice", name)
		}
		out[corev1.ResourceName(name)] = q
	}
	return out, nil
}

// splitList splits a comma-separated flag value, trimming blanks and
// dropping empty items; nothing left gives nil.
func splitList(csv string) []string {
	var out []string
	for item := range strings.SplitSeq(csv, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parseAllow parses --dial-allow: a comma-separated list of CIDRs such as
// "10.0.0.0/8,fd00::/8". The empty string (or only blanks) gives nil, with
// which the verifier dials nothing. Each prefix is masked to its network address. A
// bare IP or any other non-CIDR entry is an error naming the entry.
func parseAllow(csv string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range splitList(csv) {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return nil, fmt.Errorf("parsing --dial-allow entry %q (want a CIDR such as 10.0.0.0/8): %w", item, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
