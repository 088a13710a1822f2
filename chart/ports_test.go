package chart

import (
	"strings"
	"testing"
)

// TestPortsMustDiffer: two of stackdome's servers on one port would crash
// the pod at start (the second bind fails) and merge two audiences of the
// NetworkPolicy; rendering refuses it, naming the three values.
func TestPortsMustDiffer(t *testing.T) {
	tests := map[string]struct {
		set     []string
		wantErr string
	}{
		"defaults":                  {},
		"all moved":                 {set: []string{"ports.hooks=9000", "ports.errorPages=9001", "ports.metrics=9002"}},
		"metrics on the hooks port": {set: []string{"ports.metrics=8080"}, wantErr: "ports.hooks (8080), ports.errorPages (8082) and ports.metrics (8080) must all differ"},
		"metrics on the pages port": {set: []string{"ports.metrics=8082"}, wantErr: "ports.hooks (8080), ports.errorPages (8082) and ports.metrics (8082) must all differ"},
		"pages on the hooks port":   {set: []string{"ports.errorPages=8080"}, wantErr: "ports.hooks (8080), ports.errorPages (8080) and ports.metrics (8081) must all differ"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runHelm(t, install{set: tc.set}.args("template")...)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
