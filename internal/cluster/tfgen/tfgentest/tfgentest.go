// Package tfgentest checks a provider's Terraform output in tests: every file parses as HCL, matches
// its golden file under testdata (rewritten with -update), and `terraform fmt -check` accepts it.
package tfgentest

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
)

var update = flag.Bool("update-terraform", false, "rewrite the golden Terraform files")

// Check verifies files against the golden module in dir (testdata/terraform/NAME): the same file
// names, byte for byte, HCL that parses, and terraform fmt -check clean (terraform must be on PATH:
// the README's test command requires it).
func Check(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	if err := tfgen.Check(files); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if _, err := tfgen.Write(dir, files); err != nil {
			t.Fatal(err)
		}
	}
	// every file of the module: .tf files and what a provider keeps beside them (a spec)
	golden, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(golden) == 0 {
		t.Fatalf("no golden Terraform files in %s (run the test with -update-terraform)", dir)
	}
	if len(golden) != len(files) {
		t.Errorf("%s has %d files, the provider wrote %d", dir, len(golden), len(files))
	}
	for _, g := range golden {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := files[filepath.Base(g)]
		if !ok {
			t.Errorf("provider wrote no %s", filepath.Base(g))
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its golden file (run with -update-terraform to accept):\n--- got\n%s", g, got)
		}
	}
	Fmt(t, files)
}

// Fmt runs `terraform fmt -check -diff` over the files in a temporary directory.
func Fmt(t *testing.T, files map[string][]byte) {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform is not on PATH: the README's test command needs it (preinstalled on nuv's CI machines)")
	}
	dir := t.TempDir()
	if _, err := tfgen.Write(dir, files); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tf, "fmt", "-check", "-diff", "-recursive", dir)
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("terraform fmt -check: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}
