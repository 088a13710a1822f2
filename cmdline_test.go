package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// outcome is what a command line gives: the first line of stdout, the
// whole of stderr, and the exit code main would exit with.
type outcome struct {
	Stdout, Stderr string
	Code           int
}

// runLine runs args as main does, up to the exit code.
func runLine(t *testing.T, args ...string) (outcome, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	code := 0
	if err != nil && !errors.Is(err, errHelp) {
		code = exitCode(err)
	}
	first, _, _ := strings.Cut(stdout.String(), "\n")
	return outcome{first, stderr.String(), code}, stdout.String()
}

// TestCommandLine: help is on stdout with exit 0, however it is asked for;
// a command line that cannot run is one line on stderr naming what is
// wrong and where the help is, exit 2.
func TestCommandLine(t *testing.T) {
	const (
		top     = "Usage: stackdome <command> [flags]"
		serve   = "Usage: stackdome serve [flags]"
		sync    = "Usage: stackdome sync [flags]"
		version = "Usage: stackdome version"
	)
	see := func(cmd, msg string) string {
		return "stackdome " + cmd + ": " + msg + " (see stackdome " + cmd + " --help)\n"
	}
	tests := map[string]struct {
		args []string
		want outcome
	}{
		"--help":                             {args: []string{"--help"}, want: outcome{Stdout: top}},
		"-h":                                 {args: []string{"-h"}, want: outcome{Stdout: top}},
		"help":                               {args: []string{"help"}, want: outcome{Stdout: top}},
		"help --help":                        {args: []string{"help", "--help"}, want: outcome{Stdout: top}},
		"serve --help":                       {args: []string{"serve", "--help"}, want: outcome{Stdout: serve}},
		"serve -h":                           {args: []string{"serve", "-h"}, want: outcome{Stdout: serve}},
		"help serve":                         {args: []string{"help", "serve"}, want: outcome{Stdout: serve}},
		"--help serve":                       {args: []string{"--help", "serve"}, want: outcome{Stdout: serve}},
		"help sync":                          {args: []string{"help", "sync"}, want: outcome{Stdout: sync}},
		"sync --help":                        {args: []string{"sync", "--help"}, want: outcome{Stdout: sync}},
		"help version":                       {args: []string{"help", "version"}, want: outcome{Stdout: version}},
		"version":                            {args: []string{"version"}, want: outcome{Stdout: thisBuild().String()}},
		"--version":                          {args: []string{"--version"}, want: outcome{Stdout: thisBuild().String()}},
		"help of no command":                 {args: []string{"help", "nope"}, want: outcome{Stderr: see("help", `unknown command "nope"`), Code: 2}},
		"help of two commands":               {args: []string{"help", "serve", "sync"}, want: outcome{Stderr: see("help", `unexpected argument "sync"`), Code: 2}},
		"no such command":                    {args: []string{"nope"}, want: outcome{Stderr: "stackdome: unknown command \"nope\" (see stackdome --help)\n", Code: 2}},
		"unknown flag":                       {args: []string{"serve", "--lisen", ":18080"}, want: outcome{Stderr: see("serve", "unknown flag --lisen"), Code: 2}},
		"unknown flag, one dash":             {args: []string{"serve", "-lisen", ":18080"}, want: outcome{Stderr: see("serve", "unknown flag --lisen"), Code: 2}},
		"unknown flag of serve, the default": {args: []string{"--lisen", ":18080"}, want: outcome{Stderr: see("serve", "unknown flag --lisen"), Code: 2}},
		"unknown flag of sync":               {args: []string{"sync", "--file", "x"}, want: outcome{Stderr: see("sync", "unknown flag --file"), Code: 2}},
		"not an integer":                     {args: []string{"serve", "--dial-workers", "many"}, want: outcome{Stderr: see("serve", `--dial-workers "many": want an integer`), Code: 2}},
		"not a duration":                     {args: []string{"serve", "--drain-delay=5"}, want: outcome{Stderr: see("serve", `--drain-delay "5": want a duration such as 30s or 2m`), Code: 2}},
		"not a boolean":                      {args: []string{"serve", "--hooks=maybe"}, want: outcome{Stderr: see("serve", `--hooks "maybe": want true or false`), Code: 2}},
		"no value":                           {args: []string{"serve", "--listen"}, want: outcome{Stderr: see("serve", "flag --listen needs a value"), Code: 2}},
		"a stray argument":                   {args: []string{"serve", "extra"}, want: outcome{Stderr: see("serve", `unexpected argument "extra"`), Code: 2}},
		"version takes no argument":          {args: []string{"version", "x"}, want: outcome{Stderr: see("version", `unexpected argument "x"`), Code: 2}},
		"version takes no flag":              {args: []string{"version", "--short"}, want: outcome{Stderr: see("version", "unknown flag --short"), Code: 2}},
		"a value validate refuses":           {args: []string{"serve", "--log-format", "xml"}, want: outcome{Stderr: see("serve", `--log-format "xml": must be json or text`), Code: 2}},
		"listeners that collide":             {args: []string{"serve", "--listen", ":18080", "--metrics-listen", ":18080"}, want: outcome{Stderr: see("serve", `--listen ":18080" and --metrics-listen ":18080": both servers would listen on one port; give each its own`), Code: 2}},
		"sync: not a time":                   {args: []string{"sync", "--now", "noon"}, want: outcome{Stderr: see("sync", `--now: parsing time "noon" as "2006-01-02T15:04:05Z07:00": cannot parse "noon" as "2006"`), Code: 2}},
		"sync: a file that is not there":     {args: []string{"sync", "-f", "testdata/none.json"}, want: outcome{Code: 1}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, _ := runLine(t, tc.args...)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("stackdome %s (-want +got):\n%s", strings.Join(tc.args, " "), d)
			}
		})
	}
}

// TestHelpListsEveryCommand: stackdome --help names every command of the
// table with its summary, and each command's help starts with its usage.
func TestHelpListsEveryCommand(t *testing.T) {
	_, help := runLine(t, "--help")
	for _, c := range commands() {
		if !strings.Contains(help, "  "+c.name+strings.Repeat(" ", 10-len(c.name))+c.summary+"\n") {
			t.Errorf("stackdome --help does not list %s with its summary %q:\n%s", c.name, c.summary, help)
		}
		got, _ := runLine(t, "help", c.name)
		usage := "Usage: stackdome " + c.name
		if c.name == "help" {
			usage = "Usage: stackdome <command>" // help's help is the list
		}
		if got.Code != 0 || !strings.HasPrefix(got.Stdout, usage) {
			t.Errorf("stackdome help %s = %+v, want its usage with exit 0", c.name, got)
		}
	}
}

// TestStopOnSignals: the first signal cancels, a second one exits at once
// with 128 plus its number and one line saying why; no second signal, no
// exit.
func TestStopOnSignals(t *testing.T) {
	tests := map[string]struct {
		signals  []os.Signal
		want     []string // what happened, in order
		wantLine string
	}{
		"one signal: the stop begins":    {signals: []os.Signal{syscall.SIGTERM}, want: []string{"cancel"}},
		"a second SIGTERM: exit 143":     {signals: []os.Signal{syscall.SIGTERM, syscall.SIGTERM}, want: []string{"cancel", "exit 143"}, wantLine: "stackdome: terminated during the stop that terminated began: exiting at once, cutting what is in flight\n"},
		"Ctrl-C twice: exit 130":         {signals: []os.Signal{os.Interrupt, os.Interrupt}, want: []string{"cancel", "exit 130"}, wantLine: "stackdome: interrupt during the stop that interrupt began: exiting at once, cutting what is in flight\n"},
		"SIGINT after SIGTERM: exit 130": {signals: []os.Signal{syscall.SIGTERM, os.Interrupt}, want: []string{"cancel", "exit 130"}, wantLine: "stackdome: interrupt during the stop that terminated began: exiting at once, cutting what is in flight\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			sigs := make(chan os.Signal, len(tc.signals))
			for _, s := range tc.signals {
				sigs <- s
			}
			close(sigs)
			var got []string
			var stderr bytes.Buffer
			stopOnSignals(sigs, func() { got = append(got, "cancel") }, &stderr, func(code int) { got = append(got, "exit "+strconv.Itoa(code)) })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantLine, stderr.String()); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
		})
	}
}

// TestUsageErrorExitsTwo: a refusal exits 2 however it reaches main, and
// any other error 1.
func TestUsageErrorExitsTwo(t *testing.T) {
	got := map[string]int{
		"usageError":         exitCode(usageError{errors.New("x")}),
		"wrapped usageError": exitCode(fmt.Errorf("parsing: %w", usageError{errors.New("x")})),
		"errUsage":           exitCode(errUsage),
		"other":              exitCode(errors.New("listening for hooks: address already in use")),
	}
	want := map[string]int{"usageError": 2, "wrapped usageError": 2, "errUsage": 2, "other": 1}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("exit codes (-want +got):\n%s", d)
	}
}
