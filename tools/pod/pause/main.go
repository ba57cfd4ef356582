// pause: the sandbox ("infra") container of every pod on the harness's node. It holds the pod's
// namespaces, reaps orphaned children when it is PID 1 of a shared PID namespace, and exits 0 on SIGINT
// or SIGTERM. The same job as Kubernetes' build/pause/linux/pause.c, in Go so that the harness builds it
// with the toolchain it already needs (CGO_ENABLED=0 gives a static binary; no gcc, no libc in the image).
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("pause (klutch-kit realinfra)")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "Warning: pause should be the first process")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			fmt.Fprintf(os.Stderr, "Shutting down, got signal: %v\n", s)
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
