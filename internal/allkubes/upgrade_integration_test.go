package allkubes

import (
	"context"
	"encoding/xml"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cluster/kind/kindtest"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/report/reporttest"
)

// revisionLabel is what the second version of the scratch repository's operator adds to the
// labels of every object it makes: the observable difference between the two versions.
const revisionLabel = "nuv.dev/operator-revision"

// TestIntegrationAllKubesUpgradeKind runs `nuv all-kubes --upgrade-from v1 -- dtest` on one kind
// cluster (real pods: the offline node image in the project's dockerd) in a scratch project that
// is a real git repository with two versions of the reference operator: v1 (tagged) and the
// working tree's commit, whose operator adds a label to everything it makes. The install cell
// deploys the working tree's operator fresh; the upgrade cell builds v1's operator from a checkout,
// loads it, installs the Whisk on it, writes an action through its controller into CouchDB,
// upgrades to the working tree's operator (which rolls the workloads to add its label), and finds
// the same Whisk (UID) with the action still there, before dtest's own phases. The report has a
// cell per cluster x path in JSON, JUnit, the table and the HTML page, which is looked at in
// headless Chromium (screenshot in $NUV_TEST_ARTIFACTS).
//
// The same kind cluster then serves a second matrix beside a local cluster (kwok nodes), run from
// another project that has the itest suites: one report in which the kind cell is typed kind,
// made by the kind provider and marked real nodes, and the local cell simulated; each cell counts
// the one node its cluster has (a cluster without nodes would be marked empty, not real). A kind
// cluster costs a minute of both cores: the test makes one.
func TestIntegrationAllKubesUpgradeKind(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	ctx := context.Background()
	if _, err := containerrt.Detect(ctx, os.Getenv); err != nil {
		t.Fatalf("%v\n(hack/test.sh starts nuv's own dockerd: `eval \"$(hack/dockerd.sh env)\"`)", err)
	}
	start := time.Now()
	exe := buildNuv(t)
	project, v1 := scratchRepository(t)
	home := t.TempDir()
	const name = "nuv-kind-upg"
	t0 := time.Now()
	kindtest.Cluster(t, home, project, name, localtest.Logger(t))
	t.Logf("kind cluster in %.1fs", time.Since(t0).Seconds())

	// as a user does before dtest: the working tree's operator built and loaded (build-and-load),
	// and the workload's images (CouchDB is pouchdb-server, ...) loaded into the node
	for _, args := range [][]string{{"image", "load"}, {"image", "workload", "--load"}} {
		t0 = time.Now()
		load := exec.Command(exe, args...)
		load.Dir = project
		load.Env = append(os.Environ(), "NUV_HOME="+home, "NUV_PROJECT="+project, "NUV_CLUSTER="+name)
		if out, err := load.CombinedOutput(); err != nil {
			t.Fatalf("nuv %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("nuv %s in %.1fs", strings.Join(args, " "), time.Since(t0).Seconds())
	}

	t0 = time.Now()
	r := allKubes(t, exe, project, home, nil, "--upgrade-from", "v1", "--", "dtest")
	allKubesTime := time.Since(t0)
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	rep := checkReport(t, r.dir, []string{name, name})
	if rep.UpgradeFrom != "v1" {
		t.Errorf("report upgradeFrom %q", rep.UpgradeFrom)
	}
	cells := map[string]report.Result{}
	for _, x := range rep.Results {
		cells[x.Path] = x
	}
	inst, up := cells[report.PathInstall], cells[report.PathUpgrade]
	if inst.Status != report.Passed || inst.Upgrade != nil || inst.Platform == nil || inst.Platform.NodeKind() != report.NodesReal {
		t.Errorf("install cell: %s %s upgrade=%v platform=%+v", inst.Status, inst.Message, inst.Upgrade, inst.Platform)
	}
	var steps []string
	for _, s := range up.Steps {
		steps = append(steps, s.Name)
	}
	if want := "inventory install-from seed upgrade converged operator instance assertions destroy no-leaks"; strings.Join(steps, " ") != want {
		t.Errorf("upgrade cell steps %v, want %s", steps, want)
	}
	u := up.Upgrade
	if up.Status != report.Passed || u == nil {
		t.Fatalf("upgrade cell: %s %s (%+v)", up.Status, up.Message, u)
	}
	if u.From != "v1" || u.Commit != v1 || !u.UIDKept || u.UID == "" || u.Data != report.DataKept || u.Instance != "default/whisk" {
		t.Errorf("upgrade: %+v (v1 is %s)", u, v1)
	}
	if u.FromImage == "" || u.ToImage == "" || u.FromImage == u.ToImage || !strings.Contains(u.FromImage, "upgrade-from-"+v1[:12]) {
		t.Errorf("operator images: from %q to %q", u.FromImage, u.ToImage)
	}
	// the second version's operator really ran: it labelled the workloads it had made at v1
	for _, obj := range []string{"Deployment default/whisk-controller", "StatefulSet default/whisk-couchdb"} {
		if want := obj + ": label " + revisionLabel + "=2 added"; !slices.Contains(u.Changed, want) {
			t.Errorf("the upgrade's changes lack %q: %v", want, u.Changed)
		}
	}
	for _, c := range u.Changed {
		if strings.Contains(c, "recreated") || strings.Contains(c, "gone") {
			t.Errorf("the upgrade recreated or lost a workload: %s", c)
		}
	}
	// the project's recorded image is the working tree's: building v1 did not leave its reference
	if ref, err := os.ReadFile(filepath.Join(project, ".nuv", "images", name+".ref")); err != nil || strings.TrimSpace(string(ref)) != u.ToImage {
		t.Errorf(".nuv/images/%s.ref = %q, %v; want the working tree's %s", name, ref, err, u.ToImage)
	}
	if !strings.Contains(r.out, "upgrade on "+name+": from v1 ("+v1[:12]+"): uid kept, data kept") {
		t.Errorf("the table lacks the upgrade verdict")
	}
	data, err := os.ReadFile(filepath.Join(r.dir, report.JUnitFile))
	if err != nil {
		t.Fatal(err)
	}
	var suites report.JUnitSuites
	if err := xml.Unmarshal(data, &suites); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range suites.Suites {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != name+" install,"+name+" upgrade" || suites.Failures+suites.Errors != 0 {
		t.Errorf("junit suites %v, %d failures, %d errors", names, suites.Failures, suites.Errors)
	}
	reporttest.CheckUpgradeAxis(t, r.dir, "all-kubes-upgrade-kind.png")
	t.Logf("figures: all-kubes --upgrade-from (install + upgrade cells) %.1fs: install cell %.1fs, upgrade cell %.1fs; whole test %.1fs",
		allKubesTime.Seconds(), inst.Seconds, up.Seconds, time.Since(start).Seconds())
	for _, s := range up.Steps {
		t.Logf("  upgrade step %-13s %6.1fs", s.Name, s.Seconds)
	}

	t.Run("beside a local cluster", func(t *testing.T) {
		kindBesideLocal(t, exe, home, project, name)
	})
}

// kindBesideLocal runs one all-kubes matrix over the kind cluster name (made in home, its
// kubeconfig in from's clusters/) and a new local cluster, from a new project with the itest
// suites, and checks how the report marks each cell's nodes.
func kindBesideLocal(t *testing.T, exe, home, from, name string) {
	project := testProject(t, suites)
	kc := filepath.Join("clusters", name+".kubeconfig")
	data, err := os.ReadFile(filepath.Join(from, kc))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(project, "clusters"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, kc), data, 0o600); err != nil {
		t.Fatal(err)
	}
	localtest.Start(t, localtest.Options{Name: "local1", Project: project, Home: home})
	r := allKubes(t, exe, project, home, nil, "--", "itest", "T=isolation")
	if r.code != 0 {
		t.Fatalf("exit %d", r.code)
	}
	rep := checkReport(t, r.dir, []string{"local1", name})
	res := byCluster(rep)
	k, l := res[name], res["local1"]
	if k.Status != report.Passed || k.Type != "kind" || k.Platform == nil || k.Platform.Provider != "kind" || k.Platform.NodeKind() != report.NodesReal || k.Platform.Nodes != 1 || k.Platform.Simulated != 0 {
		t.Errorf("kind cell: %s type=%s platform=%+v: %s", k.Status, k.Type, k.Platform, k.Message)
	}
	if l.Status != report.Passed || l.Type != "local" || l.Platform == nil || l.Platform.NodeKind() != report.NodesSimulated || l.Platform.Nodes != 1 || l.Platform.Simulated != 1 {
		t.Errorf("local cell: %s type=%s platform=%+v: %s", l.Status, l.Type, l.Platform, l.Message)
	}
	if _, err := os.Stat(filepath.Join(r.dir, report.HTMLFile)); err != nil {
		t.Error(err)
	}
}

// scratchRepository makes a project that is a git repository of its own with two versions of the
// repository's reference operator (go.mod, go.sum, operator/ and the instance files copied): the
// first commit, tagged v1, as it is; the second (the working tree) adds revisionLabel=2 to the
// labels of everything the operator makes. It returns the project and v1's commit.
func scratchRepository(t *testing.T) (string, string) {
	t.Helper()
	root := repoRoot(t)
	p := t.TempDir()
	copyFile := func(src, dst string) {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		copyFile(filepath.Join(root, f), filepath.Join(p, f))
	}
	for _, dir := range []string{"operator", "tests"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() && d.Name() == "itest" {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				copyFile(path, filepath.Join(p, rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(p, ".gitignore"), []byte(".nuv/\n_reports/\nclusters/\n"), 0o644)
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = p
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=nuv test", "GIT_AUTHOR_EMAIL=test@nuv.dev",
			"GIT_COMMITTER_NAME=nuv test", "GIT_COMMITTER_EMAIL=test@nuv.dev")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "the reference operator")
	git("tag", "v1")
	v1 := git("rev-parse", "HEAD")

	comp := filepath.Join(p, "operator", "controller", "components.go")
	src, err := os.ReadFile(comp)
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "\t\tLabelName:      \"whisk\",\n"
	if !strings.Contains(string(src), anchor) {
		t.Fatalf("%s: the labels of the operator's objects are no longer set as this test expects (%q)", comp, anchor)
	}
	changed := strings.Replace(string(src), anchor, anchor+"\t\t\""+revisionLabel+"\": \"2\",\n", 1)
	if err := os.WriteFile(comp, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-qam", "operator: label what it makes with its revision")
	return p, v1
}
