package release

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShippedProgramsLinkNoTestCode: no program of an archive links a benchmark (bench/...), a
// repository tool (hack/...) or a test helper (a package of nuv's module that imports package
// testing: awstest, awsworld, localtest, clustertest, servertest, testservers, golden, ...), and
// only the emulators' program links the emulators (internal/emulator/...): the programs users
// run every day do not pay for them.
func TestShippedProgramsLinkNoTestCode(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the programs' packages with the go command")
	}
	const module = "github.com/nuv-dev/nuv"
	for _, prog := range Programs {
		t.Run(prog.Name, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, prog.Package)
			cmd.Dir = moduleDir(t)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", prog.Package, err)
			}
			var bad []string
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				f := strings.Fields(line)
				pkg, imports := f[0], f[1:]
				rel, ours := strings.CutPrefix(pkg, module+"/")
				if !ours {
					continue
				}
				switch {
				case strings.HasPrefix(rel, "bench/"), strings.HasPrefix(rel, "hack/"):
					bad = append(bad, pkg+" (a benchmark or repository tool)")
				case strings.HasPrefix(rel, "internal/emulator/") && prog.Name != "nuv-emulator":
					bad = append(bad, pkg+" (an emulator: nuv-emulator's)")
				default:
					for _, imp := range imports {
						if imp == "testing" {
							bad = append(bad, pkg+" (a test helper: it imports testing)")
						}
					}
				}
			}
			if len(bad) > 0 {
				t.Errorf("%s (%s) links %d packages no shipped program may: %q", prog.Name, prog.Package, len(bad), bad)
			}
		})
	}
}
