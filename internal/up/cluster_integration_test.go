package up

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/clustercmd"
	"github.com/nuv-dev/nuv/internal/cluster/localtest"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/deploy"
)

// TestIntegrationUpCluster: up's cluster is made through the lifecycle engine, so it has a state
// record and `nuv cluster plan` of a spec matching it shows no changes; up again changes nothing
// and writes nothing; a stopped cluster is started; a cluster the user reshaped keeps its shape.
func TestIntegrationUpCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a local cluster; skipped under -short")
	}
	project, home := t.TempDir(), t.TempDir()
	getenv := func(k string) string {
		switch k {
		case "NUV_HOME":
			return home
		case "NUV_PROJECT":
			return project
		case "NUV_STATE":
			return ""
		}
		return testGetenv(k)
	}
	var out bytes.Buffer
	o := deploy.Options{Project: project, Home: home, Getenv: getenv, Out: &out, Log: localtest.Logger(t)}
	ctx := context.Background()
	nuvCluster := func(args ...string) (string, int) {
		var b bytes.Buffer
		env := &cli.Env{Streams: cli.Streams{In: strings.NewReader(""), Out: &b, Err: &b}, Log: localtest.Logger(t), Getenv: getenv, Dir: project}
		err := clustercmd.Run(ctx, env, args)
		if err != nil {
			b.WriteString(err.Error())
		}
		return b.String(), cli.ExitCode(err)
	}
	t.Cleanup(func() { nuvCluster("delete", "dev") })

	t0 := time.Now()
	created, err := Cluster(ctx, o, "dev")
	if err != nil || !created {
		t.Fatalf("first up: created=%v %v\n%s", created, err, out.String())
	}
	t.Logf("up's cluster made in %.1fs", time.Since(t0).Seconds())
	if s, code := nuvCluster("state", "show", "dev"); code != 0 || !strings.Contains(s, "running") {
		t.Fatalf("state show dev: exit %d\n%s", code, s)
	}
	// The spec up stands for (`nuv cluster create local dev`'s) plans no changes.
	f := filepath.Join(project, "dev.yaml")
	body := "apiVersion: nuv.dev/v1alpha1\nkind: Cluster\nmetadata: {name: dev}\nspec:\n  provider: local\n  kubernetesVersion: \"" + companion.KubeVersion + "\"\n  nodeGroups: [{name: default, count: 1}]\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, code := nuvCluster("plan", "-f", f, "--detailed-exitcode"); code != 0 || !strings.Contains(s, "no changes") {
		t.Fatalf("plan of the spec matching up's cluster: exit %d\n%s", code, s)
	}
	if s, code := nuvCluster("create", "local", "dev", "--dry-run"); code != 1 || !strings.Contains(s, "already exists") {
		t.Fatalf("create --dry-run of up's cluster: exit %d\n%s", code, s)
	}

	record := filepath.Join(home, "state", "dev.json")
	before, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	if created, err := Cluster(ctx, o, "dev"); err != nil || created {
		t.Fatalf("second up: created=%v %v", created, err)
	}
	again := time.Since(t0)
	t.Logf("up's cluster reused in %s", again)
	if after, _ := os.ReadFile(record); !bytes.Equal(before, after) {
		t.Fatal("up of a running cluster rewrote its state record")
	}
	if again > 5*time.Second {
		t.Errorf("up of a running cluster took %s", again)
	}

	// A stopped cluster is started.
	if s, code := nuvCluster("stop", "dev"); code != 0 {
		t.Fatalf("stop: %s", s)
	}
	if _, err := Cluster(ctx, o, "dev"); err != nil {
		t.Fatalf("up of a stopped cluster: %v", err)
	}
	if s, code := nuvCluster("status", "dev"); code != 0 || !strings.Contains(s, "running") {
		t.Fatalf("status after up of a stopped cluster: exit %d\n%s", code, s)
	}

	// A cluster reshaped by the user keeps its shape: up applies the recorded spec.
	reshaped := strings.Replace(body, "count: 1}", "count: 1}, {name: extra, count: 1}", 1)
	if err := os.WriteFile(f, []byte(reshaped), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, code := nuvCluster("apply", "-f", f); code != 0 {
		t.Fatalf("apply of a reshaped dev: exit %d\n%s", code, s)
	}
	if _, err := Cluster(ctx, o, "dev"); err != nil {
		t.Fatalf("up of a reshaped cluster: %v", err)
	}
	if s, code := nuvCluster("plan", "-f", f, "--detailed-exitcode"); code != 0 {
		t.Fatalf("up reshaped the user's cluster: plan exit %d\n%s", code, s)
	}
}

// TestUpRefusesToReplace: a cluster up would have to replace (here one whose create never
// finished) is refused with a message saying so, and left as it is.
func TestUpRefusesToReplace(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "clusters", "dev")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "NUV_HOME" {
			return home
		}
		return ""
	}
	var out bytes.Buffer
	o := deploy.Options{Project: t.TempDir(), Home: home, Getenv: getenv, Out: &out, Log: cli.Quiet()}
	_, err := Cluster(context.Background(), o, "dev")
	if err == nil || !strings.Contains(err.Error(), "nuv up would have to replace control-plane/dev; up never destroys a cluster") {
		t.Fatalf("up of a half-made cluster: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("up touched the cluster: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(home, "state", "dev.json")); !os.IsNotExist(err) {
		t.Fatalf("up wrote a record: %v", err)
	}
}
