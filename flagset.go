package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"time"
)

// How every command reads its command line: newFlagSet makes the flag set
// of a command, whose help names the command and its summary (commands);
// parseArgs parses into it, printing --help to the help's writer and turning
// the flag package's refusals, which it prints with the whole usage, into
// one line naming the flag.

// newFlagSet is the empty flag set of the command cmd, whose positional
// arguments read argsUsage in its help ("[command]"; "": none); its help
// goes to out.
func newFlagSet(cmd, argsUsage string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("stackdome "+cmd, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		line := "stackdome " + cmd
		if n > 0 {
			line += " [flags]"
		}
		if argsUsage != "" {
			line += " " + argsUsage
		}
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s.\n", line, capitalized(commandNamed(cmd).summary))
		if n > 0 {
			fmt.Fprint(fs.Output(), "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

func capitalized(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// parseArgs parses args into fs, whose command takes at most maxArgs
// positional arguments. --help (-h) prints fs's help to its output and
// returns errHelp. A flag fs does not define, a value a flag refuses or an
// argument too many is a usageError of one line naming it.
func parseArgs(fs *flag.FlagSet, args []string, maxArgs int) error {
	// The flag package prints a refusal followed by the whole usage, about
	// a hundred lines for serve: one line naming the flag is what a typo
	// needs, and --help is one command away.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return errHelp
	case err != nil:
		return usageError{flagError(fs, err)}
	case fs.NArg() > maxArgs:
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(maxArgs))}
	}
	return nil
}

// The flag package's refusals (flag.FlagSet.Parse), which name a flag with
// one dash whatever the command line said.
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
	missingValue  = regexp.MustCompile(`^flag needs an argument: -(.*)$`)
	invalidValue  = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?-([^:]*): (.*)$`)
)

// flagError rewords a refusal of fs.Parse: the flag as --name, and for a
// value its flag refuses, what the flag wants instead of "parse error".
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("unknown flag --%s", m[1])
	}
	if m := missingValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("flag --%s needs a value", m[1])
	}
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		why := m[3]
		if f := fs.Lookup(m[2]); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case time.Duration:
					why = "want a duration such as 30s or 2m"
				case bool:
					why = "want true or false"
				case int, int64, uint, uint64:
					why = "want an integer"
				}
			}
		}
		return fmt.Errorf("--%s %s: %s", m[2], m[1], why)
	}
	return err
}
