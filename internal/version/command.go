package version

import (
	"context"
	"fmt"

	"github.com/nuv-dev/nuv/internal/cli"
)

// Command is `nuv -version`: it prints v (String: the version, and the commit when stamped). It lives here rather than with the other tools (package
// tools) so that the slim front, which answers it, links none of them.
func Command(v string) cli.Command {
	return cli.Command{Name: "version", Short: "print nuv's version", Run: func(_ context.Context, env *cli.Env, args []string) error {
		return cli.Prefix("nuv -version", run(env, args, v))
	}}
}

func run(env *cli.Env, args []string, v string) error {
	fs := cli.NewFlagSet("nuv -version")
	usage := cli.Usage{Line: "nuv -version", Long: "Prints nuv's version, and the commit it was built from when the build was stamped with one.", Examples: "nuv -version"}
	if done, err := cli.Parse(env, fs, usage, args); done || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usage.Errorf("nuv -version: %s", fmt.Sprintf("unexpected arguments %q", fs.Args()))
	}
	fmt.Fprintln(env.Out, String(v, Commit))
	return nil
}
