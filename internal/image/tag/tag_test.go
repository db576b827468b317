package tag

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/image/imagetest"
)

func TestName(t *testing.T) {
	at := time.Date(2026, 11, 30, 7, 5, 0, 0, time.UTC)
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{BaseTag: "0.1.0-dev"}, "0.1.0-dev.26113007"},
		{Options{BaseTag: "0.1.0-dev", Minute: true}, "0.1.0-dev.2611300705"},
		{Options{BaseTag: "1.2.3", Prefix: "v"}, "v1.2.3.26113007"},
	} {
		if got := Name(tc.o, at); got != tc.want {
			t.Errorf("Name(%+v) = %s, want %s", tc.o, got, tc.want)
		}
	}
}

func TestHTTPSURL(t *testing.T) {
	for in, want := range map[string]string{
		"git@github.com:nuv-dev/nuv.git":                "https://github.com/nuv-dev/nuv",
		"ssh://git@github.com/nuv-dev/nuv.git":          "https://github.com/nuv-dev/nuv",
		"https://user:s3cret@github.com/nuv-dev/nuv":    "https://github.com/nuv-dev/nuv",
		"https://github.com/nuv-dev/nuv.git":            "https://github.com/nuv-dev/nuv",
		"https://x-access-token:ghp_abc@github.com/o/r": "https://github.com/o/r",
	} {
		if got := HTTPSURL(in); got != want {
			t.Errorf("HTTPSURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func tags(t *testing.T, dir string) map[string]string {
	out := imagetest.Git(t, dir, "for-each-ref", "--format=%(refname:short) %(objecttype) %(*objectname)%(objectname)", "refs/tags")
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			m[f[0]] = f[1] + " " + f[2]
		}
	}
	return m
}

func TestEnsureKeepsOtherTagsReusesAndForces(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	imagetest.GoModule(t, dir)
	// tags that exist before: a lightweight release, an annotated one, an older image tag
	imagetest.Git(t, dir, "tag", "v0.0.1")
	imagetest.Git(t, dir, "tag", "-a", "-m", "release", "v0.0.2")
	imagetest.Git(t, dir, "tag", "-a", "-m", "old", "0.1.0-dev.25010100")
	before := tags(t, dir)

	o := Options{BaseTag: "0.1.0-dev"}
	now := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	res, err := Ensure(ctx, dir, o, now, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tag != "0.1.0-dev.26113007" || res.Reused {
		t.Fatalf("first Ensure = %+v", res)
	}
	if typ := imagetest.Git(t, dir, "cat-file", "-t", res.Tag); typ != "tag" {
		t.Fatalf("%s is a %s, want an annotated tag", res.Tag, typ)
	}
	after := tags(t, dir)
	for name, v := range before {
		if after[name] != v {
			t.Errorf("tag %s changed: %q -> %q", name, v, after[name])
		}
	}
	if len(after) != len(before)+1 {
		t.Errorf("want exactly one new tag, have %v", after)
	}

	// same hour, new commit: reused, still on the old commit
	imagetest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "second")
	res2, err := Ensure(ctx, dir, o, now.Add(30*time.Minute), false)
	if err != nil || !res2.Reused || res2.Commit != res.Commit {
		t.Fatalf("second Ensure = %+v, %v; want reuse of %s", res2, err, res.Commit)
	}
	// --force moves just that tag to HEAD
	res3, err := Ensure(ctx, dir, o, now, true)
	if err != nil || !res3.Moved {
		t.Fatalf("forced Ensure = %+v, %v", res3, err)
	}
	head := imagetest.Git(t, dir, "rev-parse", "HEAD")
	if res3.Commit != head {
		t.Fatalf("forced tag on %s, HEAD is %s", res3.Commit, head)
	}
	final := tags(t, dir)
	for name, v := range before {
		if final[name] != v {
			t.Errorf("tag %s changed by --force: %q -> %q", name, v, final[name])
		}
	}
	// minute tags sort after the hour tag of the same hour
	if _, err := Ensure(ctx, dir, Options{BaseTag: "0.1.0-dev", Minute: true}, now.Add(5*time.Minute), false); err != nil {
		t.Fatal(err)
	}
	cur, err := Current(ctx, dir, o)
	if err != nil || cur != "0.1.0-dev.2611300705" {
		t.Fatalf("Current = %q, %v", cur, err)
	}
}

func TestEnsureBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	imagetest.GoModule(t, dir)
	if _, err := Ensure(ctx, dir, Options{BaseTag: "bad base"}, time.Now(), false); err == nil || !strings.Contains(err.Error(), "not a valid git tag") {
		t.Errorf("bad base: %v", err)
	}
	if _, err := Ensure(ctx, dir, Options{}, time.Now(), false); err == nil || !strings.Contains(err.Error(), "BASETAG") {
		t.Errorf("empty base: %v", err)
	}
	if _, err := Ensure(ctx, t.TempDir(), Options{BaseTag: "1.0"}, time.Now(), false); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Errorf("not a repo: %v", err)
	}
	if cur, err := Current(ctx, dir, Options{BaseTag: "9.9"}); err != nil || cur != "" {
		t.Errorf("Current with no tags = %q, %v", cur, err)
	}
}
