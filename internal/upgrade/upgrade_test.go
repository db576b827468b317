package upgrade

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// gitRepo makes a real git repository with two commits (tag v1 on the first) and returns it.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	os.MkdirAll(filepath.Join(dir, "operator", "cmd"), 0o755)
	os.WriteFile(filepath.Join(dir, "operator", "cmd", "main.go"), []byte("package main // v1\n"), 0o644)
	os.Symlink("cmd/main.go", filepath.Join(dir, "operator", "link.go"))
	git("add", "-A")
	git("commit", "-qm", "one")
	git("tag", "v1")
	os.WriteFile(filepath.Join(dir, "operator", "cmd", "main.go"), []byte("package main // v2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("only in v2\n"), 0o644)
	git("add", "-A")
	git("commit", "-qm", "two")
	return dir
}

func TestResolve(t *testing.T) {
	repo := gitRepo(t)
	ctx := context.Background()
	for _, tc := range []struct {
		from, commit, image, err string
	}{
		{from: "v1", commit: "?"},
		{from: "HEAD~1", commit: "?"},
		{from: "registry.example.com/team/op:v1", image: "registry.example.com/team/op:v1"},
		{from: "ghcr.io/nuv-dev/whisk-operator@sha256:" + strings.Repeat("a", 64), image: "ghcr.io/nuv-dev/whisk-operator@sha256:" + strings.Repeat("a", 64)},
		{from: "v9", err: `--upgrade-from "v9": not a commit of the git repository`},
		{from: "", err: "empty version"},
		{from: "--output=x", err: "not a git ref nor an image reference"},
		{from: "Bad Image:tag", err: "not a commit of the git repository"},
	} {
		src, err := Resolve(ctx, repo, tc.from)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.from, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.from, err)
		case tc.commit != "" && len(src.Commit) != 40, tc.image != src.Image:
			t.Errorf("%q: %+v", tc.from, src)
		}
	}
	a, _ := Resolve(ctx, repo, "v1")
	b, _ := Resolve(ctx, repo, "HEAD~1")
	if a.Commit != b.Commit || a.From != "v1" {
		t.Errorf("v1 is %+v, HEAD~1 is %+v", a, b)
	}
}

func TestCheckout(t *testing.T) {
	repo := gitRepo(t)
	ctx := context.Background()
	src, err := Resolve(ctx, repo, "v1")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "v1")
	if err := Checkout(ctx, repo, src.Commit, dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "operator", "cmd", "main.go")); err != nil || string(b) != "package main // v1\n" {
		t.Errorf("main.go at v1: %q, %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "operator", "link.go")); err != nil || l != "cmd/main.go" {
		t.Errorf("symlink: %q, %v", l, err)
	}
	for _, absent := range []string{"new.txt", ".git"} {
		if _, err := os.Stat(filepath.Join(dir, absent)); !os.IsNotExist(err) {
			t.Errorf("%s in the checkout of v1: %v", absent, err)
		}
	}
	if err := Checkout(ctx, repo, src.Commit, dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a second checkout into the same directory: %v", err)
	}
	if err := Checkout(ctx, repo, strings.Repeat("0", 40), filepath.Join(t.TempDir(), "x")); err == nil || !strings.Contains(err.Error(), "git archive") {
		t.Errorf("checkout of a missing commit: %v", err)
	}
}

func TestCompare(t *testing.T) {
	w := func(uid string, labels, ann map[string]string) Workload {
		return Workload{UID: uid, Labels: labels, Annotations: ann}
	}
	before := &Snapshot{Namespace: "default", Name: "whisk", UID: "u1", Workloads: map[string]Workload{
		"Deployment default/whisk-controller": w("d1", map[string]string{"a": "1", "gone": "x"}, map[string]string{"deployment.kubernetes.io/revision": "1"}),
		"StatefulSet default/whisk-couchdb":   w("s1", map[string]string{"a": "1"}, nil),
		"Deployment default/old":              w("o1", nil, nil),
	}}
	for _, tc := range []struct {
		name    string
		after   *Snapshot
		sameUID bool
		changed []string
	}{
		{"unchanged", before, true, nil},
		{"operator changed labels, rolled a revision, recreated a StatefulSet, dropped and added workloads",
			&Snapshot{UID: "u1", Workloads: map[string]Workload{
				"Deployment default/whisk-controller": w("d1", map[string]string{"a": "2", "version": "v2"}, map[string]string{"deployment.kubernetes.io/revision": "2", "nuv.dev/rev": "2"}),
				"StatefulSet default/whisk-couchdb":   w("s2", map[string]string{"a": "1"}, nil),
				"Deployment default/new":              w("n1", nil, nil),
			}}, true, []string{
				"Deployment default/new: added",
				"Deployment default/old: gone",
				"Deployment default/whisk-controller: annotation nuv.dev/rev=2 added",
				"Deployment default/whisk-controller: label a 1 -> 2",
				"Deployment default/whisk-controller: label gone removed",
				"Deployment default/whisk-controller: label version=v2 added",
				"StatefulSet default/whisk-couchdb: recreated",
			}},
		{"instance recreated", &Snapshot{UID: "u2", Workloads: before.Workloads}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			same, changed := before.Compare(tc.after)
			if same != tc.sameUID || strings.Join(changed, "\n") != strings.Join(tc.changed, "\n") {
				t.Errorf("same uid %v, changed:\n%s\nwant %v:\n%s", same, strings.Join(changed, "\n"), tc.sameUID, strings.Join(tc.changed, "\n"))
			}
		})
	}
}

func TestRollingOut(t *testing.T) {
	obj := func(kind string, gen int64, spec, status map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": kind,
			"metadata": map[string]any{"name": "x", "generation": gen}, "spec": spec, "status": status}}
		return u
	}
	done := map[string]any{"observedGeneration": int64(2), "replicas": int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1)}
	with := func(m map[string]any, k string, v any) map[string]any {
		c := map[string]any{}
		for a, b := range m {
			c[a] = b
		}
		c[k] = v
		return c
	}
	for _, tc := range []struct {
		name string
		o    *unstructured.Unstructured
		want string
	}{
		{"rolled out", obj("Deployment", 2, map[string]any{"replicas": int64(1)}, done), ""},
		{"replicas defaulted", obj("Deployment", 2, map[string]any{}, done), ""},
		{"generation not observed", obj("Deployment", 3, map[string]any{"replicas": int64(1)}, done), "spec change not yet observed"},
		{"old pod still there", obj("Deployment", 2, map[string]any{"replicas": int64(1)}, with(done, "replicas", int64(2))), "1/1 replicas updated, 2 in all"},
		{"new pod not ready", obj("Deployment", 2, map[string]any{"replicas": int64(1)}, with(done, "readyReplicas", int64(0))), "0/1 replicas ready"},
		{"statefulset revision rolling", obj("StatefulSet", 2, map[string]any{"replicas": int64(1)},
			with(with(done, "currentRevision", "a-1"), "updateRevision", "a-2")), "revision a-2 rolling out"},
		{"statefulset at its revision", obj("StatefulSet", 2, map[string]any{"replicas": int64(1)},
			with(with(done, "currentRevision", "a-2"), "updateRevision", "a-2")), ""},
	} {
		if got := rollingOut(tc.o); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
