package config

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

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
	Out  io.Writer
}

const toolUsage = `Usage:
  nuv -config KEY=VALUE...   set values in ~/.nuv/config.json (KEY_SUB=1 stores {"key":{"sub":1}})
  nuv -config -d KEY...      delete keys
  nuv -config -r             reset: remove every user setting
  nuv -config [-a]           list the user settings (-a: merged with bundle and plugin defaults)

Values are exported to every task as UPPER_SNAKE variables. Secret-looking values are shown as ***.
`

// Tool implements `nuv -config`. Writes are atomic; malformed input changes nothing.
func Tool(opts ToolOptions, args []string) error {
	fs := pflag.NewFlagSet("-config", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	del := fs.BoolP("delete", "d", false, "delete the given keys")
	reset := fs.BoolP("reset", "r", false, "remove every user setting")
	all := fs.BoolP("all", "a", false, "list the merged configuration")
	help := fs.BoolP("help", "h", false, "show usage")
	if err := fs.Parse(args); err != nil {
		return cli.Usagef("-config: %v", err)
	}
	if *help {
		fmt.Fprint(opts.Out, toolUsage)
		return nil
	}
	words := fs.Args()
	switch {
	case *reset:
		if len(words) > 0 || *del {
			return cli.Usagef("-config -r takes no keys")
		}
		return Save(opts.Path, map[string]any{})
	case *del:
		if len(words) == 0 {
			return cli.Usagef("-config -d needs at least one KEY")
		}
		cfg, err := Load(opts.Path)
		if err != nil {
			return err
		}
		var missing []string
		for _, k := range words {
			found, err := Delete(cfg, k)
			if err != nil {
				return cli.Usagef("%v", err)
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
				return cli.Usagef("-config: %q is not KEY=VALUE", w)
			}
			if err := Set(cfg, k, ParseValue(v)); err != nil {
				return cli.Usagef("%v", err)
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
