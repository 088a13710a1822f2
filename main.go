// Command stackdome answers Metacontroller's hooks for StackResources and
// serves Traefik's branded error pages.
//
//	stackdome [serve] [flags]
//	    serve hooks on --listen, pages on --error-pages-listen, metrics on --metrics-listen
//	stackdome sync [-f request.json]
//	    print the answer to one sync request (stdin by default)
//	stackdome render [-f app.yaml]
//	    print the children of each StackResource's first sync, as YAML
//	stackdome version
//	    print the version, the commit and the Go version (also --version)
//	stackdome help [command]
//	    print the commands, or one command's flags (also --help)
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
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go stopOnSignals(sigs, cancel, os.Stderr, os.Exit)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	if err != nil && !errors.Is(err, errHelp) {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "stackdome:", err)
		}
		os.Exit(exitCode(err))
	}
}

// command is one of stackdome's commands: its name on the command line, the
// one line `stackdome help` lists it with, and what runs it with the
// arguments after its name. run parses its own flags (parseFlags, or
// parseArgs for a command of its own flags); --help prints its help to
// stdout and returns errHelp, a command line it cannot run returns a
// usageError.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands are stackdome's commands, in the order help lists them; the
// first is the default (`stackdome --listen=…` is `stackdome serve
// --listen=…`, the image's entrypoint).
func commands() []command {
	return []command{
		{"serve", "serve the hooks, the error pages and /metrics until SIGINT or SIGTERM", serveCmd},
		{"sync", "print the answer to one sync request, offline, through the server's code", syncCmd},
		{"render", "print the children of each StackResource's first sync, as YAML, offline", renderMain},
		{"version", "print the version, the commit and the Go version stackdome was built with", versionCmd},
		{"help", "print the commands, or one command's help and flags", helpCmd},
	}
}

// errUsage is a command line that cannot run (exit 2), its one line already
// printed; errHelp is --help (exit 0), its help already printed.
var (
	errUsage = errors.New("usage")
	errHelp  = errors.New("help")
)

// usageError is a refused command line or STACKDOME_* variable: run prints
// it as one line naming the command and where its help is, and main exits
// 2. Its message is the wrapped error's.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// Is makes a usageError an errUsage to exitCode, wherever it is read.
func (usageError) Is(target error) bool { return target == errUsage }

// run dispatches a command line; it returns when the command is done or ctx
// is cancelled and everything it started has stopped. A usage error is
// printed here, on one line to stderr, and returned as errUsage.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c := commands()[0]
	switch {
	case len(args) == 0:
	case slices.Contains([]string{"-h", "-help", "--help"}, args[0]):
		c, args = commandNamed("help"), args[1:]
	case slices.Contains([]string{"-version", "--version"}, args[0]):
		c, args = commandNamed("version"), args[1:]
	case !strings.HasPrefix(args[0], "-"):
		c, args = commandNamed(args[0]), args[1:]
		if c.run == nil {
			fmt.Fprintf(stderr, "stackdome: unknown command %q (see stackdome --help)\n", c.name)
			return errUsage
		}
	}
	err := c.run(ctx, args, stdin, stdout, stderr)
	if ue := (usageError{}); errors.As(err, &ue) {
		fmt.Fprintf(stderr, "stackdome %s: %v (see stackdome %s --help)\n", c.name, ue.error, c.name)
		return errUsage
	}
	return err
}

// commandNamed is the command called name; one with no run if there is
// none.
func commandNamed(name string) command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return command{name: name}
}

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

func serveCmd(ctx context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	cfg, err := parseFlags("serve", args, os.LookupEnv, stdout)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, stdout)
}

func syncCmd(_ context.Context, args []string, stdin io.Reader, stdout, _ io.Writer) error {
	cfg, err := parseFlags("sync", args, os.LookupEnv, stdout)
	if err != nil {
		return err
	}
	return syncOnce(cfg, stdin, stdout)
}

func renderMain(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseFlags("render", args, os.LookupEnv, stdout)
	if err != nil {
		return err
	}
	return renderCmd(cfg, stdin, stdout, stderr)
}

func versionCmd(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) error {
	if err := parseArgs(newFlagSet("version", "", stdout), args, 0); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, thisBuild())
	return err
}

// helpCmd prints the commands (its own --help too), or with a command's
// name that command's help: what its --help prints.
func helpCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("help", "[command]", stdout)
	fs.Usage = func() { printCommands(stdout) }
	if err := parseArgs(fs, args, 1); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		printCommands(stdout)
		return nil
	}
	c := commandNamed(fs.Arg(0))
	if c.run == nil {
		return usageError{fmt.Errorf("unknown command %q", c.name)}
	}
	return c.run(ctx, []string{"--help"}, stdin, stdout, stderr)
}

// printCommands is stackdome's help: the commands and their summaries.
func printCommands(w io.Writer) {
	fmt.Fprint(w, "Usage: stackdome <command> [flags]\n\n"+
		"stackdome answers Metacontroller's hooks for StackResources and serves\n"+
		"Traefik's branded error pages.\n\nCommands:\n")
	for i, c := range commands() {
		fmt.Fprintf(w, "  %-8s  %s\n", c.name, c.summary)
		if i == 0 {
			fmt.Fprintf(w, "  %-8s  (the default: stackdome [flags] is stackdome %s [flags])\n", "", c.name)
		}
	}
	fmt.Fprint(w, "\nstackdome help <command>, or stackdome <command> --help, prints a command's help and flags.\n"+
		"stackdome --version is stackdome version.\n")
}

// stopOnSignals stops stackdome in two steps: the first signal of sigs
// cancels the context run serves under (drain, then stop: app.run); a
// second one, while that stop is under way — an operator's second Ctrl-C,
// a supervisor that will not wait — says why on stderr and calls exit
// with 128 plus the signal's number, as a shell reports a process a signal
// ended, cutting what is still in flight. It returns when sigs is closed.
func stopOnSignals(sigs <-chan os.Signal, cancel context.CancelFunc, stderr io.Writer, exit func(code int)) {
	first, ok := <-sigs
	if !ok {
		return
	}
	cancel()
	second, ok := <-sigs
	if !ok {
		return
	}
	fmt.Fprintf(stderr, "stackdome: %v during the stop that %v began: exiting at once, cutting what is in flight\n", second, first)
	code := 1
	if s, ok := second.(syscall.Signal); ok {
		code = 128 + int(s)
	}
	exit(code)
}
