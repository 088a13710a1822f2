// Command etcd is the etcd server, built from the go.etcd.io/etcd/server/v3
// module so the e2e control plane needs no release binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
