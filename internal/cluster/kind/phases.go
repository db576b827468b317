package kind

import (
	"fmt"
	"strings"
	"sync"
	"time"

	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/lazy"
)

// Phase is one timed step of a kind cluster's create.
type Phase struct {
	// Name says who did it and what: "nuv: node image", "kind: starting control-plane",
	// "kubeadm: wait-control-plane", "nuv: nodes Ready".
	Name     string
	Duration time.Duration
}

// phaseClock times a create: nuv's own steps, kind's steps (from the status lines kind's library
// logs as it starts and ends each one) and kubeadm init's phases (from the klog timestamps of its
// --v=6 output, which kind logs when init returns).
type phaseClock struct {
	mu      sync.Mutex
	phases  []Phase
	current string
	started time.Time
	kubeadm []Phase
}

// kindStatus matches kind's status lines: " • Preparing nodes 📦  ..." and " ✓ Preparing nodes 📦".
var kindStatus = lazy.MustCompile(`^\s*(•|✓|✗)\s+(.*?)\s*(\.\.\.)?\s*$`)

// add records a step nuv timed itself.
func (c *phaseClock) add(name string, d time.Duration) {
	if c == nil {
		return
	}
	c.record(Phase{Name: "nuv: " + name, Duration: d})
}

// record appends a step.
func (c *phaseClock) record(ph Phase) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phases = append(c.phases, ph)
}

// since records a step that began at t0 and ends now, and returns now.
func (c *phaseClock) since(name string, t0 time.Time) time.Time {
	now := time.Now()
	c.add(name, now.Sub(t0))
	return now
}

// note reads one message of kind's logger.
func (c *phaseClock) note(msg string) {
	if c == nil {
		return
	}
	if strings.Contains(msg, "[init] Using Kubernetes version") {
		ks := kubeadmPhases(msg)
		c.mu.Lock()
		c.kubeadm = ks
		c.mu.Unlock()
		return
	}
	m := kindStatus.FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return
	}
	name := strings.ToLower(strings.TrimSpace(strings.TrimFunc(m[2], func(r rune) bool { return r > 0x2000 || r == ' ' })))
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	switch m[1] {
	case "•":
		c.endLocked(now)
		c.current, c.started = name, now
	default:
		if name == c.current {
			c.endLocked(now)
		}
	}
}

func (c *phaseClock) endLocked(now time.Time) {
	if c.current == "" {
		return
	}
	c.phases = append(c.phases, Phase{Name: "kind: " + c.current, Duration: now.Sub(c.started)})
	if c.current == "starting control-plane" {
		for _, k := range c.kubeadm {
			c.phases = append(c.phases, Phase{Name: "  kubeadm: " + k.Name, Duration: k.Duration})
		}
		c.kubeadm = nil
	}
	c.current = ""
}

// Phases returns the steps timed so far, in order.
func (c *phaseClock) Phases() []Phase {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Phase(nil), c.phases...)
}

// klogTime matches the header of a klog line: "I1130 19:25:01.123456".
var klogTime = lazy.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s`)

// kubeadmPhase matches a line kubeadm prints as it works through its phases: "[certs] ...".
var kubeadmPhase = lazy.MustCompile(`^\[([a-z][a-z-]*)\] `)

// apiServerWait names the part of kubeadm init spent waiting for the control plane to come up.
const apiServerWait = "waiting for the API server (the kubelet starting the static pods)"

// kubeadmPhases times kubeadm init's phases from its output: a phase runs from the time of the
// klog line before its first "[phase]" line to that of the next phase's (kubeadm's own lines carry
// no time; its --v=6 klog lines come between them). Consecutive lines of one phase are merged.
func kubeadmPhases(out string) []Phase {
	var names []string
	var at []time.Time
	var last time.Time
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		if m := klogTime.FindStringSubmatch(l); m != nil {
			if t, err := time.Parse("0102 15:04:05.000000", m[1]); err == nil {
				last = t
			}
			// kubeadm's first request to the API server, which it repeats until the kubelet has
			// started the static pods and the API server answers
			if strings.Contains(l, "kubeadm:cluster-admins Group exists") && !last.IsZero() {
				names = append(names, apiServerWait)
				at = append(at, last)
			}
			continue
		}
		m := kubeadmPhase.FindStringSubmatch(l)
		if m == nil || last.IsZero() {
			continue
		}
		if len(names) > 0 && names[len(names)-1] == m[1] {
			continue
		}
		names = append(names, m[1])
		at = append(at, last)
	}
	if !last.IsZero() && len(names) > 0 {
		names = append(names, "")
		at = append(at, last)
	}
	var out2 []Phase
	for i := 0; i+1 < len(names); i++ {
		d := at[i+1].Sub(at[i])
		if n := len(out2); n > 0 && out2[n-1].Name == names[i] {
			out2[n-1].Duration += d
			continue
		}
		out2 = append(out2, Phase{Name: names[i], Duration: d})
	}
	return out2
}

// FormatPhases is the phases on one line: "nuv: node image 1.2s, kind: preparing nodes 2.0s, ...";
// steps that took less than 50 ms are counted at the end, not listed.
func FormatPhases(ps []Phase) string {
	var parts []string
	short := 0
	for _, p := range ps {
		if p.Duration < 50*time.Millisecond {
			short++
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.1fs", strings.TrimSpace(p.Name), p.Duration.Seconds()))
	}
	if short > 0 {
		parts = append(parts, fmt.Sprintf("%d more under 0.05s", short))
	}
	return strings.Join(parts, ", ")
}

// PhaseLogger is a logger for the kind library that times kind's steps and kubeadm init's phases
// (as a create through the provider does), passing every message on to l (nil: quiet). Phases
// returns what it timed so far.
func PhaseLogger(l cli.Logger) (kindlog.Logger, func() []Phase) {
	if l == nil {
		l = cli.Quiet()
	}
	c := &phaseClock{}
	return kindLogger{l, c}, c.Phases
}

// entrypointPhases times the boot of a node container from its log (`logs -t`: each line with
// the runtime's timestamp): kind's entrypoint up to "starting init" (systemd), and within it the
// network detection, whose DNS lookup of host.docker.internal waits up to 5 s where the runtime's
// embedded DNS cannot reach an upstream server. kind goes on with the node while it boots, so
// these overlap kind's steps.
func entrypointPhases(node, logs string) []Phase {
	var first, iptables, detected, initAt time.Time
	for _, l := range strings.Split(logs, "\n") {
		ts, msg, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			continue
		}
		if first.IsZero() {
			first = t
		}
		switch {
		case strings.HasPrefix(msg, "INFO: setting iptables to detected mode"):
			iptables = t
		case strings.HasPrefix(msg, "INFO: detected IPv4 address") && detected.IsZero():
			detected = t
		case strings.HasPrefix(msg, "INFO: starting init"):
			initAt = t
		}
	}
	var out []Phase
	if !first.IsZero() && !initAt.IsZero() {
		out = append(out, Phase{Name: "node " + node + ": entrypoint before systemd", Duration: initAt.Sub(first)})
	}
	if !iptables.IsZero() && !detected.IsZero() {
		out = append(out, Phase{Name: "  node " + node + ": entrypoint's network detection (DNS lookup of host.docker.internal)", Duration: detected.Sub(iptables)})
	}
	return out
}
