package status

import (
	"time"

	"github.com/stackdome/stackdome/hooks/internal/observed"
)

// testConfig is the status's Config of a default install
// (hooks.DefaultConfig).
func testConfig() Config {
	return Config{
		PortCheckGrace: 3 * time.Minute,
		VerdictRequeue: 10 * time.Second,
		BootGrace:      5 * time.Minute,
		ErrorService:   observed.ErrorService{Name: "stackdome-error-pages", Namespace: "stackdome", Port: 8082},
	}
}
