package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"
)

// JUnit XML as CI servers read it (the Jenkins/Surefire schema): one testsuite per cluster.

// JUnitSuites is the <testsuites> root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is the run of the target on one cluster.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a name/value pair of a suite (cluster type, server version, ...).
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one step (or the whole target when the child reported no steps).
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitProblem `xml:"failure,omitempty"`
	Error     *JUnitProblem `xml:"error,omitempty"`
	Skipped   *JUnitProblem `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// JUnitProblem is a failure, error or skip with its message.
type JUnitProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func secs(f float64) string { return fmt.Sprintf("%.2f", f) }

// JUnit converts the report to its JUnit form.
func JUnit(r *Report) JUnitSuites {
	root := JUnitSuites{Name: "nuv all-kubes " + r.Target, Time: secs(r.Seconds)}
	if r.UpgradeFrom != "" {
		root.Name += " --upgrade-from " + r.UpgradeFrom
	}
	multi := len(r.Targets()) > 1
	paths := r.HasPaths()
	for _, res := range r.Results {
		target := r.TargetOf(res)
		name := res.Cluster
		if multi {
			name = res.Cluster + " " + target
		}
		if paths {
			name += " " + PathOf(res)
		}
		s := JUnitSuite{Name: name, Time: secs(res.Seconds)}
		if !res.Started.IsZero() {
			s.Timestamp = res.Started.UTC().Format(time.RFC3339)
		}
		s.Properties = []JUnitProperty{
			{"cluster.type", res.Type},
			{"server.version", res.ServerVersion},
			{"status", string(res.Status)},
			{"attempts", fmt.Sprint(res.Attempts)},
			{"exit.code", fmt.Sprint(res.ExitCode)},
			{"log", res.Log},
		}
		if res.Artifacts != "" {
			s.Properties = append(s.Properties, JUnitProperty{"artifacts", res.Artifacts})
		}
		if multi {
			s.Properties = append(s.Properties, JUnitProperty{"target", target})
		}
		if p := res.Platform; p != nil {
			s.Properties = append(s.Properties,
				JUnitProperty{"cluster.provider", p.Provider},
				JUnitProperty{"cluster.flavor", p.Flavor},
				JUnitProperty{"cluster.type.detected.by", p.DetectedBy},
				JUnitProperty{"cluster.type.evidence", p.Evidence},
				JUnitProperty{"nodes", fmt.Sprint(p.Nodes)},
				JUnitProperty{"nodes.simulated", fmt.Sprint(p.Simulated)},
				JUnitProperty{"nodes.kind", p.NodeKind()})
			if p.Emulated != "" {
				s.Properties = append(s.Properties, JUnitProperty{"cluster.emulated", p.Emulated})
			}
		}
		if paths {
			s.Properties = append(s.Properties, JUnitProperty{"path", PathOf(res)})
		}
		if u := res.Upgrade; u != nil {
			s.Properties = append(s.Properties,
				JUnitProperty{"upgrade.from", u.From},
				JUnitProperty{"upgrade.commit", u.Commit},
				JUnitProperty{"upgrade.from.image", u.FromImage},
				JUnitProperty{"upgrade.to.image", u.ToImage},
				JUnitProperty{"upgrade.instance", u.Instance},
				JUnitProperty{"upgrade.uid.kept", fmt.Sprint(u.UIDKept)},
				JUnitProperty{"upgrade.data", u.Data})
			for _, c := range u.Changed {
				s.Properties = append(s.Properties, JUnitProperty{"upgrade.changed", c})
			}
		} else if PathOf(res) == PathUpgrade && r.UpgradeFrom != "" {
			s.Properties = append(s.Properties, JUnitProperty{"upgrade.from", r.UpgradeFrom})
		}
		if res.Flaky() {
			s.Properties = append(s.Properties, JUnitProperty{"flaky", "true"})
		}
		if pv := res.Provenance; pv != nil {
			s.Properties = append(s.Properties,
				JUnitProperty{"run", pv.Run},
				JUnitProperty{"run.machine", pv.Machine},
				JUnitProperty{"run.nuv", pv.Nuv},
				JUnitProperty{"run.commit", pv.Commit},
				JUnitProperty{"run.ended", pv.Ended.UTC().Format(time.RFC3339)})
			if pv.CIJob != "" {
				s.Properties = append(s.Properties, JUnitProperty{"run.ci.job", pv.CIJob})
			}
		}
		for _, sp := range res.Superseded {
			s.Properties = append(s.Properties, JUnitProperty{"superseded", sp.Run + " (" + sp.Machine + ", ended " + sp.Ended.UTC().Format(time.RFC3339) + ")"})
		}
		steps := append([]Step(nil), res.Steps...)
		if len(steps) == 0 || !res.Status.OK() && !anyFailed(steps) {
			// No steps, or the run failed outside them (timeout, crash): one case for the target.
			steps = append(steps, Step{Name: target, Status: res.Status, Seconds: res.Seconds, Message: res.Message})
		}
		for _, st := range steps {
			c := JUnitCase{Name: st.Name, ClassName: name, Time: secs(st.Seconds)}
			msg := st.Message
			if msg == "" {
				msg = string(st.Status)
			}
			switch st.Status {
			case Passed:
			case Failed:
				c.Failure = &JUnitProblem{Message: firstLine(msg), Type: string(st.Status), Text: msg}
				s.Failures++
			case Skipped:
				c.Skipped = &JUnitProblem{Message: firstLine(msg)}
				s.Skipped++
			default: // unreachable, timeout, cancelled: the test could not finish
				c.Error = &JUnitProblem{Message: firstLine(msg), Type: string(st.Status), Text: msg}
				s.Errors++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
		root.Suites = append(root.Suites, s)
	}
	return root
}

func anyFailed(steps []Step) bool {
	for _, s := range steps {
		if !s.Status.OK() {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// WriteJUnit writes the report as JUnit XML.
func WriteJUnit(w io.Writer, r *Report) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(JUnit(r)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
