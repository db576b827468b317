package config

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/cli"
)

// ToolOptions is what `nuv -config` needs besides its arguments.
type ToolOptions struct {
	// Path is the user configuration file (~/.nuv/config.json).
	Path string
	// Merged returns the effective configuration (defaults, plugins, user) for listing.
	Merged func() (map[string]any, error)
	// Mask hides secret values when listing: it receives the variable name and its value.
	Mask func(name, value string) string
	// Out receives the listing and the help; Err the warnings (may be nil).
	Out io.Writer
	Err io.Writer
}

// toolUsage is the help of `nuv -config`, in nuv's one layout (cli.Usage).
var toolUsage = cli.Usage{
	Line: "nuv -config [KEY=VALUE... | -d KEY... | -r | -a]",
	Long: `Sets, deletes, resets or lists the user settings in ~/.nuv/config.json:
  KEY=VALUE...   set values (KEY_SUB=1 stores {"key":{"sub":1}})
  -d KEY...      delete keys
  -r             reset: remove every user setting
  (nothing)      list the user settings; -a: merged with bundle and plugin defaults

Values are exported to every task as UPPER_SNAKE variables. Secret-looking values are shown as ***.
Writes are atomic: malformed input changes nothing.`,
	Examples: `nuv -config REGISTRY_HOST=localhost:5000 OPERATOR_REPLICAS=2
nuv -config -d OPERATOR_REPLICAS
nuv -config -a`,
}

// Tool implements `nuv -config` on nuv's one command plumbing (cli.Parse: -h prints the help on
// opts.Out; a bad flag or argument is a usage error, exit 2); every error reads "nuv -config: ...".
// Writes are atomic; malformed input changes nothing.
func Tool(opts ToolOptions, args []string) error {
	return cli.Prefix("nuv -config", tool(opts, args))
}

func tool(opts ToolOptions, args []string) error {
	fs := cli.NewFlagSet("nuv -config")
	del := fs.BoolP("delete", "d", false, "delete the given keys")
	reset := fs.BoolP("reset", "r", false, "remove every user setting")
	all := fs.BoolP("all", "a", false, "list the merged configuration")
	u := toolUsage
	env := &cli.Env{Streams: cli.Streams{Out: opts.Out, Err: opts.Err}}
	if done, err := cli.Parse(env, fs, u, args); done || err != nil {
		return err
	}
	words := fs.Args()
	switch {
	case *reset:
		if len(words) > 0 || *del {
			return u.Errorf("-r takes no keys")
		}
		return Save(opts.Path, map[string]any{})
	case *del:
		if len(words) == 0 {
			return u.Errorf("-d needs at least one KEY")
		}
		cfg, err := Load(opts.Path)
		if err != nil {
			return err
		}
		var missing []string
		for _, k := range words {
			found, err := Delete(cfg, k)
			if err != nil {
				return u.Errorf("%v", err)
			}
			if !found {
				missing = append(missing, strings.ToUpper(k))
			}
		}
		if len(missing) == len(words) {
			return fmt.Errorf("no such config key: %s", strings.Join(missing, ", "))
		}
		if err := Save(opts.Path, cfg); err != nil {
			return err
		}
		if len(missing) > 0 {
			return fmt.Errorf("deleted the others; no such config key: %s", strings.Join(missing, ", "))
		}
		return nil
	case len(words) > 0:
		cfg, err := Load(opts.Path)
		if err != nil {
			return err
		}
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				return u.Errorf("%q is not KEY=VALUE", w)
			}
			if err := Set(cfg, k, ParseValue(v)); err != nil {
				return u.Errorf("%v", err)
			}
		}
		return Save(opts.Path, cfg)
	}
	var cfg map[string]any
	var err error
	if *all && opts.Merged != nil {
		cfg, err = opts.Merged()
	} else {
		cfg, err = Load(opts.Path)
	}
	if err != nil {
		return err
	}
	flat := Flatten(cfg)
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := flat[k]
		if opts.Mask != nil {
			v = opts.Mask(k, v)
		}
		fmt.Fprintf(opts.Out, "%s=%s\n", k, v)
	}
	return nil
}
