package hooks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
)

// The hooks' tests reach the sync hook through the one Metacontroller
// stand-in, internal/mcrequest: these helpers only pass it what this
// package's Config answers.

// standIn is the sync request Metacontroller sends for parent with the
// chart's controller (sync hook v2): children observed as given, and of
// cluster what the customize hook's rules for parent relate. children and
// cluster are not changed.
func standIn(t testing.TB, cfg Config, parent mcrequest.Object, children, cluster []mcrequest.Object) *metacontroller.SyncRequest {
	t.Helper()
	cust, err := cfg.Customize(mcrequest.Customize(parent))
	require.NoError(t, err)
	s := mcrequest.Sync{Parent: mcrequest.Clone(parent), Rules: cust.RelatedResources}
	for _, c := range children {
		s.Children = append(s.Children, mcrequest.Clone(c))
	}
	for _, o := range cluster {
		s.Cluster = append(s.Cluster, mcrequest.Clone(o))
	}
	return s.Request()
}

// firstAnswer is the children cfg answers to parent's first sync, when
// nothing is observed yet: what a serving cluster holds once Metacontroller
// created them.
func firstAnswer(t testing.TB, cfg Config, parent mcrequest.Object, now time.Time) []mcrequest.Object {
	t.Helper()
	resp, _, err := cfg.Sync(standIn(t, cfg, parent, nil, nil), nil, now)
	require.NoError(t, err)
	return mcrequest.Objects(resp.Children)
}

// stackResource is p's parent object, the test failing when its spec is
// not what the API server stores.
func stackResource(t testing.TB, p mcrequest.StackResource) mcrequest.Object {
	t.Helper()
	o, err := p.Object()
	require.NoError(t, err)
	return o
}
