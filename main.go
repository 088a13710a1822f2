// Command stackdome answers Metacontroller's hooks for StackResources and
// serves Traefik's branded error pages.
//
//	stackdome [serve] [flags]          serve hooks on --listen, pages on --error-pages-listen, metrics on --metrics-listen
//	stackdome sync [-f request.json]   print the answer to one sync request (stdin by default)
//	stackdome render [-f app.yaml]     print the children of each StackResource's first sync, as YAML
//
// Every flag can also be set as STACKDOME_<FLAG> (dashes as underscores);
// a flag on the command line wins.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, errHelp) {
		return
	}
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "stackdome:", err)
		}
		os.Exit(exitCode(err))
	}
}

// errUsage is a command line that cannot run (exit 2); errHelp is --help
// (exit 0). The flag package has printed why.
var (
	errUsage = errors.New("usage")
	errHelp  = errors.New("help")
)

// run dispatches a command line; it returns when the command is done or ctx
// is cancelled and everything it started has stopped.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && (args[0] == "serve" || args[0] == "sync" || args[0] == "render") {
		cmd, args = args[0], args[1:]
	}
	cfg, err := parseFlags(cmd, args, os.LookupEnv, stderr)
	if err != nil {
		return err
	}
	if cmd == "sync" {
		return syncOnce(cfg, stdin, stdout)
	}
	if cmd == "render" {
		return renderCmd(cfg, stdin, stdout, stderr)
	}
	return serve(ctx, cfg, stdout)
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}
