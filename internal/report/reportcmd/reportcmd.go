// Package reportcmd is `nuv report`: for now one verb, merge, which turns the report directories
// of many `nuv all-kubes` runs (separate CI jobs, separate machines) into one report.
package reportcmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/report"
)

const usage = `Usage: nuv report merge [--out DIR] DIR...

Merges the report directories (_reports/<timestamp>/) of many nuv all-kubes runs into one
report.json, junit.xml and index.html, with each run's logs and failure artifacts under runs/.
A DIR may also hold report directories at any depth (CI artifacts downloaded into one folder).
A cell is a cluster and a target; when several runs have it, the run that ended last is kept and
the others are named as superseded. Each cell keeps its provenance (machine, nuv version, commit,
start and end, retries). A malformed or partial directory is named and skipped; a report from a
nuv with a newer report schema is refused, naming both versions.

Flags:
`

// Command is `nuv report`; version is nuv's own version (recorded in merged reports).
func NewCommand(version string) cli.Command {
	return cli.Command{
		Name:  "report",
		Short: "merge the all-kubes reports of many runs into one (report merge DIR... --out DIR)",
		Run: func(ctx context.Context, env *cli.Env, args []string) error {
			return run(env, args, version, time.Now)
		},
	}
}

func run(env *cli.Env, args []string, version string, now func() time.Time) error {
	if len(args) == 0 || args[0] != "merge" {
		fmt.Fprint(env.Err, usage)
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			return nil
		}
		return cli.Usagef("report: unknown verb %q (known: merge)", args[0])
	}
	fs := pflag.NewFlagSet("report merge", pflag.ContinueOnError)
	fs.SetOutput(env.Err)
	out := fs.String("out", "", "directory for the merged report (default <project>/_reports/merged-<timestamp>)")
	fs.Usage = func() {
		fmt.Fprint(env.Err, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return cli.Usagef("report merge: %v", err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return cli.Usagef("report merge: name at least one report directory")
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
