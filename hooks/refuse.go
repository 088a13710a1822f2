package hooks

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// How the handler answers: a refusal in one short line with its status
// code, or 200 with an encoded body.

// refuse answers an error in one short line: Metacontroller copies the body
// into an event, so it stays short and free of request content beyond the
// reason. The log line carries the same clipped reason (at most
// maxReason bytes), never the request's content at full length.
func (h *Handler) refuse(w http.ResponseWriter, hook string, code int, err error) int {
	reason := oneLine(err.Error())
	h.logger().Warn(hook+" refused", "code", code, "err", reason)
	text(w, code, reason)
	return code
}

// abandoned ends a sync whose client went away (Metacontroller's hook
// timeout, or a closed connection) between two stages of the pipeline:
// nothing is scheduled, and the answer, 503, reaches nobody.
func (h *Handler) abandoned(w http.ResponseWriter, err error) int {
	h.logger().Debug("sync abandoned", "err", err)
	text(w, http.StatusServiceUnavailable, "request abandoned: "+oneLine(err.Error()))
	return http.StatusServiceUnavailable
}

// statusOf is the HTTP status code of a pipeline error: 400 for a request
// it cannot read, 422 for one it cannot answer without deleting what runs,
// 500 for anything else (a bug of ours).
func statusOf(err error) int {
	var re *RequestError
	if errors.As(err, &re) {
		switch re.Kind {
		case Malformed:
			return http.StatusBadRequest
		case Unanswerable:
			return http.StatusUnprocessableEntity
		}
	}
	return http.StatusInternalServerError
}

// maxReason bounds the reason of a refusal, in the answer and in the log.
const maxReason = 512

// oneLine keeps a reason to one line of at most maxReason bytes. It looks at
// no more than a few times maxReason of s, so that a reason quoting a huge
// input costs no more than a short one.
func oneLine(s string) string {
	cut := len(s) > 4*maxReason
	if cut {
		s = s[:4*maxReason]
	}
	s = strings.Join(strings.Fields(s), " ")
	if cut || len(s) > maxReason {
		s = s[:min(len(s), maxReason-3)]
		s = strings.ToValidUTF8(s, "") + "..."
	}
	return s
}

// writeBody answers 200 with an encoded JSON body.
func writeBody(w http.ResponseWriter, b []byte) int {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return http.StatusOK
}
