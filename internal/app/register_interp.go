package app

import "github.com/nuv-dev/nuv/internal/cli"

// interpTools are the interpreter's built-in tools: "task" (go-task), "sh", "version" and the
// small utilities tasks call (-base64, -retry, ...).
func interpTools() []cli.Command { return nil }
