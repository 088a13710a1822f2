// Command coredns is CoreDNS v1.15.0 with the plugins the e2e node's
// Corefile uses (e2e/framework/node_config.go) and no other: bind, ready,
// health, errors, cache and kubernetes, in plugin.cfg's order. This is how
// CoreDNS documents a build with a subset of its plugins ("compile-time
// enabling or disabling plugins": a main of one's own that sets
// dnsserver.Directives and imports the plugins); github.com/coredns/coredns's
// own main imports every plugin (core/plugin), the cloud DNS providers' SDKs
// among them, which made it the slowest build of a cold e2e run.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "kubernetes"}
}

func main() { coremain.Run() }
