package hooks

import (
	"encoding/json"
	"fmt"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// answer is the pipeline's answer to one sync: the status, the children
// (the spec's own, then the routing ones), the resync asked for, the dials
// wanted, and for logs the parent's namespace/name. An answer held (held
// says why) has its dials and parent only: it is not sent (HeldError).
type answer struct {
	parent       string
	status       schema.Status
	own, routing childList
	resync       float64 // resyncAfterSeconds; 0: none
	jobs         []DialJob
	held         string
}

// childList is some of an answer's children: objects, or already encoded as
// a JSON array (the handler's cache), and how Metacontroller names each
// (refs, in the same order) for the status to look for them.
type childList struct {
	objects []any
	encoded []byte
	refs    []observed.ChildRef
}

// response is the answer as Sync returns it; its children are objects.
func (a *answer) response() *metacontroller.SyncResponse {
	children := append(a.own.objects, a.routing.objects...)
	if children == nil {
		children = []any{} // never null: an absent list deletes every child
	}
	return &metacontroller.SyncResponse{Status: a.status, Children: children, ResyncAfterSeconds: a.resync}
}

// encode writes what json.Marshal writes for the answer's
// metacontroller.SyncResponse, splicing children already encoded instead of
// encoding them again (TestFastPathIsSync holds the two equal).
func (a *answer) encode() ([]byte, error) {
	if a.own.encoded == nil && a.routing.encoded == nil {
		b, err := json.Marshal(a.response())
		if err != nil {
			return nil, fmt.Errorf("encoding response: %w", err)
		}
		return b, nil
	}
	st, err := json.Marshal(a.status)
	if err != nil {
		return nil, fmt.Errorf("encoding response: %w", err)
	}
	b := make([]byte, 0, len(st)+len(a.own.encoded)+len(a.routing.encoded)+64)
	b = append(b, `{"status":`...)
	b = append(b, st...)
	b = append(b, `,"children":`...)
	b = appendJoined(b, a.own.encoded, a.routing.encoded)
	if a.resync != 0 {
		r, err := json.Marshal(a.resync)
		if err != nil {
			return nil, fmt.Errorf("encoding response: %w", err)
		}
		b = append(b, `,"resyncAfterSeconds":`...)
		b = append(b, r...)
	}
	return append(b, '}'), nil
}

// appendJoined appends two encoded JSON arrays as one array.
func appendJoined(b, x, y []byte) []byte {
	switch {
	case len(y) <= 2: // []
		return append(b, x...)
	case len(x) <= 2:
		return append(b, y...)
	}
	b = append(b, x[:len(x)-1]...)
	b = append(b, ',')
	return append(b, y[1:]...)
}
