package main

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// validate completes c from the flags kept raw and checks every setting,
// in a fixed order; the first setting that cannot run is returned as an
// error naming its flag and what it must be. On error c is partly filled
// and must not be used.
func validate(c *config, raw rawFlags) error {
	var err error
	if raw.now != "" {
		if c.syncNow, err = time.Parse(time.RFC3339, raw.now); err != nil {
			return fmt.Errorf("--now: %w", err)
		}
	}
	if c.dialAllow, err = parseAllow(raw.dialAllow); err != nil {
		return fmt.Errorf("--dial-allow: %w", err)
	}
	c.hooks.EntryPoints = splitList(raw.entryPoints)
	if len(c.hooks.EntryPoints) == 0 {
		return errors.New("--entry-points: at least one entry point is required")
	}
	if raw.errorServicePort < 1 || raw.errorServicePort > 65535 {
		return fmt.Errorf("--error-service-port %d: must be between 1 and 65535", raw.errorServicePort)
	}
	c.hooks.ErrorService.Port = int32(raw.errorServicePort)
	c.hooks.NoPodSecurityDefaults = !raw.podSecurityDefaults
	c.hooks.Unrelated.Secrets, c.hooks.Unrelated.ConfigMaps = !raw.relateSecrets, !raw.relateConfigMaps
	if strings.TrimSpace(c.hooks.HTTPEntryPoint) == "" {
		return errors.New("--http-entry-point: an entry point is required")
	}
	// An empty name: the chart installs no error-page Service
	// (errorPages.enabled=false).
	c.hooks.NoErrorService = c.hooks.ErrorService.Name == ""
	if err := c.logLevel.UnmarshalText([]byte(raw.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if c.logFormat != "json" && c.logFormat != "text" {
		return fmt.Errorf("--log-format %q: must be json or text", c.logFormat)
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"port-check-grace", c.hooks.PortCheckGrace},
		{"verdict-requeue", c.hooks.VerdictRequeue},
		{"port-recheck", c.portRecheck},
		{"dial-timeout", c.dialTimeout},
		{"verdict-ttl", c.verdictTTL},
		{"boot-grace", c.hooks.BootGrace},
		// 0 would disable net/http's timeout: a client could then hold a
		// connection, and what it declared, for ever.
		{"read-header-timeout", c.http.readHeaderTimeout},
		{"read-timeout", c.http.readTimeout},
		{"write-timeout", c.http.writeTimeout},
		{"idle-timeout", c.http.idleTimeout},
	} {
		if d.value <= 0 {
			return fmt.Errorf("--%s %s: must be positive", d.flag, d.value)
		}
	}
	if !c.serveHooks && !c.servePages {
		return errors.New("--hooks=false and --pages=false: nothing to serve")
	}
	if c.maxBody < 1 {
		return fmt.Errorf("--max-body %d: must be positive", c.maxBody)
	}
	if c.maxInFlight < 1 {
		return fmt.Errorf("--max-in-flight %d: must be at least 1", c.maxInFlight)
	}
	if c.maxPods < 1 {
		return fmt.Errorf("--max-pods %d: must be at least 1", c.maxPods)
	}
	if c.dialWorkers < 1 || c.dialQueue < 1 {
		return errors.New("--dial-workers and --dial-queue must be at least 1")
	}
	if c.hooks.DefaultResources.Requests, err = parseResources(raw.defaultRequests); err != nil {
		return fmt.Errorf("--default-requests: %w", err)
	}
	if c.hooks.DefaultResources.Limits, err = parseResources(raw.defaultLimits); err != nil {
		return fmt.Errorf("--default-limits: %w", err)
	}
	if c.hooks.NetworkPolicy.StackdomePods, err = parseLabels(raw.stackdomePods); err != nil {
		return fmt.Errorf("--network-policy-stackdome-pods: %w", err)
	}
	if len(c.hooks.NetworkPolicy.StackdomePods) == 0 {
		return errors.New("--network-policy-stackdome-pods: at least one label is required: without one every pod of the namespace would be admitted as stackdome")
	}
	if c.hooks.NetworkPolicy.TraefikPods, err = parseLabels(raw.traefikPods); err != nil {
		return fmt.Errorf("--network-policy-traefik-pods: %w", err)
	}
	for flag, ns := range map[string]string{"--network-policy-stackdome-namespace": c.hooks.NetworkPolicy.StackdomeNamespace, "--network-policy-traefik-namespace": c.hooks.NetworkPolicy.TraefikNamespace} {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return fmt.Errorf("%s %q: %s", flag, ns, strings.Join(msgs, "; "))
		}
	}
	for name, req := range c.hooks.DefaultResources.Requests {
		if lim, ok := c.hooks.DefaultResources.Limits[name]; ok && req.Cmp(lim) > 0 {
			return fmt.Errorf("--default-requests %s=%s: more than --default-limits %s=%s; the API server would refuse every pod", name, req.String(), name, lim.String())
		}
	}
	return nil
}

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
