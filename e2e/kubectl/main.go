// Command kubectl is Kubernetes' kubectl v1.37.2, built for the e2e suite:
// docs/install.md's commands are run with it against the suite's API server.
// The body is k8s.io/kubernetes/cmd/kubectl/kubectl.go of that release
// (Apache-2.0, The Kubernetes Authors); building it from this small module,
// which requires k8s.io/kubectl and its published staging modules, keeps it
// out of e2e/tools, whose go.mod and go.sum key the control-plane cache.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Client auth plugins, as upstream's main imports them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
