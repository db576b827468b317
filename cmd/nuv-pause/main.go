// Command nuv-pause is the pod sandbox process of the kind node images nuv assembles (the role of
// registry.k8s.io/pause): it holds the pod's namespaces, reaps the zombies of a shared PID
// namespace, and exits 0 on SIGINT or SIGTERM. Built static (no cgo) for an image of one file.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("nuv-pause")
		return
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "nuv-pause: warning: not running as PID 1")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range sigs {
		switch s {
		case syscall.SIGCHLD:
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		default:
			fmt.Fprintf(os.Stderr, "nuv-pause: %v: shutting down\n", s)
			os.Exit(0)
		}
	}
}
