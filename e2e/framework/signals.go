//go:build e2e

package framework

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// runCleanupsOnSignal runs cl and exits the process with 2 when it gets
// SIGINT or SIGTERM (an interrupt, a CI cancellation), after one line on
// stderr, prefix: "<signal>: stopping <what>"; so a suite stopped that way
// still stops what it started and removes its scratch directory
// (Pdeathsig covers a crash). A suite's main calls it once cl exists.
func runCleanupsOnSignal(cl *Cleanups, prefix, what string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "%s: %v: stopping %s\n", prefix, s, what)
		cl.Run()
		os.Exit(2)
	}()
}

// failWith is a suite main's way to stop on err: one line on stderr,
// prefix: err, and the exit code 1.
func failWith(prefix string) func(error) int {
	return func(err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prefix, err)
		return 1
	}
}
