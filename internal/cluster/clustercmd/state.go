package clustercmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// runState is `nuv cluster state list|show|unlock|rm|migrate`.
func runState(ctx context.Context, c *cmdCtx, args []string) error {
	fs := flags(c.env, "state")
	force := fs.Bool("force", false, "unlock: release the lock even if its holder may be alive (on another machine)")
	stateLoc := stateFlag(fs, c)
	to := fs.String("to", "", "migrate: the store to move every record (and the apply history) to, in --state's forms")
	var output cli.OutputOption
	output.AddFlags(fs.FlagSet)
	if err := parse(fs, args); err != nil {
		return err
	}
	_ = output.Validate(fs.usage)
	if fs.NArg() == 0 {
		return cli.Usagef("nuv cluster state: give list, show NAME, unlock NAME, rm NAME or migrate --to LOCATION")
	}
	e, err := c.engineFor(*stateLoc, "nuv cluster state")
	if err != nil {
		return err
	}
	if err := e.Store.Check(ctx); err != nil {
		return err
	}
	verb, rest := fs.Arg(0), fs.Args()[1:]
	if verb == "migrate" {
		if len(rest) > 0 || *to == "" {
			return cli.Usagef("nuv cluster state migrate: give --to LOCATION and nothing else")
		}
		return migrate(ctx, c, e, *to)
	}
	if verb == "list" {
		if len(rest) > 0 {
			return cli.Usagef("nuv cluster state list: unexpected arguments %q", rest)
		}
		recs, errs := e.Store.List(ctx)
		entries := make([]stateEntry, 0, len(recs))
		for _, r := range recs {
			h, _ := e.Store.Holder(ctx, r.Name)
			entries = append(entries, entryOf(r, h))
		}
		if err := writeStateList(c.env.Out, &output, e.Store.Where(), entries); err != nil {
			return err
		}
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
		if !fs.Changed("output") && !fs.Changed("json") {
			output.Format = cli.FormatJSON // show printed JSON before -o existed; it still does by default
		}
		return writeStateShow(c.env.Out, &output, r, h)
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
	hint := ""
	if s := cli.Suggest(verb, []string{"list", "show", "unlock", "rm", "migrate"}); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	return cli.Usagef("nuv cluster state: unknown command %q (valid: list, show, unlock, rm, migrate)%s", verb, hint)
}

// stateEntry is one record of `nuv cluster state list` in its machine form (-o json|yaml).
type stateEntry struct {
	Name      string        `json:"name"`
	Provider  string        `json:"provider"`
	Phase     string        `json:"phase"`
	Resources int           `json:"resources"`
	Error     string        `json:"error,omitempty"`
	Lock      *state.Holder `json:"lock,omitempty"`
	Created   time.Time     `json:"created"`
	CreatedBy string        `json:"createdBy,omitempty"`
	Updated   time.Time     `json:"updated"`
}

func entryOf(r *state.Record, h *state.Holder) stateEntry {
	return stateEntry{Name: r.Name, Provider: r.Provider, Phase: string(r.Phase), Resources: len(r.Resources), Error: r.Error,
		Lock: h, Created: r.Created, CreatedBy: r.CreatedBy, Updated: r.Updated}
}

// stateList is `nuv cluster state list -o json|yaml`: the store and its records.
type stateList struct {
	Store   string       `json:"store"`
	Records []stateEntry `json:"records"`
}

// writeStateList prints the records as a table (wide: with the lock's command and the last error)
// followed by the store, or in their machine form.
func writeStateList(w io.Writer, o *cli.OutputOption, store string, entries []stateEntry) error {
	if done, err := o.Write(w, stateList{Store: store, Records: entries}); done {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := "NAME\tPROVIDER\tPHASE\tRESOURCES\tLOCKED BY\tUPDATED"
	if o.Wide() {
		header += "\tCOMMAND\tERROR"
	}
	fmt.Fprintln(tw, header)
	for _, r := range entries {
		holder, command := "-", "-"
		if r.Lock != nil {
			holder, command = fmt.Sprintf("pid %d on %s", r.Lock.PID, r.Lock.Host), orDash(r.Lock.Command)
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s", r.Name, r.Provider, r.Phase, r.Resources, holder, r.Updated.Local().Format("2006-01-02 15:04:05"))
		if o.Wide() {
			line += "\t" + command + "\t" + orDash(oneLine(r.Error))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintf(w, "(store: %s)\n", store)
	return nil
}

// stateShow is `nuv cluster state show NAME` in its machine form: the record and its lock.
type stateShow struct {
	*state.Record
	Lock *state.Holder `json:"lock,omitempty"`
}

// writeStateShow prints one record: JSON or YAML (the record as stored, with its lock), or a
// summary and its resources as a table (wide: with each resource's ID and fields).
func writeStateShow(w io.Writer, o *cli.OutputOption, r *state.Record, h *state.Holder) error {
	if done, err := o.Write(w, stateShow{r, h}); done {
		return err
	}
	fmt.Fprintf(w, "name:        %s\nprovider:    %s\nphase:       %s\ngeneration:  %d\n", r.Name, r.Provider, r.Phase, r.Generation)
	fmt.Fprintf(w, "created:     %s\nupdated:     %s\n", r.Created.Local().Format("2006-01-02 15:04:05"), r.Updated.Local().Format("2006-01-02 15:04:05"))
	if h != nil {
		fmt.Fprintf(w, "locked by:   pid %d on %s (%s) since %s\n", h.PID, h.Host, h.Command, h.Since.Local().Format("2006-01-02 15:04:05"))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "error:       %s\n", oneLine(r.Error))
	}
	if len(r.Resources) == 0 {
		fmt.Fprintln(w, "resources:   none")
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if o.Wide() {
		fmt.Fprintln(tw, "KIND\tNAME\tID\tFIELDS")
	} else {
		fmt.Fprintln(tw, "KIND\tNAME\tID")
	}
	for _, res := range r.Resources {
		if !o.Wide() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", res.Kind, res.Name, orDash(res.ID))
			continue
		}
		keys := make([]string, 0, len(res.Fields))
		for k := range res.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fields := make([]string, len(keys))
		for i, k := range keys {
			fields[i] = k + "=" + res.Fields[k]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", res.Kind, res.Name, orDash(res.ID), orDash(strings.Join(fields, ",")))
	}
	return tw.Flush()
}

// oneLine joins a multi-line message into one table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
