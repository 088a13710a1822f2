package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateFlagsDoc = flag.Bool("update-flags-doc", false, "rewrite docs/flags.md from serve's flag set")

// flagsDocPath is the reference of serve's flags, generated from the flag
// set: the help of each flag is the one description of its setting, and
// the chart's README takes the description of every config value from here
// (chart/readme_test.go).
const flagsDocPath = "docs/flags.md"

// flagsDoc renders docs/flags.md from serve's flag set: one row a flag, in
// name order, with its variable, its default and its help.
func flagsDoc() []byte {
	var c config
	var raw rawFlags
	fs := defineFlags("serve", &c, &raw, io.Discard)
	var b bytes.Buffer
	b.WriteString(`# stackdome serve: flags

<!-- Generated from the flag set of stackdome serve (config_flags.go, tls.go,
config_limits.go) by flagsdoc_test.go: edit the flag's help there, then
go test . -run '^TestFlagsDoc$' -update-flags-doc. -->

Every setting of ` + "`stackdome serve`" + `, as ` + "`stackdome serve --help`" + ` prints it. Each
flag is also read from its variable; a flag on the command line wins. The
chart sets them from its values (chart/README.md names the flag of each).

| flag | variable | default | what it sets |
|---|---|---|---|
`)
	fs.VisitAll(func(f *flag.Flag) {
		def := "`" + f.DefValue + "`"
		if f.DefValue == "" {
			def = "empty"
		}
		fmt.Fprintf(&b, "| `--%s` | `%s` | %s | %s |\n", f.Name, envName(f.Name), def, strings.ReplaceAll(f.Usage, "|", `\|`))
	})
	return b.Bytes()
}

// TestFlagsDoc: docs/flags.md is what the flag set says, so a flag's help
// is written once, in the flag set.
func TestFlagsDoc(t *testing.T) {
	want := flagsDoc()
	if *updateFlagsDoc {
		if err := os.WriteFile(flagsDocPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(flagsDocPath)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is stale: go test . -run '^TestFlagsDoc$' -update-flags-doc (-want +got):\n%s", flagsDocPath, diff)
	}
}
