// Command pageserver serves errorpages.New(nil) alone on a loopback port, for
// bench/pages/run.sh when the stackdome binary cannot serve pages yet. It
// prints the address it listens on, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/stackdome/stackdome/errorpages"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to serve on")
	flag.Parse()
	h, err := errorpages.New(nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pageserver:", err)
		os.Exit(1)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pageserver:", err)
		os.Exit(1)
	}
	fmt.Println(l.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
	fmt.Fprintln(os.Stderr, "pageserver:", srv.Serve(l))
	os.Exit(1)
}
