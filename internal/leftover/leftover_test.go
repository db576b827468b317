package leftover

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, kind, out string
		want            []Object
		err             string
	}{
		{"containers", "container", "abc123\tnuv-kind-foreign-control-plane\ndef456\tregistry\n",
			[]Object{{"container", "abc123", "nuv-kind-foreign-control-plane"}, {"container", "def456", "registry"}}, ""},
		{"volumes have no id", "volume", "\t0f3c9a\n\tnuv-data\n", []Object{{"volume", "", "0f3c9a"}, {"volume", "", "nuv-data"}}, ""},
		{"empty", "network", "\n", nil, ""},
		{"no tab", "network", "abc kind\n", nil, `unexpected line "abc kind"`},
		{"no name", "network", "abc\t\n", nil, "unexpected line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse(tc.kind, []byte(tc.out))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func TestNewAndReport(t *testing.T) {
	before := []Object{{"container", "c1", "old"}, {"volume", "", "keep"}, {"network", "n1", "kind"}}
	now := []Object{
		{"container", "c1", "old"},
		{"container", "c2", "old"}, // same name, made again: new
		{"volume", "", "keep"},
		{"volume", "", "fresh"},
		{"network", "n1", "kind"},
		{"network", "n2", "nuv-reg-test-net"},
	}
	got := New(before, now)
	want := []Object{{"container", "c2", "old"}, {"network", "n2", "nuv-reg-test-net"}, {"volume", "", "fresh"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("new: %v, want %v", got, want)
	}
	if n := New(now, now); len(n) != 0 {
		t.Errorf("nothing new, got %v", n)
	}
	lines := Report(map[string][]Object{"podman": {{"volume", "", "v"}}, "docker": got})
	wantLines := []string{"docker: container old (c2)", "docker: network nuv-reg-test-net (n2)", "docker: volume fresh", "podman: volume v"}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("report:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

func TestSnapshotSaveLoad(t *testing.T) {
	file := filepath.Join(t.TempDir(), "before.json")
	s := Snapshot{"docker": {{"container", "c1", "a"}}, "podman": nil}
	if err := s.Save(file); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v", fi, err)
	}
	back, err := Load(file)
	if err != nil || !reflect.DeepEqual(back["docker"], s["docker"]) || len(back) != 2 {
		t.Errorf("loaded %v %v", back, err)
	}
	os.WriteFile(file, []byte("{not json"), 0o600)
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a broken snapshot: %v", err)
	}
}

// TestIntegrationLeftoverOnDocker takes a snapshot of the test command's dockerd, makes a volume,
// a network and a container there, and finds exactly those left; once they are removed, nothing.
func TestIntegrationLeftoverOnDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the test command's dockerd (hack/dockerd.sh)")
	}
	if os.Getenv("DOCKER_HOST") == "" {
		t.Fatal("DOCKER_HOST is not set: hack/test.sh starts nuv's own dockerd (`eval \"$(hack/dockerd.sh env)\"`)")
	}
	ctx := context.Background()
	docker := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	images := strings.Fields(docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}"))
	if len(images) == 0 {
		t.Fatal("the dockerd has no image to make a container of (hack/test.sh loads the kind node image)")
	}
	before, err := Take(ctx, []Runtime{{Name: "docker"}})
	if err != nil {
		t.Fatal(err)
	}
	const name = "nuv-leftover-test"
	docker("volume", "create", name)
	docker("network", "create", name)
	docker("create", "--name", name, "--network", name, "-v", name+":/data", images[0])
	removed := false
	remove := func() {
		docker("rm", "-f", name)
		docker("network", "rm", name)
		docker("volume", "rm", name)
		removed = true
	}
	t.Cleanup(func() {
		if !removed {
			remove()
		}
	})
	left, err := Left(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range left["docker"] {
		if o.Name == name {
			got = append(got, o.Kind)
		}
	}
	if strings.Join(got, ",") != "container,network,volume" {
		t.Errorf("left on docker: %v, want the container, network and volume %s", Report(left), name)
	}
	remove()
	left, err = Left(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range Report(left) {
		if strings.Contains(line, name) {
			t.Errorf("still reported after removal: %s", line)
		}
	}
}
