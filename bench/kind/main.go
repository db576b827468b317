// Command kind is the benchmark of nuv's kind provider on this machine's container runtime
// (DOCKER_HOST; hack/dockerd.sh starts nuv's own). It prints, for a 1-node and a 2-node cluster:
//
//   - `nuv cluster apply -f spec` of a new kind cluster to nodes Ready (kubeconfig written, default
//     ServiceAccount present), and its `nuv cluster delete`;
//   - the peer: the kind library creating the same cluster with the same node image and host patches
//     and waiting for Ready (what `kind create cluster --wait` does), and the ratio nuv/peer;
//   - where each create's time went: nuv's own steps, kind's steps and kubeadm init's phases;
//
// and, on the 1-node cluster, `nuv image load` (task build-and-load: the operator image built and
// loaded into the node) and `nuv operator` to the operator's Deployment Available in a real pod.
// Published anchor: 12-17 s for kind's one-node create with a pulled image on a laptop.
//
// Run from the repository root: go run ./bench/kind [-runs 1]. The node image is nuv's offline one
// (NUV_KIND_NODE_IMAGE names it, else nuv builds or finds it).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	kindcluster "sigs.k8s.io/kind/pkg/cluster"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/cluster/kind"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
)

func main() {
	runs := flag.Int("runs", 1, "creates of each size (nuv and the peer)")
	flag.Parse()
	benchutil.Exit("bench/kind", run(*runs))
}

func specDoc(name string, workers int) string {
	s := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + name + "}\nspec:\n  provider: kind\n  kubernetesVersion: \"1.36\"\n"
	if workers > 0 {
		s += fmt.Sprintf("  nodeGroups:\n  - {name: workers, count: %d}\n", workers)
	}
	return s
}

type row struct {
	what               string
	nuv, peer          []time.Duration
	phases, peerPhases []string
	note               string
}

// phasesLine is the line where nuv's kind provider prints the timed steps of a create.
var phasesLine = regexp.MustCompile(`create phases: (.*)`)

func run(runs int) error {
	root, err := benchutil.ModuleRoot()
	if err != nil {
		return err
	}
	ws, err := benchutil.NewWorkspace("nuv-bench-kind-")
	if err != nil {
		return err
	}
	defer ws.Close()
	b := &kindBench{tmp: ws.Dir}
	if err := b.prepareProject(root, ws.Nuv); err != nil {
		return err
	}
	var rows []row
	for _, workers := range []int{0, 1} {
		create, del, err := b.measureSize(workers, runs)
		if err != nil {
			return err
		}
		rows = append(rows, create, del)
	}
	b.printTable(rows, runs)
	return nil
}

// kindBench is one run: nuv pointed at a scratch project, and the figures measured once.
type kindBench struct {
	tmp              string
	nuv              benchutil.Nuv
	image            string        // the node image of nuv's first cluster, which the peer uses too
	loadT, operatorT time.Duration // nuv image load and nuv operator on the first cluster
}

// prepareProject makes the scratch project (linked to the module root's operator and tests, so
// `nuv operator` deploys this checkout's) and points nuv, the binary nuvBin, at it.
func (b *kindBench) prepareProject(root, nuvBin string) error {
	project := filepath.Join(b.tmp, "project")
	if err := os.MkdirAll(filepath.Join(project, "clusters"), 0o755); err != nil {
		return err
	}
	for _, f := range []string{"go.mod", "go.sum", "operator", "tests"} {
		if err := os.Symlink(filepath.Join(root, f), filepath.Join(project, f)); err != nil {
			return err
		}
	}
	b.nuv = benchutil.Nuv{Bin: nuvBin, Dir: project}.With("NUV_HOME="+filepath.Join(b.tmp, "home"), "NUV_PROJECT="+project)
	return nil
}

// nuvRun runs nuv with args and the extra environment variables, and returns its time and output.
func (b *kindBench) nuvRun(extra []string, args ...string) (time.Duration, string, error) {
	return b.nuv.With(extra...).Run(args...)
}

// measureSize measures, runs times, nuv creating and deleting a cluster with one control plane and
// the given workers, and the peer creating the same; it returns the create and delete rows.
func (b *kindBench) measureSize(workers, runs int) (create, del row, err error) {
	name := fmt.Sprintf("bench-kind-%d", workers+1)
	file := filepath.Join(b.tmp, name+".yaml")
	if err := os.WriteFile(file, []byte(specDoc(name, workers)), 0o644); err != nil {
		return row{}, row{}, err
	}
	create = row{what: fmt.Sprintf("%d node(s): create to Ready", workers+1)}
	del = row{what: fmt.Sprintf("%d node(s): delete", workers+1)}
	for i := 0; i < runs; i++ {
		if err := b.nuvRound(name, file, workers == 0 && i == 0, &create, &del); err != nil {
			return row{}, row{}, err
		}
		fmt.Printf("peer (kind library, --wait): %s ...\n", name)
		pd, phases, err := peerCreate(name+"-peer", b.image, workers, b.tmp)
		if err != nil {
			return row{}, row{}, err
		}
		create.peer = append(create.peer, pd)
		create.peerPhases = append(create.peerPhases, phases)
		fmt.Printf("  peer %.1f s: %s\n", pd.Seconds(), phases)
	}
	return create, del, nil
}

// nuvRound times nuv applying the spec file of cluster name and deleting it, into create and del;
// the first cluster's node image is noted for the peer, and when first, `nuv image load` and
// `nuv operator` are timed on it before the delete.
func (b *kindBench) nuvRound(name, file string, first bool, create, del *row) error {
	fmt.Printf("nuv cluster apply: %s ...\n", name)
	d, out, err := b.nuvRun(nil, "cluster", "apply", "-f", file)
	if err != nil {
		b.nuvRun(nil, "cluster", "delete", name)
		return err
	}
	create.nuv = append(create.nuv, d)
	if m := phasesLine.FindStringSubmatch(out); m != nil {
		create.phases = append(create.phases, m[1])
		fmt.Printf("  nuv %.1f s: %s\n", d.Seconds(), m[1])
	}
	if b.image == "" {
		out, err := exec.Command("docker", "inspect", "--format", "{{.Config.Image}}", name+"-control-plane").Output()
		if err != nil {
			return fmt.Errorf("node image of %s: %v", name, err)
		}
		b.image = strings.TrimSpace(string(out))
	}
	if first {
		fmt.Println("nuv image load (build-and-load) and nuv operator ...")
		extra := []string{"NUV_CLUSTER=" + name}
		if b.loadT, _, err = b.nuvRun(extra, "image", "load"); err != nil {
			b.nuvRun(nil, "cluster", "delete", name)
			return err
		}
		if b.operatorT, _, err = b.nuvRun(extra, "operator"); err != nil {
			b.nuvRun(nil, "cluster", "delete", name)
			return err
		}
	}
	d, _, err = b.nuvRun(nil, "cluster", "delete", name)
	if err != nil {
		return err
	}
	del.nuv = append(del.nuv, d)
	return nil
}

// printTable prints the medians of the rows beside the peer's, the one-off figures, and where
// the time of each row's last run went.
func (b *kindBench) printTable(rows []row, runs int) {
	fmt.Println()
	fmt.Printf("node image: %s\n\n", b.image)
	fmt.Printf("| figure | nuv (median) | peer: kind library --wait (median) | nuv/peer |\n|---|---|---|---|\n")
	for _, r := range rows {
		n := benchutil.Median(r.nuv)
		if len(r.peer) == 0 {
			fmt.Printf("| %s | %.1f s | - | - |\n", r.what, n.Seconds())
			continue
		}
		p := benchutil.Median(r.peer)
		fmt.Printf("| %s | %.1f s | %.1f s | %.2f |\n", r.what, n.Seconds(), p.Seconds(), n.Seconds()/p.Seconds())
	}
	fmt.Printf("| build-and-load (operator image built, loaded into the node) | %.1f s | - | - |\n", b.loadT.Seconds())
	fmt.Printf("| nuv operator to Available (a real pod) | %.1f s | - | - |\n", b.operatorT.Seconds())
	fmt.Printf("(%d run(s) each; nuv figures are whole nuv processes; published anchor for kind's 1-node create: 12-17 s with a pulled image)\n", runs)
	fmt.Println("\nWhere the time goes (the last run of each; kind's steps from its status lines, kubeadm's phases from its klog timestamps):")
	for _, r := range rows {
		if len(r.phases) > 0 {
			fmt.Printf("- %s, nuv: %s\n", r.what, r.phases[len(r.phases)-1])
		}
		if len(r.peerPhases) > 0 {
			fmt.Printf("- %s, peer: %s\n", r.what, r.peerPhases[len(r.peerPhases)-1])
		}
	}
}

// peerCreate creates a cluster the way the kind CLI does (kind's library, --wait), with the node
// image and the host patches nuv uses, and deletes it; it returns the create time. kind waits for
// the control-plane nodes only; nuv waits for every node and the default ServiceAccount.
func peerCreate(name, image string, workers int, tmp string) (time.Duration, string, error) {
	n := workers
	c := &spec.Cluster{Metadata: spec.Metadata{Name: name}, Spec: spec.Spec{Provider: "kind"}}
	if n > 0 {
		c.Spec.NodeGroups = []spec.NodeGroup{{Name: "workers", Count: &n}}
	}
	cfg, err := kind.Config(kind.ConfigInput{Spec: c, Image: image, Host: kind.DetectHost()})
	if err != nil {
		return 0, "", err
	}
	logger, phases := kind.PhaseLogger(nil)
	kp := kindcluster.NewProvider(kindcluster.ProviderWithDocker(), kindcluster.ProviderWithLogger(logger))
	kc := filepath.Join(tmp, name+".kubeconfig")
	t0 := time.Now()
	err = kp.Create(name, kindcluster.CreateWithV1Alpha4Config(cfg), kindcluster.CreateWithKubeconfigPath(kc),
		kindcluster.CreateWithWaitForReady(5*time.Minute), kindcluster.CreateWithDisplayUsage(false), kindcluster.CreateWithDisplaySalutation(false))
	d := time.Since(t0)
	timed := kind.FormatPhases(phases())
	rt, rerr := containerrt.Detect(context.Background(), os.Getenv)
	for attempt := 1; attempt <= 4; attempt++ { // as nuv does: a busy node may need another kill
		if rerr == nil { // and a node whose pods runc left frozen (cgroup v1) cannot be killed at all
			(&kind.Provider{}).ThawNodes(context.Background(), rt, name)
		}
		derr := kp.Delete(name, kc)
		if derr == nil {
			break
		}
		if attempt == 4 && err == nil {
			err = derr
		}
		time.Sleep(time.Duration(attempt) * 5 * time.Second)
	}
	return d, timed, err
}
