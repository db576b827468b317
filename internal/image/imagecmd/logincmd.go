package imagecmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/login"
)

const loginUsage = `Usage: nuv image login [--registry HOST] [--no-verify]      (docker-login)

Stores registry credentials in the standard docker config.json ($DOCKER_CONFIG, else
~/.docker; mode 0600), after checking them against the registry. The secret is never printed
and never passed on a command line. Credentials come from the environment or .env:
  GITHUB_USER, GITHUB_TOKEN                 for ghcr.io
  REGISTRY, REGISTRY_USER, REGISTRY_PASSWORD for any other registry
`

func runLogin(ctx context.Context, env *cli.Env, args []string) error {
	fs := pflag.NewFlagSet("nuv image login", pflag.ContinueOnError)
	reg := fs.String("registry", "", "registry host (default: REGISTRY, else ghcr.io)")
	noVerify := fs.Bool("no-verify", false, "store without checking the credentials against the registry")
	if err := parse(env, fs, loginUsage, args); err != nil {
		return helpOK(err)
	}
	c, err := login.FromEnv(env.Getenv, *reg)
	if err != nil {
		var me *login.MissingError
		if errors.As(err, &me) {
			return cli.Exit(cli.ExitUsage, err)
		}
		return err
	}
	if !*noVerify {
		if err := login.Verify(ctx, c, nil); err != nil {
			return err
		}
	}
	dir, err := login.ConfigDir(env.Getenv)
	if err != nil {
		return err
	}
	path, err := login.Store(dir, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "logged in to %s as %s (credentials from %s stored in %s)\n", c.Registry, c.Username, c.From, path)
	return nil
}
