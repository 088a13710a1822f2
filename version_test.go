package main

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDescribeBuild: the revision make links in wins; without it, the one
// Go stamped (with -dirty for uncommitted changes, as make says it); else
// unknown.
func TestDescribeBuild(t *testing.T) {
	vcs := func(settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{}
		for i := 0; i < len(settings); i += 2 {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return info
	}
	tests := map[string]struct {
		revision string
		info     *debug.BuildInfo
		want     string
	}{
		"make build":            {revision: "8a7bf90", info: vcs("-buildvcs", "false"), want: "stackdome 0.2.0 (revision 8a7bf90, go1.26.8, linux/amd64)"},
		"make build, dirty":     {revision: "8a7bf90-dirty", want: "stackdome 0.2.0 (revision 8a7bf90-dirty, go1.26.8, linux/amd64)"},
		"linked over stamped":   {revision: "8a7bf90", info: vcs("vcs.revision", "1234567", "vcs.modified", "true"), want: "stackdome 0.2.0 (revision 8a7bf90, go1.26.8, linux/amd64)"},
		"go build in a clone":   {info: vcs("vcs", "git", "vcs.revision", "1234567", "vcs.modified", "false"), want: "stackdome 0.2.0 (revision 1234567, go1.26.8, linux/amd64)"},
		"go build, uncommitted": {info: vcs("vcs.revision", "1234567", "vcs.modified", "true"), want: "stackdome 0.2.0 (revision 1234567-dirty, go1.26.8, linux/amd64)"},
		"go run":                {info: vcs("-compiler", "gc"), want: "stackdome 0.2.0 (revision unknown, go1.26.8, linux/amd64)"},
		"no build info":         {want: "stackdome 0.2.0 (revision unknown, go1.26.8, linux/amd64)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := describeBuild("0.2.0", tc.revision, tc.info, "go1.26.8", "linux/amd64").String()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
