package main

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
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
	return nil
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
// "10.0.0.0/8,fd00::/8". The empty string (or only blanks) gives nil, which
// allows every address. Each prefix is masked to its network address. A
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
