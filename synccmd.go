package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/yaml"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// syncOnce answers one sync request offline, through the same Sync the
// server calls, with a verifier that knows nothing yet — what a freshly
// started server answers. An answer that says the spec is invalid
// (InvalidSpec) is printed too, and then fails with its message: a script
// or CI job checking a spec this way must not read it as accepted.
func syncOnce(c config, stdin io.Reader, stdout io.Writer) error {
	in := stdin
	if c.syncFile != "-" {
		f, err := os.Open(c.syncFile)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	body, err := io.ReadAll(io.LimitReader(in, c.maxBody+1))
	if err != nil {
		return fmt.Errorf("reading request: %w", err)
	}
	if int64(len(body)) > c.maxBody {
		return fmt.Errorf("request exceeds %d bytes", c.maxBody)
	}
	var req metacontroller.SyncRequest
	err = json.Unmarshal(body, &req)
	if err != nil || len(req.Parent) == 0 {
		if isStackResource(body) {
			return errors.New("the input is a StackResource, not a sync request: stackdome render -f <file> prints the children of its first sync")
		}
	}
	if err != nil {
		return fmt.Errorf("decoding request: %w", err)
	}
	now := c.syncNow
	if now.IsZero() {
		now = time.Now()
	}
	resp, _, err := c.hooks.Sync(&req, nil, now)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(resp, "", "  ")
	if err != nil {
		return err
	}
	if _, err = fmt.Fprintf(stdout, "%s\n", out); err != nil {
		return err
	}
	if msg, ok := invalidSpec(resp); ok {
		return fmt.Errorf("the answer is %s: %s", schema.ReasonInvalidSpec, msg)
	}
	return nil
}

// isStackResource says body is a StackResource as a team writes it, in
// YAML or JSON, which sync is sometimes handed instead of a request.
func isStackResource(body []byte) bool {
	var o struct{ Kind string }
	return yaml.Unmarshal(body, &o) == nil && o.Kind == schema.Kind
}

// invalidSpec is the message of the answer's Stalled condition when its
// reason is InvalidSpec.
func invalidSpec(resp *metacontroller.SyncResponse) (string, bool) {
	b, err := json.Marshal(resp.Status)
	if err != nil {
		return "", false
	}
	var st schema.Status
	if err := json.Unmarshal(b, &st); err != nil {
		return "", false
	}
	c := meta.FindStatusCondition(st.Conditions, string(schema.CondStalled))
	if c == nil || c.Reason != string(schema.ReasonInvalidSpec) {
		return "", false
	}
	return c.Message, true
}
