package imagecmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/tag"
	"github.com/nuv-dev/nuv/internal/paths"
)

const tagUsage = `Usage: nuv image tag [--base BASETAG] [--prefix P] [--minute] [--force] [--show]

Creates the annotated git tag <P><BASETAG>.<YYMMDDhh> (UTC) on HEAD and prints it. Run again in
the same hour it reuses that tag (--force moves it to HEAD). No other tag is touched.
--show prints the newest existing image tag instead.

Environment: BASETAG (default 0.1.0-dev), P (prefix), NUV_PROJECT.
`

// DefaultBaseTag is used when BASETAG is not set.
const DefaultBaseTag = "0.1.0-dev"

func tagOptions(env *cli.Env, fs *pflag.FlagSet) *tag.Options {
	o := &tag.Options{}
	base := env.Getenv("BASETAG")
	if base == "" {
		base = DefaultBaseTag
	}
	fs.StringVar(&o.BaseTag, "base", base, "base of the tag (BASETAG)")
	fs.StringVar(&o.Prefix, "prefix", env.Getenv("P"), "prefix before the base (P)")
	fs.BoolVar(&o.Minute, "minute", false, "add minutes: <BASETAG>.<YYMMDDhhmm>")
	return o
}

func runTag(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("nuv image tag", pflag.ContinueOnError)
	o := tagOptions(env, fs)
	force := fs.Bool("force", false, "move this hour's tag to HEAD when it exists")
	show := fs.Bool("show", false, "print the newest image tag and exit")
	if err := parse(env, fs, tagUsage, args); err != nil {
		return helpOK(err)
	}
	dir := paths.Project(env.Getenv, env.Dir)
	if *show {
		cur, err := tag.Current(ctx, dir, *o)
		if err != nil {
			return err
		}
		if cur == "" {
			return cli.Exit(cli.ExitFailure, fmt.Errorf("no image tag %s%s.* yet: run `nuv image tag`", o.Prefix, o.BaseTag))
		}
		fmt.Fprintln(env.Out, cur)
		return nil
	}
	res, err := tag.Ensure(ctx, dir, *o, time.Now(), *force)
	if err != nil {
		return err
	}
	switch {
	case res.Moved:
		env.Log.Infof("moved tag %s to %s", res.Tag, short(res.Commit))
	case res.Reused:
		env.Log.V(1).Infof("reusing tag %s (%s)", res.Tag, short(res.Commit))
	default:
		env.Log.V(1).Infof("created tag %s on %s", res.Tag, short(res.Commit))
	}
	fmt.Fprintln(env.Out, res.Tag)
	return nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
