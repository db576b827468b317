// Command nuv-runc is the OCI runtime nuv's test dockerd (hack/dockerd.sh) registers as its default:
// it removes from each container's spec the capabilities this host's bounding set lacks and, without
// CAP_SYS_RESOURCE, lowers the resource limits runc could not set (see internal/runtimewrap),
// notes each change in $NUV_RUNC_LOG (not on its own stderr: runc's stdio
// is the container's), and then executes runc ($NUV_RUNC, else /usr/sbin/runc, else runc on PATH)
// with the same arguments. hack/dockerd.sh says on stderr that it runs containers this way.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nuv-dev/nuv/internal/runtimewrap"
)

func main() {
	runc := os.Getenv("NUV_RUNC")
	if runc == "" {
		runc = "/usr/sbin/runc"
		if _, err := os.Stat(runc); err != nil {
			if p, err := exec.LookPath("runc"); err == nil {
				runc = p
			}
		}
	}
	missing, err := runtimewrap.HostMissing()
	if err != nil {
		fmt.Fprintf(os.Stderr, "nuv-runc: %v\n", err)
		os.Exit(1)
	}
	if len(os.Args) == 2 && os.Args[1] == "--nuv-missing-caps" { // for hack/dockerd.sh
		fmt.Println(strings.Join(missing, ", "))
		return
	}
	cwd, _ := os.Getwd()
	removed, err := runtimewrap.Rewrite(os.Args[1:], cwd, missing)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nuv-runc: %v\n", err)
		os.Exit(1)
	}
	var lowered []string
	if slices.Contains(missing, "CAP_SYS_RESOURCE") {
		hard, err := runtimewrap.HostHardLimits()
		if err == nil {
			lowered, err = runtimewrap.RewriteLimits(os.Args[1:], cwd, hard)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "nuv-runc: %v\n", err)
			os.Exit(1)
		}
	}
	if log := os.Getenv("NUV_RUNC_LOG"); log != "" && len(removed)+len(lowered) > 0 {
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			if len(removed) > 0 {
				fmt.Fprintf(f, "%s nuv-runc %s: this host lacks %s: removed from the container's capabilities\n",
					time.Now().UTC().Format(time.RFC3339), strings.Join(os.Args[1:], " "), strings.Join(removed, ", "))
			}
			if len(lowered) > 0 {
				fmt.Fprintf(f, "%s nuv-runc %s: without CAP_SYS_RESOURCE runc cannot raise limits above its own: lowered %s\n",
					time.Now().UTC().Format(time.RFC3339), strings.Join(os.Args[1:], " "), strings.Join(lowered, ", "))
			}
			f.Close()
		}
	}
	err = syscall.Exec(runc, append([]string{runc}, os.Args[1:]...), os.Environ())
	fmt.Fprintf(os.Stderr, "nuv-runc: exec %s: %v\n", runc, err)
	os.Exit(1)
}
