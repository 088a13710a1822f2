package chart

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// argoHealthLua returns the Lua health check exactly as docs/install.md
// publishes it: the first ```lua block after the Argo CD heading.
func argoHealthLua(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Argo CD")
	if !ok {
		t.Fatal("docs/install.md has no Argo CD section")
	}
	_, block, ok := strings.Cut(section, "```lua\n")
	if !ok {
		t.Fatal("the Argo CD section has no ```lua block")
	}
	script, _, ok := strings.Cut(block, "```")
	if !ok {
		t.Fatal("unterminated ```lua block")
	}
	return script
}

// luaLiteral writes a decoded JSON value as a Lua table constructor, as Argo CD
// hands the object to the script.
func luaLiteral(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case string:
		return strconv.Quote(v) // test data is ASCII: Go and Lua escapes agree
	case []any:
		items := make([]string, len(v))
		for i, item := range v {
			items[i] = luaLiteral(item)
		}
		return "{" + strings.Join(items, ", ") + "}"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fields := make([]string, len(keys))
		for i, k := range keys {
			fields[i] = fmt.Sprintf("[%q] = %s", k, luaLiteral(v[k]))
		}
		return "{" + strings.Join(fields, ", ") + "}"
	}
	panic(fmt.Sprintf("no Lua literal for %T", v))
}

func TestArgoCDHealthCheck(t *testing.T) {
	lua := ""
	for _, name := range []string{"lua5.4", "lua5.3", "lua"} {
		if p, err := exec.LookPath(name); err == nil {
			lua = p
			break
		}
	}
	if lua == "" {
		missing(t, "no Lua interpreter (apt-get install lua5.4)")
	}
	script := argoHealthLua(t)

	type health struct{ Status, Message string }
	cond := func(typ, status, reason, message string) string {
		return fmt.Sprintf(`{"type":%q,"status":%q,"reason":%q,"message":%q}`, typ, status, reason, message)
	}
	serving := []string{
		cond("Available", "True", "Serving", "2/2 replicas serving"),
		cond("Converged", "True", "Converged", "all ports open"),
		cond("Stalled", "False", "Serving", "not stalled"),
		cond("Reconciling", "False", "Converged", "all ports open"),
	}
	object := func(generation int, status string) string {
		if status == "" {
			return fmt.Sprintf(`{"metadata":{"name":"shop","generation":%d},"spec":{}}`, generation)
		}
		return fmt.Sprintf(`{"metadata":{"name":"shop","generation":%d},"spec":{},"status":%s}`, generation, status)
	}
	status := func(observed int, conds ...string) string {
		og := ""
		if observed > 0 {
			og = fmt.Sprintf(`"observedGeneration":%d,`, observed)
		}
		return fmt.Sprintf(`{%s"conditions":[%s]}`, og, strings.Join(conds, ","))
	}
	tests := map[string]struct {
		obj  string
		want health
	}{
		"no status yet": {
			obj:  object(1, ""),
			want: health{"Progressing", "Waiting for stackdome to report status"},
		},
		"serving, all ports open": {
			obj:  object(2, status(2, serving...)),
			want: health{"Healthy", "Serving: 2/2 replicas serving"},
		},
		"status of an older generation": {
			obj:  object(3, status(2, serving...)),
			want: health{"Progressing", "Waiting for stackdome to observe generation 3"},
		},
		"no observedGeneration": {
			obj:  object(1, status(0, serving...)),
			want: health{"Progressing", "Waiting for stackdome to observe generation 1"},
		},
		"stalled: port dead past grace": {
			obj: object(1, status(1,
				cond("Available", "False", "PortNotListening", "nothing listens on port http (8080)"),
				cond("Converged", "False", "PortNotListening", "nothing listens on port http (8080)"),
				cond("Stalled", "True", "PortNotListening", "nothing listens on port http (8080)"),
				cond("Reconciling", "False", "PortNotListening", "stalled"))),
			want: health{"Degraded", "PortNotListening: nothing listens on port http (8080)"},
		},
		"stalled: invalid spec": {
			obj: object(4, status(4,
				cond("Converged", "False", "InvalidSpec", "spec.host is required when a port is public"),
				cond("Stalled", "True", "InvalidSpec", "spec.host is required when a port is public"))),
			want: health{"Degraded", "InvalidSpec: spec.host is required when a port is public"},
		},
		"stalled, but the spec changed since": {
			obj: object(5, status(4,
				cond("Stalled", "True", "InvalidSpec", "spec.host is required when a port is public"))),
			want: health{"Progressing", "Waiting for stackdome to observe generation 5"},
		},
		"rolling out": {
			obj: object(2, status(2,
				cond("Available", "False", "Progressing", "1/2 replicas ready"),
				cond("Converged", "False", "Progressing", "1/2 replicas ready"),
				cond("Stalled", "False", "Progressing", "1/2 replicas ready"),
				cond("Reconciling", "True", "Progressing", "1/2 replicas ready"))),
			want: health{"Progressing", "Progressing: 1/2 replicas ready"},
		},
		"serving, port verdict pending": {
			obj: object(2, status(2,
				cond("Available", "True", "Serving", "2/2 replicas serving"),
				cond("Converged", "False", "PortCheckPending", "waiting for a port verdict"))),
			want: health{"Progressing", "PortCheckPending: waiting for a port verdict"},
		},
		"no conditions at all": {
			obj:  object(1, status(1)),
			want: health{"Progressing", "Waiting for stackdome to report status"},
		},
		"converged but not available": {
			obj: object(1, status(1,
				cond("Available", "False", "CrashLooping", "app exited 1"),
				cond("Converged", "True", "Converged", ""))),
			want: health{"Progressing", "CrashLooping: app exited 1"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.obj))
			dec.UseNumber()
			var obj any
			if err := dec.Decode(&obj); err != nil {
				t.Fatal(err)
			}
			program := "obj = " + luaLiteral(obj) + "\n" +
				"local function health()\n" + script + "\nend\n" +
				"local hs = health()\n" +
				"io.write(hs.status, \"\\n\", hs.message or \"\", \"\\n\")\n"
			file := filepath.Join(t.TempDir(), "health.lua")
			if err := os.WriteFile(file, []byte(program), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(lua, file).CombinedOutput()
			if err != nil {
				t.Fatalf("lua: %v\n%s", err, out)
			}
			status, message, _ := strings.Cut(strings.TrimSuffix(string(out), "\n"), "\n")
			if diff := cmp.Diff(tc.want, health{status, message}); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}
