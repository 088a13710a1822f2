package main

import (
	"flag"
	"fmt"
	"strings"
)

// envName is the environment variable of a flag: STACKDOME_ and its name in
// upper case, dashes as underscores (--port-check-grace:
// STACKDOME_PORT_CHECK_GRACE).
func envName(flagName string) string {
	return "STACKDOME_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// overlayEnv sets every flag of fs that the command line did not give from
// its environment variable, if lookupEnv finds one: a flag on the command
// line wins over the environment, the environment over the default. Flags
// are visited in name order; the first value a flag refuses is returned as
// an error naming the variable and its value, and nothing after it is set.
func overlayEnv(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		env := envName(f.Name)
		if v, ok := lookupEnv(env); ok {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, serr)
			}
		}
	})
	return err
}
