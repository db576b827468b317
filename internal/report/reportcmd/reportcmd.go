// Package reportcmd is `nuv report`: for now one verb, merge, which turns the report directories
// of many `nuv all-kubes` runs (separate CI jobs, separate machines) into one report.
package reportcmd

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/report"
)

const mergeLong = `Merges the report directories (_reports/<timestamp>/) of many nuv all-kubes runs into one
report.json, junit.xml and index.html, with each run's logs and failure artifacts under runs/.
A DIR may also hold report directories at any depth (CI artifacts downloaded into one folder).
A cell is a cluster and a target; when several runs have it, the run that ended last is kept and
the others are named as superseded. Each cell keeps its provenance (machine, nuv version, commit,
start and end, retries). A malformed or partial directory is named and skipped; a report from a
nuv with a newer report schema is refused, naming both versions.`

// NewCommand is `nuv report`; version is nuv's own version (recorded in merged reports).
func NewCommand(version string) cli.Command {
	return cli.GroupCommand("report", group(version, time.Now))
}

func group(version string, now func() time.Time) *cli.Group {
	return &cli.Group{
		Name:     "nuv report",
		Short:    "merge the all-kubes reports of many runs into one (report merge DIR... --out DIR)",
		Long:     "Reports are what `nuv all-kubes` writes under <project>/_reports/<timestamp>/.",
		Examples: "nuv report merge --out merged ci-artifacts/",
		Verbs: []cli.Verb{{Name: "merge", Short: "merge the report directories of many all-kubes runs into one",
			Run: func(_ context.Context, env *cli.Env, args []string) error { return merge(env, args, version, now) }}},
	}
}

func run(env *cli.Env, args []string, version string, now func() time.Time) error {
	return group(version, now).Run(context.Background(), env, args)
}

var mergeUsage = cli.Usage{Line: "nuv report merge [--out DIR] DIR...", Short: "merge the report directories of many all-kubes runs into one",
	Long: mergeLong, Examples: "nuv report merge --out merged run-1/_reports run-2/_reports"}

func merge(env *cli.Env, args []string, version string, now func() time.Time) error {
	fs := cli.NewFlagSet("report merge")
	out := fs.String("out", "", "directory for the merged report (default <project>/_reports/merged-<timestamp>)")
	if done, err := cli.Parse(env, fs, mergeUsage, args); done || err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return mergeUsage.Errorf("report merge: name at least one report directory")
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(env.Dir, p)
	}
	dest := *out
	if dest == "" {
		dest = filepath.Join(paths.Project(env.Getenv, env.Dir), "_reports", "merged-"+now().UTC().Format("20060102-150405"))
	}
	var dirs []string
	for _, d := range fs.Args() {
		dirs = append(dirs, abs(d))
	}
	rep, err := report.Merge(report.MergeOptions{Dirs: dirs, Out: abs(dest), Nuv: version, Now: now})
	if err != nil {
		return cli.Exit(1, fmt.Errorf("report merge: %w", err))
	}
	for _, s := range rep.Skipped {
		env.Log.Warnf("skipped %s: %s", s.Dir, s.Reason)
	}
	if err := report.WriteTable(env.Out, rep); err != nil {
		return err
	}
	superseded := 0
	for _, r := range rep.Results {
		superseded += len(r.Superseded)
	}
	fmt.Fprintf(env.Out, "merged %d report directories (%d skipped, %d duplicate cells superseded)\nreport: %s\n",
		len(rep.Merged), len(rep.Skipped), superseded, abs(dest))
	return nil
}
