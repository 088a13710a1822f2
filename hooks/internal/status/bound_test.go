package status

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// TestInvalidStatusIsBounded: an invalid spec keeps the request's own
// status, which a forged request (or an older stackdome that wrote a
// 65,535-row port table) makes as large as it likes. What Invalid answers
// is held to the stated bounds: at most schema.MaxPorts port rows,
// maxDetails details, every message at most maxMessage bytes and valid
// UTF-8. On main the whole 65,535-row table, 8 MB of it, was echoed back.
func TestInvalidStatusIsBounded(t *testing.T) {
	huge := strings.Repeat("é", 100_000) // two bytes a rune: a cut at maxMessage falls inside one
	var prev schema.Status
	for i := range 65535 {
		prev.Ports = append(prev.Ports, schema.PortStatus{Name: "p" + strconv.Itoa(i), Port: int32(i + 1), State: schema.PortClosed, Message: "refused"})
	}
	prev.Ports[0].Message = huge
	for range 1000 {
		prev.LastFailureDetails = append(prev.LastFailureDetails, schema.FailureDetail{Type: schema.RuntimeCrash, Message: huge})
	}
	prev.Conditions = []metav1.Condition{
		{Type: string(schema.CondAvailable), Status: metav1.ConditionTrue, Reason: "Ready", Message: huge},
		{Type: string(schema.CondErrorPages), Status: metav1.ConditionTrue, Reason: strings.Repeat("R", 5000), Message: huge},
	}
	prev.Revision = huge
	p := &observed.Parent{Metadata: observed.Meta{Name: "app", Namespace: "ns", Generation: 2}, Status: prev}

	st := Invalid(p, errorString(huge), metav1.Now())

	require.Len(t, st.Ports, schema.MaxPorts)
	require.Len(t, st.LastFailureDetails, maxDetails)
	var msgs []string
	for _, c := range st.Conditions {
		msgs = append(msgs, c.Message)
		require.LessOrEqual(t, len(c.Reason), maxReason)
	}
	for _, ps := range st.Ports {
		msgs = append(msgs, ps.Message)
	}
	for _, d := range st.LastFailureDetails {
		msgs = append(msgs, d.Message)
	}
	for _, m := range msgs {
		require.LessOrEqual(t, len(m), maxMessage)
		require.True(t, utf8.ValidString(m), "clipped on a rune boundary")
	}
	require.Equal(t, clip(huge), st.Ports[0].Message)
	require.True(t, strings.HasSuffix(st.Ports[0].Message, "..."))
	b, err := json.Marshal(st)
	require.NoError(t, err)
	require.Less(t, len(b), 256<<10, "the status is far below etcd's 1.5 MiB")
	require.Len(t, p.Status.Ports, 65535, "the request's status is not modified")
	require.Equal(t, huge, p.Status.Ports[0].Message, "the request's status is not modified")
}

// TestBoundKeepsAWellFormedStatus: a status within the bounds comes back as
// it was, sharing its slices (no copy on the hot path).
func TestBoundKeepsAWellFormedStatus(t *testing.T) {
	st := schema.Status{Revision: "abc", Ports: []schema.PortStatus{{Name: "http", Port: 80, State: schema.PortOpen}},
		Conditions: []metav1.Condition{{Type: "Available", Reason: "Ready", Message: strings.Repeat("m", maxMessage)}}}
	got := bound(st)
	require.Equal(t, st, got)
	require.Same(t, &st.Ports[0], &got.Ports[0])
	require.Same(t, &st.Conditions[0], &got.Conditions[0])
}

type errorString string

func (e errorString) Error() string { return string(e) }
