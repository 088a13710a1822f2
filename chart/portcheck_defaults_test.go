package chart

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/stackdome/stackdome/portcheck"
)

// TestValuesArePortcheckDefaults: the chart's verifier values (the flags
// --port-recheck, --dial-timeout, --dial-workers, --dial-queue and
// --verdict-ttl) are portcheck.DefaultConfig's, so an install with the
// chart's defaults runs the verifier the library documents.
func TestValuesArePortcheckDefaults(t *testing.T) {
	data, err := os.ReadFile("values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Config struct {
			PortRecheck string `yaml:"portRecheck"`
			DialTimeout string `yaml:"dialTimeout"`
			DialWorkers int    `yaml:"dialWorkers"`
			DialQueue   int    `yaml:"dialQueue"`
			VerdictTTL  string `yaml:"verdictTTL"`
		} `yaml:"config"`
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	duration := func(key, s string) time.Duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Errorf("config.%s: %v", key, err)
		}
		return d
	}
	c := values.Config
	got := portcheck.Config{
		Recheck:     duration("portRecheck", c.PortRecheck),
		DialTimeout: duration("dialTimeout", c.DialTimeout),
		Workers:     c.DialWorkers,
		QueueSize:   c.DialQueue,
		TTL:         duration("verdictTTL", c.VerdictTTL),
	}
	d := portcheck.DefaultConfig()
	want := portcheck.Config{Recheck: d.Recheck, DialTimeout: d.DialTimeout, Workers: d.Workers, QueueSize: d.QueueSize, TTL: d.TTL}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values.yaml config against portcheck.DefaultConfig() (-DefaultConfig +values):\n%s", diff)
	}
}
