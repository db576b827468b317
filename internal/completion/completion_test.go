package completion

import (
	"strings"
	"testing"
)

// The help texts are nuv's own (as printed by `nuv CMD --help`), trimmed to what the parsers read.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		name, help string
		flags      string
	}{
		{"group with a command list", "Usage: nuv cluster <command> [args]\n\n  create      create a cluster\n  list        list clusters\n\nProviders: local (etcd, ...\nprocesses on loopback). `nuv cluster <command> -h` for flags.\n", ""},
		{"group with usage lines", "Usage: nuv kube <subcommand> [flags]\n\nSubcommands:\n  list [--offline] [--json]           every cluster\n                                      API server, type\n  use N|NAME [--offline]\n  use --none [--shell]                clear\n  watch [N|NAME] [-n NAMESPACE]       live view\n\nTypes: local, kind\n", ""},
		{"alternatives in the usage line", "Usage: nuv registry up|down|status\n\n  up       start it\n", ""},
		{"pflag listing", "Usage: nuv cluster logs NAME [COMPONENT] [--tail N]\n\nFlags:\n  -n, --tail int   print only the last N lines\n      --follow     keep printing\n", "--follow --tail"},
		{"a command whose help has indented prose is no group", "Usage: nuv all-kubes [flags] -- <target> [args]\n\nHow <target> is resolved:\n  a nuv built-in command (dtest, ...)   nuv <target>\n  anything else                        nuv -task <target>\n\nFlags:\n      --only strings   run only on these clusters\n  -p, --parallel int   at most N runs at once\n", "--only --parallel"},
		{"no help", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(Flags(tc.help), " "); got != tc.flags {
				t.Errorf("Flags = %q, want %q", got, tc.flags)
			}
		})
	}
}

func TestScriptUnknownShell(t *testing.T) {
	for _, sh := range Shells {
		if s, err := Script(sh); err != nil || !strings.Contains(s, "nuv completion __complete") {
			t.Errorf("Script(%s): %v", sh, err)
		}
	}
	if _, err := Script("ksh"); err == nil || !strings.Contains(err.Error(), "bash, fish, zsh") {
		t.Errorf("Script(ksh) = %v, want an error naming the shells", err)
	}
}
