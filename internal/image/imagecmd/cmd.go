// Package imagecmd is the `nuv image` command tree: tag, build, push, load and login (the
// ancestor's image-tag, build-and-push/buildx-and-push, build-and-load and docker-login verbs,
// which tasks/image.yml maps to these).
package imagecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/paths"
)

const usage = `Usage: nuv image <command> [flags]

Release engineering without a Docker daemon.

Commands:
  tag       create (or reuse) the release tag <P><BASETAG>.<YYMMDDhh> as an annotated git tag
  build     build the multi-arch operator image into an OCI layout or archive
  push      build and push the multi-arch image to MY_OPERATOR_IMAGE (build-and-push)
  load      build and deliver the image to the selected cluster (build-and-load)
  login     store registry credentials from the environment in ~/.docker/config.json (docker-login)
  workload  build the reference workload's images from Debian packages (--load: into a kind cluster)

Run 'nuv image <command> -h' for its flags.
`

// NewCommand returns `nuv image`.
func NewCommand() cli.Command {
	return cli.Command{Name: "image", Short: "tag, build, push and load the operator image (no Docker daemon)", Run: Run}
}

// Run dispatches `nuv image <sub> ...`. Variables the process environment lacks are read from the
// project's .env (credentials, MY_OPERATOR_IMAGE, BASETAG, ...), as tasks see them.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	env, err := withDotenv(env)
	if err != nil {
		return err
	}
	build := func(m mode) func(context.Context, *cli.Env, []string) error {
		return func(ctx context.Context, env *cli.Env, args []string) error { return runBuild(ctx, env, args, m) }
	}
	return cli.Group{Name: "nuv image", Usage: usage, Subs: map[string]func(context.Context, *cli.Env, []string) error{
		"tag": runTag, "build": build(modeBuild), "push": build(modePush), "load": build(modeLoad), "login": runLogin,
		"workload": runWorkload,
	}}.Run(ctx, env, args)
}

// parse parses flags; -h prints usage and returns errHelp.
func parse(env *cli.Env, fs *pflag.FlagSet, cmdUsage string, args []string) error {
	fs.SetOutput(env.Err)
	fs.Usage = func() {
		fmt.Fprint(env.Err, cmdUsage)
		fmt.Fprint(env.Err, "\nFlags:\n"+fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return cli.Usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

var errHelp = errors.New("help")

// withDotenv returns env whose Getenv falls back to the project's .env.
func withDotenv(env *cli.Env) (*cli.Env, error) {
	getenv := env.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	kvs, err := dotenv.Dir(paths.Project(getenv, env.Dir))
	if err != nil {
		return nil, err
	}
	defaults := map[string]string{}
	for _, kv := range kvs {
		if k, v, ok := strings.Cut(kv, "="); ok {
			defaults[k] = v
		}
	}
	e := *env
	e.Getenv = func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return defaults[k]
	}
	return &e, nil
}

func helpOK(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
