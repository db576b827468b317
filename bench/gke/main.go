// Command gke is the benchmark of nuv's gke provider against its GKE emulator. It prints:
//
//   - the median of `nuv cluster plan -f` of a new GKE cluster with 3 node pools (a whole nuv
//     process: start-up, ADC's token exchange, GetServerConfig and GetCluster over gRPC);
//   - the median latency of a GetCluster call (gRPC, token on the call) answered by the emulator;
//   - emulated create through `nuv cluster apply`: the cluster, its 3 node pools (5 nodes) and the
//     kubeconfig, each a GKE operation followed to DONE, most of it the local control plane;
//   - the first node list through that kubeconfig (its exec credential runs `nuv -gke-token`);
//   - `nuv cluster delete`, to nothing left.
//
// No peer runs here (no other GKE emulator installs on these machines), so the figures stand
// alone. The emulator's operation delay is 0, so the figures are its own and the control plane's
// work. Run from the repository root: go run ./bench/gke [-runs 10] (the nuv-kube companion must
// be built or buildable: `nuv cluster prepare`, or NUV_KUBE_BIN).
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
	"time"

	"cloud.google.com/go/container/apiv1/containerpb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/cluster/gke"
	"github.com/nuv-dev/nuv/internal/emulator/gcp"
)

func main() {
	runs := flag.Int("runs", 10, "runs of plan (and 20x as many GetCluster calls)")
	flag.Parse()
	benchutil.Exit("bench/gke", run(*runs))
}

const specDoc = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: bench}
spec:
  provider: gke
  kubernetesVersion: "1.35"
  nodeGroups:
  - {name: web, count: 2, instanceType: e2-standard-4, labels: {tier: web}}
  - {name: batch, count: 2, spot: true, taints: ["batch=true:NoSchedule"]}
  - {name: system, count: 1, instanceType: n2-standard-2}
  gke: {project: %s, location: us-central1-a}
`

func run(runs int) error {
	ctx := context.Background()
	ws, err := benchutil.NewWorkspace("nuv-bench-gke-")
	if err != nil {
		return err
	}
	defer ws.Close()
	b := &gkeBench{ctx: ctx, tmp: ws.Dir}
	stop, err := b.startEmulator(ws.Nuv)
	if err != nil {
		return err
	}
	defer stop()
	if err := b.measurePlan(runs); err != nil {
		return err
	}
	cn, err := gke.Connect(ctx, func(k string) string { return b.vars[k] })
	if err != nil {
		return err
	}
	defer cn.Client.Close()
	if err := b.measureCalls(cn, runs); err != nil {
		return err
	}
	create, err := b.nuvRun("cluster", "apply", "-f", b.spec)
	if err != nil {
		return err
	}
	fmt.Printf("emulated GKE create (nuv cluster apply: cluster, 3 node pools, 5 nodes, kubeconfig): %.2f s\n", create.Seconds())
	if err := b.firstNodeList(create); err != nil {
		return err
	}
	del, err := b.nuvRun("cluster", "delete", "--yes", "bench")
	if err != nil {
		return err
	}
	fmt.Printf("emulated GKE delete (nuv cluster delete, nothing left): %.2f s\n", del.Seconds())
	return nil
}

// gkeBench is one run: nuv's GCP emulator, the environment that points nuv at it, and the
// cluster's spec.
type gkeBench struct {
	ctx     context.Context
	tmp     string
	project string            // the emulator's GCP project
	vars    map[string]string // the environment pointing nuv at the emulator
	nuv     benchutil.Nuv
	spec    string // the path of the cluster's spec
}

// startEmulator serves nuv's GCP emulator on loopback, waits until it answers, points nuv (the
// binary nuvBin) at it and writes the cluster's spec; stop stops the emulator.
func (b *gkeBench) startEmulator(nuvBin string) (stop func(), err error) {
	emuDir := filepath.Join(b.tmp, "emulator")
	s, err := gcp.New(gcp.Options{Dir: emuDir})
	if err != nil {
		return nil, err
	}
	addr, stop, err := benchutil.ServeLoopback(func(ctx context.Context, ln net.Listener) error { return gcp.Serve(ctx, ln, s) })
	if err != nil {
		return nil, err
	}
	for i := 0; i < 100 && gcp.Ping(b.ctx, addr) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	b.project, _ = s.Project()
	b.vars = map[string]string{
		gke.EndpointEnv:                  "http://" + addr + "/",
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(emuDir, gcp.CredentialsFileName),
		"NUV_HOME":                       filepath.Join(b.tmp, "home"),
		"NUV_PROJECT":                    filepath.Join(b.tmp, "project"),
	}
	var env []string
	for k, v := range b.vars {
		env = append(env, k+"="+v)
	}
	b.nuv = benchutil.Nuv{Bin: nuvBin}.With(env...)
	b.spec = filepath.Join(b.tmp, "gke.yaml")
	if err := os.WriteFile(b.spec, []byte(fmt.Sprintf(specDoc, b.project)), 0o644); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// nuvRun runs nuv with args and returns its time; a plan's exit code 2 (--detailed-exitcode:
// changes) is no error.
func (b *gkeBench) nuvRun(args ...string) (time.Duration, error) {
	d, _, err := b.nuv.Run(args...)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 && args[1] == "plan" {
		return d, nil // --detailed-exitcode: changes
	}
	return d, err
}

// measurePlan times runs nuv processes planning the new cluster and prints the figures.
func (b *gkeBench) measurePlan(runs int) error {
	plans, err := benchutil.Repeat(runs, func() (time.Duration, error) {
		return b.nuvRun("cluster", "plan", "-f", b.spec, "--detailed-exitcode")
	})
	if err != nil {
		return err
	}
	med, lo, hi := benchutil.Stats(plans)
	fmt.Printf("plan of a new GKE cluster, 3 node pools (nuv process): median %.1f ms (min %.1f, max %.1f, %d runs)\n", benchutil.MS(med), benchutil.MS(lo), benchutil.MS(hi), runs)
	return nil
}

// measureCalls times 20*runs GetServerConfig calls over cn's gRPC client and prints the figures.
func (b *gkeBench) measureCalls(cn *gke.Conn, runs int) error {
	var calls []time.Duration
	for i := 0; i < 20*runs; i++ {
		t0 := time.Now()
		_, err := cn.Client.GetServerConfig(b.ctx, &containerpb.GetServerConfigRequest{Name: "projects/" + b.project + "/locations/us-central1-a"})
		if err != nil {
			return err
		}
		calls = append(calls, time.Since(t0))
	}
	med, lo, hi := benchutil.Stats(calls)
	fmt.Printf("GetServerConfig over gRPC (token on the call): median %.2f ms (min %.2f, max %.2f, %d calls)\n", benchutil.MS(med), benchutil.MS(lo), benchutil.MS(hi), len(calls))
	return nil
}

// firstNodeList times the first node list through the cluster's kubeconfig, whose exec credential
// runs nuv -gke-token, and prints it and the create (which took create) to a usable kubeconfig.
func (b *gkeBench) firstNodeList(create time.Duration) error {
	for k, v := range b.vars {
		os.Setenv(k, v)
	}
	kc := filepath.Join(b.vars["NUV_PROJECT"], "clusters", "bench.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(b.ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("node list through the kubeconfig: %w", err)
	}
	fmt.Printf("first node list through the kubeconfig (exec: nuv -gke-token): %.1f ms, %d nodes\n", benchutil.MS(time.Since(t0)), len(nodes.Items))
	fmt.Printf("emulated GKE create to a usable kubeconfig: %.2f s\n", (create + time.Since(t0)).Seconds())
	return nil
}
