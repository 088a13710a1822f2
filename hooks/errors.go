package hooks

// ErrorKind says why a request cannot be answered; the handler chooses the
// HTTP status code from it.
type ErrorKind int

const (
	// Malformed: the request is not a sync or customize request the hook
	// can read (HTTP 400).
	Malformed ErrorKind = iota + 1
	// Unanswerable: the request is well formed, but every answer would
	// delete or change what runs (HTTP 422).
	Unanswerable
)

// RequestError is a request the hook cannot answer, and why (Kind).
// Metacontroller changes nothing on a non-200 answer and retries.
type RequestError struct {
	Kind ErrorKind
	Err  error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func malformed(err error) error { return &RequestError{Kind: Malformed, Err: err} }

// HeldError is a sync not answered yet: what its status should say hangs
// on the dials Sync returns beside it, and any status answered meanwhile
// could undo what another replica has decided (docs/reference.md, the state
// table's rows "deciding": a port check's grace has ended and the refusal
// at hand was dialed inside it; and "serving, no verdict at all" while the
// pods just turned ready: another replica may have written Serving). The
// handler answers it 429 with
// Retry-After (RetryAfter), which Metacontroller honours by syncing the
// parent again then, with no event and nothing changed meanwhile
// (metacontroller/metacontroller@v4.17.2 pkg/hooks/webhook.go,
// TooManyRequestError).
type HeldError struct {
	Reason string
}

func (e *HeldError) Error() string { return "answer held: " + e.Reason }
