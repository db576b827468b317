// Command kube is the benchmark of nuv's clusters/ inventory. It prints:
//
//   - the median of `nuv kube use N --offline` (target <= 100 ms) beside kubectl's
//     `config use-context` on the same kubeconfig (the peer), and their ratio;
//   - the median of `nuv kube list` over 10 kubeconfigs, 8 reaching a real local cluster and 2 not
//     (a closed loopback port and a loopback listener that never accepts, i.e. a blackhole inside
//     127.0.0.0/8) (target <= 1.5 s), beside the same work done with kubectl: `kubectl get nodes
//     --request-timeout=1s` for every kubeconfig, all at once as nuv probes them (nuv's timeout is
//     the same 1 s), and their ratio. The peer's results are checked: every reachable cluster
//     must answer and every unreachable one must fail, or the benchmark stops.
//
// kubectl is required (the peer); the benchmark fails without it.
//
// Run from the repository root: go run ./bench/kube [-kubeconfig existing.kubeconfig] [-runs 20]
// Without -kubeconfig it creates a local cluster (the nuv-kube companion must be built or
// buildable: `nuv cluster prepare`) and deletes it at the end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/localkube"
)

func main() {
	kc := flag.String("kubeconfig", "", "kubeconfig of an existing cluster (default: create a local cluster)")
	runs := flag.Int("runs", 20, "runs of `use` (list runs a quarter as many, at least 3)")
	flag.Parse()
	benchutil.Exit("bench/kube", run(*kc, *runs))
}

func run(kc string, runs int) error {
	ws, err := benchutil.NewWorkspace("nuv-bench-kube-")
	if err != nil {
		return err
	}
	defer ws.Close()
	tmp, nuv := ws.Dir, ws.Nuv
	project := filepath.Join(tmp, "project")
	home := filepath.Join(tmp, "home")
	clusters := filepath.Join(project, "clusters")
	if err := os.MkdirAll(clusters, 0o755); err != nil {
		return err
	}
	if kc == "" {
		p, created, err := createLocal(tmp, home)
		if err != nil {
			return err
		}
		defer p.Delete(context.Background(), "bench")
		kc = created
	}
	silent, err := writeKubeconfigs(kc, clusters)
	if err != nil {
		return err
	}
	defer silent.Close()
	env := append(os.Environ(), "HOME="+home, "NUV_HOME="+filepath.Join(home, ".nuv"), "NUV_PROJECT="+project)
	env = withoutVar(env, "NUV_CLUSTER")
	env = withoutVar(env, "NUV_KUBE_TIMEOUT")

	use, err := measureUse(env, nuv, clusters, runs)
	if err != nil {
		return err
	}
	list, err := measureList(env, nuv, clusters, runs)
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Println("| measure (median) | nuv | kubectl, same work | ratio nuv/kubectl |")
	fmt.Println("|---|---|---|---|")
	fmt.Printf("| select a cluster (`kube use N --offline` / `config use-context`) | %.1f ms | %.1f ms | %.2f |\n", benchutil.MS(use.nuv), benchutil.MS(use.peer), float64(use.nuv)/float64(use.peer))
	fmt.Printf("| probe 10 clusters, 2 unreachable, 1 s timeout, in parallel | %.1f ms | %.1f ms | %.2f |\n", benchutil.MS(list.nuv), benchutil.MS(list.peer), float64(list.nuv)/float64(list.peer))
	return nil
}

// createLocal creates the local cluster "bench" the benchmark measures against when no kubeconfig
// is given and returns its provider and kubeconfig; the caller deletes it.
func createLocal(tmp, home string) (local.Provider, string, error) {
	p := local.Provider{Home: filepath.Join(home, ".nuv"), Project: filepath.Join(tmp, "src")}
	fmt.Println("creating a local cluster ...")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	info, err := p.Create(ctx, localkube.CreateOptions{Name: "bench"})
	cancel()
	if err != nil {
		return p, "", fmt.Errorf("create local cluster: %w", err)
	}
	return p, info.Kubeconfig, nil
}

// writeKubeconfigs writes into clusters eight copies of the kubeconfig kc and two that point at
// unreachable servers: a closed port and a listener that never accepts (returned, for the caller
// to close).
func writeKubeconfigs(kc, clusters string) (net.Listener, error) {
	src, err := os.ReadFile(kc)
	if err != nil {
		return nil, err
	}
	server, err := serverOf(kc)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= 8; i++ {
		if err := os.WriteFile(filepath.Join(clusters, fmt.Sprintf("up-%d.kubeconfig", i)), src, 0o600); err != nil {
			return nil, err
		}
	}
	closed, err := closedPort()
	if err != nil {
		return nil, err
	}
	silent, err := net.Listen("tcp", "127.0.0.1:0") // never accepts: connections hang after the handshake
	if err != nil {
		return nil, err
	}
	hostport := strings.TrimPrefix(server, "https://")
	for name, addr := range map[string]string{"z-closed": closed, "z-blackhole": silent.Addr().String()} {
		data := strings.ReplaceAll(string(src), hostport, addr)
		if err := os.WriteFile(filepath.Join(clusters, name+".kubeconfig"), []byte(data), 0o600); err != nil {
			silent.Close()
			return nil, err
		}
	}
	return silent, nil
}

// medians are nuv's and its peer's median times for the same work.
type medians struct {
	nuv, peer time.Duration
}

// measureUse times `nuv kube use N --offline` against `kubectl config use-context` and nuv's bare
// start-up, and prints the figures.
func measureUse(env []string, nuv, clusters string, runs int) (medians, error) {
	// Warm up (page cache, first detection remembered).
	if out, err := cmd(env, nuv, "kube", "use", "3"); err != nil {
		return medians{}, fmt.Errorf("nuv kube use 3: %v\n%s", err, out)
	}
	useMed, err := benchutil.MedianOf(runs, func() error { _, err := cmd(env, nuv, "kube", "use", "3", "--offline"); return err })
	if err != nil {
		return medians{}, err
	}
	ctxName, err := kubectlOut(env, "--kubeconfig", filepath.Join(clusters, "up-3.kubeconfig"), "config", "current-context")
	if err != nil {
		return medians{}, fmt.Errorf("kubectl config current-context: %v\n%s", err, ctxName)
	}
	peerUse, err := benchutil.MedianOf(runs, func() error {
		out, err := kubectlOut(env, "--kubeconfig", filepath.Join(clusters, "up-3.kubeconfig"), "config", "use-context", strings.TrimSpace(ctxName))
		if err != nil {
			return fmt.Errorf("kubectl config use-context: %v\n%s", err, out)
		}
		return nil
	})
	if err != nil {
		return medians{}, err
	}
	// nuv's start-up alone (every linked package's init), to tell it apart from the command's work.
	startMed, err := benchutil.MedianOf(runs, func() error { _, err := cmd(env, nuv, "-version"); return err })
	if err != nil {
		return medians{}, err
	}
	fmt.Printf("\nnuv kube use N --offline   median %7.1f ms over %d runs (target <= 100 ms)\n", benchutil.MS(useMed), runs)
	fmt.Printf("nuv -version (start-up)    median %7.1f ms: the command itself costs ~%.1f ms\n", benchutil.MS(startMed), benchutil.MS(useMed-startMed))
	fmt.Printf("kubectl config use-context median %7.1f ms (peer)   ratio nuv/kubectl %.2f\n", benchutil.MS(peerUse), float64(useMed)/float64(peerUse))
	return medians{nuv: useMed, peer: peerUse}, nil
}

// measureList times `nuv kube list` over the ten kubeconfigs against kubectl probing them in
// parallel, prints the figures and nuv's listing, and checks it saw 8 clusters up and 2 down.
func measureList(env []string, nuv, clusters string, runs int) (medians, error) {
	listRuns := runs / 4
	if listRuns < 3 {
		listRuns = 3
	}
	var last string
	listMed, err := benchutil.MedianOf(listRuns, func() error {
		out, err := cmd(env, nuv, "kube", "list")
		last = out
		return err
	})
	if err != nil {
		return medians{}, fmt.Errorf("nuv kube list: %v\n%s", err, last)
	}
	up, down := strings.Count(last, "ready 1/1"), strings.Count(last, "unreachable")
	fmt.Printf("\nnuv kube list (10 kubeconfigs: %d reachable, %d unreachable) median %7.1f ms over %d runs (target <= 1500 ms)\n", up, down, benchutil.MS(listMed), listRuns)
	fmt.Print(indent(last))
	if up != 8 || down != 2 {
		return medians{}, fmt.Errorf("nuv kube list saw %d reachable and %d unreachable clusters, want 8 and 2", up, down)
	}
	names, _ := filepath.Glob(filepath.Join(clusters, "*.kubeconfig"))
	peerList, err := benchutil.MedianOf(listRuns, func() error { return parallelKubectl(env, names) })
	if err != nil {
		return medians{}, err
	}
	fmt.Printf("kubectl get nodes --request-timeout=1s on the same 10, in parallel: median %7.1f ms over %d runs (peer)   ratio nuv/kubectl %.2f\n",
		benchutil.MS(peerList), listRuns, float64(listMed)/float64(peerList))
	return medians{nuv: listMed, peer: peerList}, nil
}

// parallelKubectl probes every kubeconfig with kubectl at once, as nuv kube list does, and checks
// the answers: the up-* clusters must list their nodes, the z-* ones (unreachable) must fail.
func parallelKubectl(env []string, kubeconfigs []string) error {
	errs := make([]error, len(kubeconfigs))
	var wg sync.WaitGroup
	for i, kc := range kubeconfigs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := kubectlOut(env, "--kubeconfig", kc, "--request-timeout=1s", "get", "nodes", "--no-headers")
			reachable := strings.HasPrefix(filepath.Base(kc), "up-")
			switch {
			case reachable && err != nil:
				errs[i] = fmt.Errorf("peer: kubectl get nodes on %s: %v\n%s", kc, err, out)
			case reachable && !strings.Contains(out, " Ready "):
				errs[i] = fmt.Errorf("peer: kubectl get nodes on %s shows no Ready node:\n%s", kc, out)
			case !reachable && err == nil:
				errs[i] = fmt.Errorf("peer: kubectl get nodes on the unreachable %s succeeded:\n%s", kc, out)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func cmd(env []string, name string, args ...string) (string, error) {
	c := exec.Command(name, args...)
	c.Env = env
	out, err := c.CombinedOutput()
	return string(out), err
}

func kubectlOut(env []string, args ...string) (string, error) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		return "", fmt.Errorf("kubectl is required for the peer measurement: %w", err)
	}
	return cmd(env, "kubectl", args...)
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

func withoutVar(env []string, k string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, k+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func closedPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

func serverOf(kc string) (string, error) {
	data, err := os.ReadFile(kc)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "server:") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(l, "server:")), `"'`), nil
		}
	}
	return "", fmt.Errorf("%s: no server", kc)
}
