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
	tmp := ws.Dir
	emuDir := filepath.Join(tmp, "emulator")
	s, err := gcp.New(gcp.Options{Dir: emuDir})
	if err != nil {
		return err
	}
	addr, stop, err := benchutil.ServeLoopback(func(ctx context.Context, ln net.Listener) error { return gcp.Serve(ctx, ln, s) })
	if err != nil {
		return err
	}
	defer stop()
	for i := 0; i < 100 && gcp.Ping(ctx, addr) != nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	project, _ := s.Project()
	vars := map[string]string{
		gke.EndpointEnv:                  "http://" + addr + "/",
		"GOOGLE_APPLICATION_CREDENTIALS": filepath.Join(emuDir, gcp.CredentialsFileName),
		"NUV_HOME":                       filepath.Join(tmp, "home"),
		"NUV_PROJECT":                    filepath.Join(tmp, "project"),
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	nuv := benchutil.Nuv{Bin: ws.Nuv}.With(env...)
	spec := filepath.Join(tmp, "gke.yaml")
	if err := os.WriteFile(spec, []byte(fmt.Sprintf(specDoc, project)), 0o644); err != nil {
		return err
	}
	nuvRun := func(args ...string) (time.Duration, error) {
		d, _, err := nuv.Run(args...)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 && args[1] == "plan" {
			return d, nil // --detailed-exitcode: changes
		}
		return d, err
	}

	plans, err := benchutil.Repeat(runs, func() (time.Duration, error) {
		return nuvRun("cluster", "plan", "-f", spec, "--detailed-exitcode")
	})
	if err != nil {
		return err
	}
	med, lo, hi := benchutil.Stats(plans)
	fmt.Printf("plan of a new GKE cluster, 3 node pools (nuv process): median %.1f ms (min %.1f, max %.1f, %d runs)\n", benchutil.MS(med), benchutil.MS(lo), benchutil.MS(hi), runs)

	getenv := func(k string) string { return vars[k] }
	cn, err := gke.Connect(ctx, getenv)
	if err != nil {
		return err
	}
	defer cn.Client.Close()
	var calls []time.Duration
	for i := 0; i < 20*runs; i++ {
		t0 := time.Now()
		_, err := cn.Client.GetServerConfig(ctx, &containerpb.GetServerConfigRequest{Name: "projects/" + project + "/locations/us-central1-a"})
		if err != nil {
			return err
		}
		calls = append(calls, time.Since(t0))
	}
	med, lo, hi = benchutil.Stats(calls)
	fmt.Printf("GetServerConfig over gRPC (token on the call): median %.2f ms (min %.2f, max %.2f, %d calls)\n", benchutil.MS(med), benchutil.MS(lo), benchutil.MS(hi), len(calls))

	create, err := nuvRun("cluster", "apply", "-f", spec)
	if err != nil {
		return err
	}
	fmt.Printf("emulated GKE create (nuv cluster apply: cluster, 3 node pools, 5 nodes, kubeconfig): %.2f s\n", create.Seconds())

	// The first node list through the kubeconfig: its exec credential runs nuv -gke-token.
	for k, v := range vars {
		os.Setenv(k, v)
	}
	kc := filepath.Join(vars["NUV_PROJECT"], "clusters", "bench.kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return err
	}
	t0 := time.Now()
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("node list through the kubeconfig: %w", err)
	}
	fmt.Printf("first node list through the kubeconfig (exec: nuv -gke-token): %.1f ms, %d nodes\n", benchutil.MS(time.Since(t0)), len(nodes.Items))
	fmt.Printf("emulated GKE create to a usable kubeconfig: %.2f s\n", (create + time.Since(t0)).Seconds())

	del, err := nuvRun("cluster", "delete", "--yes", "bench")
	if err != nil {
		return err
	}
	fmt.Printf("emulated GKE delete (nuv cluster delete, nothing left): %.2f s\n", del.Seconds())
	return nil
}
