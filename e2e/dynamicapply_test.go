package e2e

// framework.FirstLoop on cases of its own. No build tag: it runs in `make
// test`, so framework/jsonmatch.go has none either.

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

func TestFirstLoop(t *testing.T) {
	cases := map[string]struct {
		want, got string
		path      string
	}{
		"server default in a keyed list is harmless": {
			`{"containers":[{"name":"app","readinessProbe":{"tcpSocket":{"port":80}}}]}`,
			`{"containers":[{"name":"app","readinessProbe":{"tcpSocket":{"port":80},"timeoutSeconds":1}}]}`, ""},
		"server default in an atomic list loops": {
			`{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{}}]}`,
			`{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{},"status":{"phase":"Pending"}}]}`,
			"volumeClaimTemplates[0].status"},
		"normalized value in a keyed list": {
			`{"containers":[{"name":"app","resources":{"requests":{"cpu":"0.5"}}}]}`,
			`{"containers":[{"name":"app","resources":{"requests":{"cpu":"500m"}}}]}`,
			"containers[0].resources.requests.cpu"},
		"scalar list exact":    {`{"s":["500-599"]}`, `{"s":["500-599"]}`, ""},
		"object adds harmless": {`{"spec":{"a":1}}`, `{"spec":{"a":1,"b":2}}`, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want, got any
			if err := framework.DecodeJSON([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := framework.DecodeJSON([]byte(tc.got), &got); err != nil {
				t.Fatal(err)
			}
			path, why := framework.FirstLoop("", want, got)
			if path != tc.path {
				t.Errorf("FirstLoop = %q (%s), want %q", path, why, tc.path)
			}
		})
	}
}
