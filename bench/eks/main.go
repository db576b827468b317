// Command eks is the benchmark of nuv's eks provider against nuv's AWS emulator (on loopback, its
// EKS clusters real local control planes). It prints:
//
//   - the median of `nuv cluster plan -f` of a new 3-node-group EKS spec (VPC, 3 zones, a NAT
//     gateway per zone, roles, cluster, node groups, add-ons: 29 resources, the versions asked of
//     the API) (target <= 300 ms);
//   - emulated create to a usable kubeconfig: `nuv cluster apply -f` of a 2-zone spec with one
//     node group, then the first node list through the kubeconfig's `nuv -eks-token` credential
//     (target <= 15 s on 2 cores, most of it the local control plane);
//   - `nuv cluster delete` of it, every resource waited for and nothing tagged left (target <= 5 s).
//
// Each figure is a whole nuv process, start-up included. The emulator's status delay is 0, so the
// figures are nuv's, the SDK's and the control plane's own time; the waiters poll every 100 ms
// (nuv's interval against a loopback endpoint). No peer can run here (eksctl and Terraform need
// the real AWS; LocalStack's EKS needs Docker and a paid tier), so the figures stand alone.
//
// Run from the repository root: go run ./bench/eks [-runs 10] (the nuv-kube companion must be built
// or buildable: `nuv cluster prepare`, or NUV_KUBE_BIN).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
)

func main() {
	runs := flag.Int("runs", 10, "runs of the plan")
	flag.Parse()
	benchutil.Exit("bench/eks", run(*runs))
}

const threeGroups = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: shop}
spec:
  provider: eks
  kubernetesVersion: "1.35"
  zones: [us-east-1a, us-east-1b, us-east-1c]
  networking: {vpcCIDR: 10.20.0.0/16}
  nodeGroups:
  - {name: system, count: 2, instanceType: m6i.large, labels: {role: system}}
  - {name: web, min: 1, count: 3, max: 6, instanceType: c6i.xlarge, spot: true, taints: ["dedicated=web:NoSchedule"]}
  - {name: batch, count: 0, max: 4, instanceType: r6i.2xlarge}
  eks: {nat: perAZ, logging: [api, audit]}
`

const oneGroup = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata: {name: bench}
spec:
  provider: eks
  nodeGroups:
  - {name: workers, count: 2, instanceType: m6i.large}
  eks: {nat: single}
`

func run(runs int) error {
	ctx := context.Background()
	ws, err := benchutil.NewWorkspace("nuv-bench-eks-")
	if err != nil {
		return err
	}
	defer ws.Close()
	tmp := ws.Dir
	home, project := filepath.Join(tmp, "home"), filepath.Join(tmp, "project")
	emuDir := filepath.Join(tmp, "emulator")
	s, err := emulator.New(emulator.Options{Dir: emuDir})
	if err != nil {
		return err
	}
	addr, stop, err := benchutil.ServeLoopback(func(ctx context.Context, ln net.Listener) error { return emulator.Serve(ctx, ln, s) })
	if err != nil {
		return err
	}
	defer func() {
		stop()
		p := local.Provider{Home: emuDir, Project: emuDir}
		names, _ := p.Names()
		for _, n := range names {
			_ = p.Delete(context.Background(), n)
		}
	}()
	key, secret, _, region := s.Credentials()
	vars := map[string]string{"AWS_ENDPOINT_URL": "http://" + addr, "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
		"AWS_REGION": region, "AWS_CONFIG_FILE": filepath.Join(tmp, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(tmp, "none"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "NUV_HOME": home, "NUV_PROJECT": project}
	for k, v := range vars {
		os.Setenv(k, v) // the kubeconfig's exec credential, run by client-go here, reads them
	}
	write := func(name, doc string) (string, error) {
		p := filepath.Join(tmp, name)
		return p, os.WriteFile(p, []byte(doc), 0o644)
	}
	three, err := write("three.yaml", threeGroups)
	if err != nil {
		return err
	}
	one, err := write("one.yaml", oneGroup)
	if err != nil {
		return err
	}
	nuvRun := benchutil.Nuv{Bin: ws.Nuv, Env: os.Environ(), Dir: tmp}.Run
	if _, _, err := nuvRun("cluster", "prepare"); err != nil {
		return err
	}
	plans, err := benchutil.Repeat(runs, func() (time.Duration, error) {
		d, out, err := nuvRun("cluster", "plan", "-f", three)
		if err == nil && !strings.Contains(out, "Plan: 29 to create") {
			err = fmt.Errorf("unexpected plan:\n%s", out)
		}
		return d, err
	})
	if err != nil {
		return err
	}

	fmt.Println("creating bench (emulated EKS, one node group of 2) with `nuv cluster apply` ...")
	create, out, err := nuvRun("cluster", "apply", "-f", one)
	if err != nil {
		return err
	}
	defer nuvRun("cluster", "delete", "--yes", "bench")
	t0 := time.Now()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(project, "clusters", "bench.kubeconfig"))
	if err != nil {
		return err
	}
	nodes, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes through the kubeconfig: %w\n%s", err, out)
	}
	usable := create + time.Since(t0)
	del, _, err := nuvRun("cluster", "delete", "--yes", "bench")
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(benchutil.StatsHeader)
	fmt.Print(benchutil.StatsRow("plan, new 3-node-group EKS spec (29 resources)", plans, "<= 300 ms"))
	fmt.Printf("| emulated create to a usable kubeconfig (apply %.2f s + first node list, %d nodes) | %.2f s | | | <= 15 s |\n", create.Seconds(), len(nodes.Items), usable.Seconds())
	fmt.Printf("| delete, nothing tagged left | %.2f s | | | <= 5 s |\n", del.Seconds())
	fmt.Printf("(%d plans; every figure is a whole nuv process)\n", runs)
	return nil
}
