package clustercmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// runState is `nuv cluster state list|show|unlock|rm`.
func runState(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "state")
	force := fs.Bool("force", false, "unlock: release the lock even if its holder may be alive (on another machine)")
	stateLoc := stateFlag(fs, c)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return cli.Usagef("nuv cluster state: give list, show NAME, unlock NAME or rm NAME")
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster state")
	if err != nil {
		return err
	}
	if err := e.Store.Check(ctx); err != nil {
		return err
	}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	if verb == "list" {
		if len(rest) > 0 {
			return cli.Usagef("nuv cluster state list: unexpected arguments %q", rest)
		}
		recs, errs := e.Store.List(ctx)
		tw := tabwriter.NewWriter(c.env.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPROVIDER\tPHASE\tRESOURCES\tLOCKED BY\tUPDATED")
		for _, r := range recs {
			holder := "-"
			if h, _ := e.Store.Holder(ctx, r.Name); h != nil {
				holder = fmt.Sprintf("pid %d on %s", h.PID, h.Host)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.Name, r.Provider, r.Phase, len(r.Resources), holder, r.Updated.Local().Format("2006-01-02 15:04:05"))
		}
		tw.Flush()
		fmt.Fprintf(c.env.Out, "(store: %s)\n", e.Store.Where())
		return errors.Join(errs...)
	}
	if len(rest) != 1 {
		return cli.Usagef("nuv cluster state %s: name one cluster", verb)
	}
	name := rest[0]
	switch verb {
	case "show":
		r, err := e.Store.Load(ctx, name)
		if err != nil {
			return err
		}
		h, err := e.Store.Holder(ctx, name)
		if err != nil {
			return err
		}
		out := struct {
			*state.Record
			Lock *state.Holder `json:"lock,omitempty"`
		}{r, h}
		enc := json.NewEncoder(c.env.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "unlock":
		h, err := e.Store.Holder(ctx, name)
		if err != nil {
			return err
		}
		if h == nil {
			fmt.Fprintf(c.env.Out, "cluster %s is not locked\n", name)
			return nil
		}
		if !h.Gone() && !*force {
			return fmt.Errorf("cluster %s is locked by %s, which may still be running (on another machine, or alive here); --force releases it anyway", name, h)
		}
		if err := e.Store.Break(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(c.env.Out, "released the lock of cluster %s held by %s\n", name, h)
		return nil
	case "rm":
		if h, _ := e.Store.Holder(ctx, name); h != nil && !h.Gone() {
			return fmt.Errorf("cluster %s is locked by %s: not removing its record", name, h)
		}
		if err := e.Store.Remove(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(c.env.Out, "removed the state record of cluster %s (what it described, if anything, is left as it is)\n", name)
		return nil
	}
	return cli.Usagef("nuv cluster state: unknown command %q (valid: list, show, unlock, rm)", verb)
}
