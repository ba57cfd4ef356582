// CoreDNS with only the plugins the harness's cluster DNS needs (kubernetes, errors, health, ready):
// the way CoreDNS documents custom builds (a main that imports the chosen plugins and sets the directive
// order), which keeps out the cloud-provider plugins and their SDKs. The harness runs it as a pod on the
// real node (runtime/realinfra/cluster-dns.ts).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"errors", "health", "ready", "kubernetes"}
}

func main() {
	coremain.Run()
}
