package container

// VPC local routing. Docker keeps its bridge networks apart (its DOCKER-ISOLATION chains) and
// masquerades what leaves a bridge, and nuv's own test daemon (--iptables=false) leaves IPv4
// forwarding off, so machines on two networks cannot talk. A VPC's subnets reach each other
// through its implicit "local" route, without NAT; LinkNetworks gives a set of networks that
// routing. It turns on IPv4 forwarding on each network's bridge only (net.ipv4.conf.<bridge>.forwarding),
// and with the iptables program Docker uses (iptables-legacy when Docker's DOCKER-USER chain is
// there, else iptables) inserts rules commented "nuv-vpc <name>": in DOCKER-USER (Docker evaluates
// it first in FORWARD) or, when Docker manages no iptables, in FORWARD, `-i br-A -o br-B -j ACCEPT`
// for each ordered pair of bridges; when Docker manages no iptables also `-i br-A ! -o br-A -j DROP`
// after them, so forwarding stays within the set (Docker's isolation does that otherwise); and in
// nat POSTROUTING `-s CIDR -d CIDR -j RETURN` before Docker's MASQUERADE rules. LinkNetworks
// reconciles: rules of that name no longer wanted are deleted, missing ones inserted (checked
// with iptables -C first; DROP rules appended, the others inserted first), so calling it again is
// harmless; UnlinkNetworks deletes them all. Callers hold LockLink around the reading of what a
// link should hold and its reconciliation.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/machine/dockerapi"
)

// Rule is one iptables rule: Table, Chain and the match and target arguments after the chain.
type Rule struct {
	Table, Chain string
	Args         []string
	// Last rules are appended to their chain; the others are inserted at position 1. A link's
	// DROP rules are last, so its ACCEPT rules come before them however many times the link is
	// reconciled (a DROP inserted at position 1 alone would cut the link).
	Last bool
}

// linkComment is the iptables comment of the rules of link name.
func linkComment(name string) string { return "nuv-vpc " + name }

// LinkRules are the rules that give bridges (the interfaces of a link's networks) routing between
// each other without NAT within cidr; dockerUser says Docker manages iptables (its DOCKER-USER
// chain exists). The DROP rules are Last (appended); the others are inserted at position 1.
func LinkRules(name, cidr string, bridges []string, dockerUser bool) []Rule {
	c := []string{"-m", "comment", "--comment", linkComment(name)}
	chain := "FORWARD"
	if dockerUser {
		chain = "DOCKER-USER"
	}
	var rules []Rule
	if !dockerUser {
		for _, b := range bridges {
			rules = append(rules, Rule{"filter", chain, append([]string{"-i", b, "!", "-o", b}, append(c, "-j", "DROP")...), true})
		}
	}
	for _, a := range bridges {
		for _, b := range bridges {
			if a != b {
				rules = append(rules, Rule{"filter", chain, append([]string{"-i", a, "-o", b}, append(c, "-j", "ACCEPT")...), false})
			}
		}
	}
	rules = append(rules, Rule{"nat", "POSTROUTING", append([]string{"-s", cidr, "-d", cidr}, append(c, "-j", "RETURN")...), false})
	return rules
}

// iptables is the program and whether Docker manages iptables through it.
type iptables struct {
	path       string
	dockerUser bool
}

func findIPTables(ctx context.Context) (iptables, error) {
	var found []string
	for _, p := range []string{"iptables", "iptables-legacy"} {
		path, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		found = append(found, path)
		if exec.CommandContext(ctx, path, "-w", "-t", "filter", "-S", "DOCKER-USER").Run() == nil {
			return iptables{path: path, dockerUser: true}, nil
		}
	}
	if len(found) == 0 {
		return iptables{}, errors.New("the iptables program is not installed (package iptables): nuv needs it to route between the networks of a VPC's subnets")
	}
	return iptables{path: found[0]}, nil
}

func (t iptables) run(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, t.path, append([]string{"-w"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", filepath.Base(t.path), strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// bridge is the interface name of network name's bridge.
func (m *Manager) bridge(ctx context.Context, name string) (string, error) {
	if m.api != nil {
		n, err := m.inspectNetwork(ctx, name)
		if err != nil {
			return "", err
		}
		return bridgeName(name, n.ID, n.Options["com.docker.network.bridge.name"])
	}
	out, err := m.docker(ctx, nil, "network", "inspect", "--format", `{{.Id}} {{index .Options "com.docker.network.bridge.name"}}`, name)
	if err != nil {
		if noSuch(err) {
			return "", fmt.Errorf("network %s: %w", name, ErrNotFound)
		}
		return "", fmt.Errorf("inspect network %s: %w", name, err)
	}
	id, option := "", ""
	if f := strings.Fields(string(out)); len(f) > 0 {
		id = f[0]
		if len(f) > 1 && f[1] != "<no" { // "<no value>": the option is not set
			option = f[1]
		}
	}
	return bridgeName(name, id, option)
}

// bridgeName is the interface of network name's bridge: its bridge.name option when set, else
// docker's default name from the network's ID.
func bridgeName(name, id, option string) (string, error) {
	if option != "" {
		return option, nil
	}
	if len(id) < 12 {
		return "", fmt.Errorf("inspect network %s: no ID in the daemon's answer", name)
	}
	return "br-" + id[:12], nil
}

// LinkNetworks gives networks (which exist; one missing is skipped) routing between each other
// without NAT within cidr, as link name (a VPC), replacing the rules name had (see the package
// doc). It needs root and the iptables program.
func (m *Manager) LinkNetworks(ctx context.Context, name, cidr string, networks []string) error {
	p, err := netip.ParsePrefix(cidr)
	if err != nil || !p.Addr().Is4() || p.Masked() != p {
		return fmt.Errorf("link %s: %q is not an IPv4 CIDR of a network", name, cidr)
	}
	t, err := findIPTables(ctx)
	if err != nil {
		return fmt.Errorf("link the networks of %s: %w", name, err)
	}
	var bridges []string
	for _, n := range networks {
		b, err := m.bridge(ctx, n)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("link %s: %w", name, err)
		}
		bridges = append(bridges, b)
	}
	for _, b := range bridges {
		f := filepath.Join("/proc/sys/net/ipv4/conf", b, "forwarding")
		if err := os.WriteFile(f, []byte("1"), 0o644); err != nil {
			return fmt.Errorf("link %s: turn on IPv4 forwarding on bridge %s: %w", name, b, err)
		}
	}
	want := LinkRules(name, p.String(), bridges, t.dockerUser)
	if err := t.prune(ctx, name, want); err != nil {
		return err
	}
	for _, r := range want {
		if _, err := t.run(ctx, append([]string{"-t", r.Table, "-C", r.Chain}, r.Args...)...); err == nil {
			continue
		}
		where := []string{"-I", r.Chain, "1"}
		if r.Last {
			where = []string{"-A", r.Chain}
		}
		if _, err := t.run(ctx, append(append([]string{"-t", r.Table}, where...), r.Args...)...); err != nil {
			return fmt.Errorf("link %s: %w", name, err)
		}
	}
	return nil
}

// LockLink takes the host-wide lock of link name: whoever reads what a link should hold (the
// networks of a VPC) and reconciles it holds the lock from the reading to the end of
// LinkNetworks or UnlinkNetworks, so two reconciliations at once cannot undo each other (one that
// read fewer networks pruning the rules the other just inserted). The lock is a file under
// /run/lock (the temporary directory where that is not writable) and goes with the process.
func LockLink(ctx context.Context, name string) (func(), error) {
	dir := "/run/lock"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = os.TempDir()
	}
	file := "nuv-vpc-" + strings.NewReplacer("/", "_", " ", "_").Replace(name) + ".lock"
	unlock, err := fsutil.Lock(ctx, filepath.Join(dir, file), nil)
	if err != nil {
		return nil, fmt.Errorf("lock link %s: %w", name, err)
	}
	return unlock, nil
}

// UnlinkNetworks deletes the rules of link name (the bridges' forwarding goes with them).
func (m *Manager) UnlinkNetworks(ctx context.Context, name string) error {
	t, err := findIPTables(ctx)
	if err != nil {
		return fmt.Errorf("unlink the networks of %s: %w", name, err)
	}
	return t.prune(ctx, name, nil)
}

// prune deletes the rules commented for name that are not in keep.
func (t iptables) prune(ctx context.Context, name string, keep []Rule) error {
	kept := map[string]bool{}
	for _, r := range keep {
		kept[r.Table+" "+r.Chain+" "+strings.Join(r.Args, "\x00")] = true
	}
	chains := map[string][]string{"filter": {"FORWARD"}, "nat": {"POSTROUTING"}}
	if t.dockerUser {
		chains["filter"] = append(chains["filter"], "DOCKER-USER")
	}
	for _, table := range []string{"filter", "nat"} {
		for _, chain := range chains[table] {
			out, err := t.run(ctx, "-t", table, "-S", chain)
			if err != nil {
				return fmt.Errorf("unlink %s: %w", name, err)
			}
			for _, line := range strings.Split(out, "\n") {
				args := splitRule(line)
				if len(args) < 3 || args[0] != "-A" || args[1] != chain || !hasComment(args, linkComment(name)) {
					continue
				}
				if kept[table+" "+chain+" "+strings.Join(args[2:], "\x00")] {
					continue
				}
				if _, err := t.run(ctx, append([]string{"-t", table, "-D"}, args[1:]...)...); err != nil {
					return fmt.Errorf("unlink %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

func hasComment(args []string, c string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--comment" && args[i+1] == c {
			return true
		}
	}
	return false
}

// splitRule splits a line of iptables -S into its arguments (double quotes group words).
func splitRule(line string) []string {
	var args []string
	var cur strings.Builder
	in, have := false, false
	for _, r := range line {
		switch {
		case r == '"':
			in, have = !in, true
		case r == ' ' && !in:
			if have {
				args = append(args, cur.String())
			}
			cur.Reset()
			have = false
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		args = append(args, cur.String())
	}
	return args
}

// NetworkInfo is a network this package made.
type NetworkInfo struct {
	Name   string
	Labels map[string]string
}

// Networks lists the networks this package made that carry labels.
func (m *Manager) Networks(ctx context.Context, labels map[string]string) ([]NetworkInfo, error) {
	if m.api != nil {
		filters := []string{NetworkLabel}
		for k, v := range labels {
			filters = append(filters, k+"="+v)
		}
		ns, err := m.api.Networks(ctx, dockerapi.Filters{"label": filters})
		if err != nil {
			return nil, fmt.Errorf("list networks: %w", err)
		}
		nets := make([]NetworkInfo, 0, len(ns))
		for _, n := range ns {
			nets = append(nets, NetworkInfo{Name: n.Name, Labels: n.Labels})
		}
		sort.Slice(nets, func(i, j int) bool { return nets[i].Name < nets[j].Name })
		return nets, nil
	}
	args := []string{"network", "ls", "--filter", "label=" + NetworkLabel, "--format", "{{.Name}}"}
	for k, v := range labels {
		args = append(args, "--filter", "label="+k+"="+v)
	}
	out, err := m.docker(ctx, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("list networks: %w", err)
	}
	var nets []NetworkInfo
	for _, n := range strings.Fields(string(out)) {
		js, err := m.docker(ctx, nil, "network", "inspect", "--format", "{{json .Labels}}", n)
		if err != nil {
			if noSuch(err) {
				continue
			}
			return nil, fmt.Errorf("inspect network %s: %w", n, err)
		}
		ni := NetworkInfo{Name: n}
		if err := json.Unmarshal(js, &ni.Labels); err != nil {
			return nil, fmt.Errorf("inspect network %s: labels: %w", n, err)
		}
		nets = append(nets, ni)
	}
	sort.Slice(nets, func(i, j int) bool { return nets[i].Name < nets[j].Name })
	return nets, nil
}
