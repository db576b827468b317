package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/version"
)

// The companion archives: the Kubernetes programs nuv otherwise builds from its embedded sources
// or downloads from upstream on first use (companion.ReleaseArchives: nuv-kube for local
// clusters, nuv-node with nuv-pause for node images). Build writes them before nuv's own
// archives and compiles their SHA-256 into nuv's programs (version.Companions), so an installed
// nuv trusts exactly the companion archives released with it (companion.Builder.FetchRelease).

// CompanionPlatforms are the platforms archive a is built for in a release for ps: ps, or for a
// linux-only archive linux on each architecture of ps, in the order of ps.
func CompanionPlatforms(a companion.ReleaseArchive, ps []Platform) []Platform {
	if !a.LinuxOnly {
		return ps
	}
	var out []Platform
	seen := map[string]bool{}
	for _, p := range ps {
		if !seen[p.Arch] {
			seen[p.Arch] = true
			out = append(out, Platform{"linux", p.Arch})
		}
	}
	return out
}

// SelectCompanions reads -companions: "all" (every archive of companion.ReleaseArchives), "none",
// or names separated by commas.
func SelectCompanions(list string) ([]companion.ReleaseArchive, error) {
	switch list {
	case "all":
		return companion.ReleaseArchives, nil
	case "none", "":
		return nil, nil
	}
	var out []companion.ReleaseArchive
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		found := false
		for _, a := range companion.ReleaseArchives {
			if a.Name == n {
				out, found = append(out, a), true
			}
		}
		if !found {
			var names []string
			for _, a := range companion.ReleaseArchives {
				names = append(names, a.Name)
			}
			return nil, fmt.Errorf("companion archive %q: want all, none or some of %s", n, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// CompanionLdflags are the linker flags of a companion program in a release: no symbol table or
// DWARF, and the program's own flags (Kubernetes' version stamp), as its cached build has them.
func CompanionLdflags(p companion.Program) string {
	return strings.TrimSpace("-s -w " + p.Ldflags)
}

// CompanionBuildArgs are the go command's arguments that build the companion program p into out.
func CompanionBuildArgs(p companion.Program, out string) []string {
	args := []string{"build", "-trimpath", "-buildvcs=true"}
	if p.Tags != "" {
		args = append(args, "-tags", p.Tags)
	}
	return append(args, "-ldflags="+CompanionLdflags(p), "-o", out, "./"+p.Dirs[0])
}

// isCompanionFile reports whether name is a companion archive or SBOM Build writes.
func isCompanionFile(name string) bool {
	for _, a := range companion.ReleaseArchives {
		if strings.HasPrefix(name, a.Name+"_") && (strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".sbom.json")) {
			return true
		}
	}
	return false
}

// buildCompanions builds every companion archive of c for its platforms into c.Out, with an SBOM
// each, and returns them, the value of version.Companions naming their SHA-256 and, when the
// reference operator is among them, the hash of its sources (version.OperatorSources).
func (c Config) buildCompanions(ctx context.Context, binDir string, mtime time.Time, log cli.Logger) (arts []Artifact, sumsValue, operatorSources string, err error) {
	sums := map[string]string{}
	for _, a := range c.Companions {
		if a.Holds(companion.ProgramOperator.Name) {
			if operatorSources, err = rendercache.OperatorSourceHash(c.Dir, func(string) string { return "" }); err != nil {
				return nil, "", "", fmt.Errorf("release: %w", err)
			}
		}
		for _, p := range CompanionPlatforms(a, c.Platforms) {
			start := time.Now()
			dir := filepath.Join(binDir, a.Name+"_"+p.OS+"_"+p.Arch)
			var bins []Binary
			for _, prog := range a.Programs {
				bin := filepath.Join(dir, prog.Name)
				if err := c.run(ctx, p, CompanionBuildArgs(prog, bin), prog.Dirs[0]); err != nil {
					return nil, "", "", err
				}
				bins = append(bins, Binary{Name: prog.Name, Path: bin})
			}
			art := Artifact{Platform: p, Path: filepath.Join(c.Out, a.FileName(c.Version, p.OS, p.Arch)), Binaries: bins}
			if err := WriteArchive(art.Path, bins, mtime); err != nil {
				return nil, "", "", err
			}
			sum, err := fsutil.SHA256File(art.Path)
			if err != nil {
				return nil, "", "", err
			}
			sbom, err := SBOM(filepath.Base(art.Path), sum, c.Stamp, bins)
			if err != nil {
				return nil, "", "", err
			}
			art.SBOM = strings.TrimSuffix(art.Path, ".tar.gz") + ".sbom.json"
			if err := writeFile(art.SBOM, sbom); err != nil {
				return nil, "", "", err
			}
			sums[version.CompanionKey(a.Name, p.OS, p.Arch)] = sum
			arts = append(arts, art)
			log.Infof("built %s (%s) in %s", filepath.Base(art.Path), humanSize(sizeOf(art.Path)), time.Since(start).Round(100*time.Millisecond))
		}
	}
	sort.Slice(arts, func(i, j int) bool { return arts[i].Path < arts[j].Path })
	return arts, version.FormatCompanions(sums), operatorSources, nil
}

func writeFile(path string, data []byte) error {
	if err := fsutil.WriteFileAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("release: write %s: %w", path, err)
	}
	return nil
}

func sizeOf(path string) int64 {
	if st, err := os.Stat(path); err == nil {
		return st.Size()
	}
	return 0
}
