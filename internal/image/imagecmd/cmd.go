// Package imagecmd is the `nuv image` command tree: tag, build, push, load and login (the
// ancestor's image-tag, build-and-push/buildx-and-push, build-and-load and docker-login verbs,
// which tasks/image.yml maps to these).
package imagecmd

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/dotenv"
	"github.com/nuv-dev/nuv/internal/paths"
)

// verbs are the verbs of `nuv image`, in help order.
var verbs = []struct{ name, short string }{
	{"tag", "create (or reuse) the release tag <P><BASETAG>.<YYMMDDhh> as an annotated git tag"},
	{"build", "build the multi-arch operator image into an OCI layout or archive"},
	{"push", "build and push the multi-arch image to MY_OPERATOR_IMAGE (build-and-push)"},
	{"load", "build and deliver the image to the selected cluster (build-and-load)"},
	{"login", "store registry credentials from the environment in ~/.docker/config.json (docker-login)"},
	{"workload", "build the reference workload's images from Debian packages (--load: into a kind cluster)"},
}

// NewCommand returns `nuv image`.
func NewCommand() cli.Command {
	g := &cli.Group{Name: "nuv image", Short: "tag, build, push and load the operator image (no Docker daemon)",
		Long: `Release engineering without a Docker daemon. Variables the process environment lacks are read
from the project's .env (credentials, MY_OPERATOR_IMAGE, BASETAG, ...), as tasks see them.`,
		Examples: "nuv image tag\nnuv image load\nnuv image push --platform linux/amd64,linux/arm64"}
	build := func(m mode) func(context.Context, *cli.Env, []string) error {
		return func(ctx context.Context, env *cli.Env, args []string) error { return runBuild(ctx, env, args, m) }
	}
	runs := map[string]func(context.Context, *cli.Env, []string) error{
		"tag": runTag, "build": build(modeBuild), "push": build(modePush), "load": build(modeLoad), "login": runLogin,
		"workload": runWorkload,
	}
	for _, v := range verbs {
		run := runs[v.name]
		g.Verbs = append(g.Verbs, cli.Verb{Name: v.name, Short: v.short, Run: func(ctx context.Context, env *cli.Env, args []string) error {
			env, err := withDotenv(env)
			if err != nil {
				return err
			}
			return run(ctx, env, args)
		}})
	}
	return cli.GroupCommand("image", g)
}

// Run dispatches `nuv image <verb> ...`.
func Run(ctx context.Context, env *cli.Env, args []string) error {
	return NewCommand().Run(ctx, env, args)
}

// usageOf turns a verb's help text ("Usage: LINE\n\nLONG") into cli.Usage with the verb's summary.
func usageOf(fs *pflag.FlagSet, text string) cli.Usage {
	line, long, _ := strings.Cut(strings.TrimPrefix(text, "Usage: "), "\n")
	u := cli.Usage{Line: strings.TrimSpace(line), Long: strings.Trim(long, "\n")}
	name := fs.Name()[strings.LastIndex(fs.Name(), " ")+1:]
	for _, v := range verbs {
		if v.name == name {
			u.Short = v.short
		}
	}
	return u
}

// parseArgs parses flags the one way (cli.Parse); -h prints the help and returns errHelp.
func parseArgs(env *cli.Env, fs *pflag.FlagSet, cmdUsage string, args []string) error {
	fs.SetOutput(io.Discard)
	done, err := cli.Parse(env, fs, usageOf(fs, cmdUsage), args)
	if done {
		return errHelp
	}
	return err
}

// parse is parseArgs for a verb that takes no arguments.
func parse(env *cli.Env, fs *pflag.FlagSet, cmdUsage string, args []string) error {
	if err := parseArgs(env, fs, cmdUsage, args); err != nil {
		return err
	}
	return cli.NoArgs(fs, usageOf(fs, cmdUsage))
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
