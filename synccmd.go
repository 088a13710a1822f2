package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stackdome/stackdome/metacontroller"
)

// syncOnce answers one sync request offline, through the same Sync the
// server calls, with a verifier that knows nothing yet — what a freshly
// started server answers.
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
	if err := json.Unmarshal(body, &req); err != nil {
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
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
