// No build tag: the untagged tests of docs/install.md run these in `make
// test`, and TestCRDUpgrade (tagged) too.

package framework

import (
	"fmt"
	"strings"
)

// The shell commands of a block of docs/install.md, split into words as sh
// would.

// ShellCommands splits a block into its commands: backslash-newline
// continuations joined, comments and blank lines dropped.
func ShellCommands(text string) []string {
	var cmds []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd := strings.TrimSpace(cur.String())
		cur.Reset()
		if cmd != "" && !strings.HasPrefix(cmd, "#") {
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

// ShellWords splits one command as the shell would, for the quoting the
// page uses: single and double quotes, and a comment to the end. Variables
// are kept as written (nothing here can expand them): a caller that reads
// a word checks it holds none.
func ShellWords(cmd string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(cmd[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", cmd)
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(cmd[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unclosed \" in %q", cmd)
			}
			cur.WriteString(cmd[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '#' && !inWord:
			i = len(cmd)
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
