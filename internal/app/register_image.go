package app

import (
	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/imagecmd"
	"github.com/nuv-dev/nuv/internal/registry/registrycmd"
)

// imageCommands: `nuv image ...` (tag, build, push, load, login) and `nuv registry ...`.
// The ancestor's verbs (image-tag, build-and-push, buildx-and-push, build-and-load, docker-login)
// are tasks in tasks/image.yml that call these.
func imageCommands() []cli.Command {
	return []cli.Command{imagecmd.NewCommand(), registrycmd.NewCommand()}
}

// imageTools: release-engineering tools callable as -name (none yet).
func imageTools() []cli.Command { return nil }
