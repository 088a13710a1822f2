package main

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestPause runs the built pause: it keeps running until SIGTERM, then
// exits 0.
func TestPause(t *testing.T) {
	bin := t.TempDir() + "/pause"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Before SIGTERM it must still be running; a pause that returns at
	// once would be done here.
	select {
	case err := <-done:
		t.Fatalf("pause exited before a signal: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("pause after SIGTERM: %v, want exit 0", err)
	}
}
