// Command lifecycle is the benchmark of nuv's cluster lifecycle engine. It prints:
//
//   - the median of `nuv cluster plan -f` over a spec file of 5 clusters, one of them running (its
//     resources observed through its API server) and 4 to create (target <= 200 ms);
//   - the median of a no-change `nuv cluster apply -f` of the running cluster (target <= 1 s);
//   - the create time of each provider that can run here: local, through `nuv cluster apply`
//     (spec to nodes Ready and kubeconfig written), and its delete time.
//
// Each figure is a whole nuv process as a user runs it (start-up included). Run from the repository
// root: go run ./bench/lifecycle [-runs 10]. The nuv-kube companion must be built or buildable.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
)

func main() {
	runs := flag.Int("runs", 10, "runs of plan and of the no-change apply")
	flag.Parse()
	benchutil.Exit("bench/lifecycle", run(*runs))
}

const clusterDoc = `apiVersion: nuv.dev/v1alpha1
kind: Cluster
metadata:
  name: %s
spec:
  provider: local
  nodeGroups:
  - name: web
    count: %d
    labels: {tier: web}
  - name: batch
    count: 1
    taints: ["batch=true:NoSchedule"]
`

func run(runs int) error {
	ws, err := benchutil.NewWorkspace("nuv-bench-lifecycle-")
	if err != nil {
		return err
	}
	defer ws.Close()
	tmp := ws.Dir
	nuvRun := benchutil.Nuv{Bin: ws.Nuv}.With("NUV_HOME="+filepath.Join(tmp, "home"), "NUV_PROJECT="+filepath.Join(tmp, "project")).Run
	one := filepath.Join(tmp, "one.yaml")
	five := filepath.Join(tmp, "five.yaml")
	var docs []string
	for i := 0; i < 5; i++ {
		docs = append(docs, fmt.Sprintf(clusterDoc, fmt.Sprintf("bench-%d", i), 2+i))
	}
	if err := os.WriteFile(one, []byte(docs[0]), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(five, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		return err
	}
	if _, _, err := nuvRun("cluster", "prepare"); err != nil {
		return err
	}
	fmt.Println("creating bench-0 (local, 3 nodes in 2 groups) with `nuv cluster apply` ...")
	create, _, err := nuvRun("cluster", "apply", "-f", one)
	if err != nil {
		return err
	}
	defer nuvRun("cluster", "delete", "--all", "--yes")

	var plans, applies []time.Duration
	for i := 0; i < runs; i++ {
		d, out, err := nuvRun("cluster", "plan", "-f", five)
		if err != nil {
			return err
		}
		if strings.Count(out, "+ create control-plane/") != 4 || !strings.Contains(out, "cluster bench-0 (local): no changes") {
			return fmt.Errorf("unexpected plan:\n%s", out)
		}
		plans = append(plans, d)
		d, out, err = nuvRun("cluster", "apply", "-f", one)
		if err != nil {
			return err
		}
		if !strings.Contains(out, "no changes") {
			return fmt.Errorf("the no-change apply changed something:\n%s", out)
		}
		applies = append(applies, d)
	}
	del, _, err := nuvRun("cluster", "delete", "bench-0")
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Print(benchutil.StatsHeader)
	fmt.Print(benchutil.StatsRow("plan, 5 clusters (1 running, 4 new)", plans, "<= 200 ms"))
	fmt.Print(benchutil.StatsRow("apply with no change", applies, "<= 1000 ms"))
	fmt.Printf("| local: apply of a new spec to nodes Ready | %.2f s | | | - |\n", create.Seconds())
	fmt.Printf("| local: delete | %.2f s | | | - |\n", del.Seconds())
	fmt.Printf("(%d runs each; every figure is a whole nuv process)\n", runs)
	return nil
}
