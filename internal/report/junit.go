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
		s := junitSuite(r, res, multi, paths)
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
		root.Suites = append(root.Suites, s)
	}
	return root
}

// junitSuite is the suite of one result: named after its cluster (and its target when the report
// has several, its path when it has paths), its properties, and a case per step.
func junitSuite(r *Report, res Result, multi, paths bool) JUnitSuite {
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
	s.Properties = junitProperties(r, res, target, multi, paths)
	addJUnitCases(&s, res, target, name)
	return s
}

// junitProperties are a result's properties: how it ran, the cluster's platform, its upgrade
// path, whether it was flaky, and where and when it ran.
func junitProperties(r *Report, res Result, target string, multi, paths bool) []JUnitProperty {
	props := []JUnitProperty{
		{"cluster.type", res.Type},
		{"server.version", res.ServerVersion},
		{"status", string(res.Status)},
		{"attempts", fmt.Sprint(res.Attempts)},
		{"exit.code", fmt.Sprint(res.ExitCode)},
		{"log", res.Log},
	}
	if res.Artifacts != "" {
		props = append(props, JUnitProperty{"artifacts", res.Artifacts})
	}
	if multi {
		props = append(props, JUnitProperty{"target", target})
	}
	if p := res.Platform; p != nil {
		props = append(props, platformProperties(p)...)
	}
	if paths {
		props = append(props, JUnitProperty{"path", PathOf(res)})
	}
	if u := res.Upgrade; u != nil {
		props = append(props, upgradeProperties(u)...)
	} else if PathOf(res) == PathUpgrade && r.UpgradeFrom != "" {
		props = append(props, JUnitProperty{"upgrade.from", r.UpgradeFrom})
	}
	if res.Flaky() {
		props = append(props, JUnitProperty{"flaky", "true"})
	}
	if pv := res.Provenance; pv != nil {
		props = append(props, provenanceProperties(pv)...)
	}
	for _, sp := range res.Superseded {
		props = append(props, JUnitProperty{"superseded", sp.Run + " (" + sp.Machine + ", ended " + sp.Ended.UTC().Format(time.RFC3339) + ")"})
	}
	return props
}

// platformProperties describe the cluster a result ran on: its provider, flavor, how its type was
// detected, and its nodes.
func platformProperties(p *Platform) []JUnitProperty {
	props := []JUnitProperty{
		{"cluster.provider", p.Provider},
		{"cluster.flavor", p.Flavor},
		{"cluster.type.detected.by", p.DetectedBy},
		{"cluster.type.evidence", p.Evidence},
		{"nodes", fmt.Sprint(p.Nodes)},
		{"nodes.simulated", fmt.Sprint(p.Simulated)},
		{"nodes.kind", p.NodeKind()},
	}
	if p.Emulated != "" {
		props = append(props, JUnitProperty{"cluster.emulated", p.Emulated})
	}
	return props
}

// upgradeProperties describe a result's upgrade path: the versions, the instance, and what the
// upgrade kept and changed.
func upgradeProperties(u *Upgrade) []JUnitProperty {
	props := []JUnitProperty{
		{"upgrade.from", u.From},
		{"upgrade.commit", u.Commit},
		{"upgrade.from.image", u.FromImage},
		{"upgrade.to.image", u.ToImage},
		{"upgrade.instance", u.Instance},
		{"upgrade.uid.kept", fmt.Sprint(u.UIDKept)},
		{"upgrade.data", u.Data},
	}
	for _, c := range u.Changed {
		props = append(props, JUnitProperty{"upgrade.changed", c})
	}
	return props
}

// provenanceProperties say which run made a result: its ID, machine, nuv, commit, end and CI job.
func provenanceProperties(pv *Provenance) []JUnitProperty {
	props := []JUnitProperty{
		{"run", pv.Run},
		{"run.machine", pv.Machine},
		{"run.nuv", pv.Nuv},
		{"run.commit", pv.Commit},
		{"run.ended", pv.Ended.UTC().Format(time.RFC3339)},
	}
	if pv.CIJob != "" {
		props = append(props, JUnitProperty{"run.ci.job", pv.CIJob})
	}
	return props
}

// addJUnitCases adds to s a case per step of res, of class name, and counts them by outcome; a
// result with no steps, or that failed outside them (timeout, crash), gets one case for its target.
func addJUnitCases(s *JUnitSuite, res Result, target, name string) {
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
