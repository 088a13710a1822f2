package children

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// testConfig is the children's Config of a default install
// (hooks.DefaultConfig).
func testConfig() Config {
	return Config{
		EntryPoints:    []string{"websecure"},
		ErrorService:   observed.ErrorService{Name: "stackdome-error-pages", Namespace: "stackdome", Port: 8082},
		HTTPEntryPoint: "web",
	}
}

// routing is Routing, which fails only on a bug.
func routing(t *testing.T, cfg Config, name string, spec schema.Spec, v observed.Wiring) []any {
	t.Helper()
	out, err := Routing(cfg, name, spec, v)
	require.NoError(t, err)
	return out
}

// withDefaults is c with every zero field of testConfig's.
func withDefaults(c Config) Config {
	d := testConfig()
	if len(c.EntryPoints) == 0 {
		c.EntryPoints = d.EntryPoints
	}
	if c.ErrorService.Name == "" {
		c.ErrorService = d.ErrorService
	}
	if c.HTTPEntryPoint == "" {
		c.HTTPEntryPoint = d.HTTPEntryPoint
	}
	return c
}
