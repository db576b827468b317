package kubebin

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// BuildRecord is one finished source build of the nuv-kube companion, kept in the cache so the next
// build's estimate comes from this machine's own pace.
type BuildRecord struct {
	Packages int64     `json:"packages"` // packages compiled (go build -v lines)
	Total    int64     `json:"total"`    // packages in the build graph
	Seconds  float64   `json:"seconds"`  // wall time, module downloads included
	Cores    int       `json:"cores"`
	When     time.Time `json:"when"`
}

// ReferenceColdBuild is the one measurement nuv ships: a cold build of the companion (module
// downloads excluded) took 9 to 10 minutes on a 2-core machine (issue 17). It is only used until
// this machine has a record of its own.
const (
	ReferenceColdBuild      = 570 * time.Second
	ReferenceColdBuildCores = 2
)

// LoadBuildRecords reads the records at path; a missing or unreadable file is no records.
func LoadBuildRecords(path string) []BuildRecord {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var rs []BuildRecord
	if json.Unmarshal(b, &rs) != nil {
		return nil
	}
	return rs
}

// AppendBuildRecord adds r to the records at path, keeping the last ten.
func AppendBuildRecord(path string, r BuildRecord) error {
	rs := append(LoadBuildRecords(path), r)
	if len(rs) > 10 {
		rs = rs[len(rs)-10:]
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// minColdPackages is the fewest packages a build must have compiled to count as cold.
const minColdPackages = 500

// coldRecord returns the record that compiled the most packages when it compiled most of its graph
// (a cold build), if any.
func coldRecord(rs []BuildRecord) (BuildRecord, bool) {
	var best BuildRecord
	for _, r := range rs {
		// A relink (a handful of packages) says nothing about a cold build: a cold build of
		// nuv-kube compiles thousands.
		if r.Cores > 0 && r.Total > 0 && r.Packages >= minColdPackages && r.Packages*10 >= r.Total*8 && r.Packages > best.Packages {
			best = r
		}
	}
	return best, best.Packages > 0
}

// ColdEstimate is how long a cold build takes on cores, and what the figure rests on: this
// machine's last cold build scaled by cores when there is one, else the reference measurement.
func ColdEstimate(rs []BuildRecord, cores int) (time.Duration, string) {
	if cores < 1 {
		cores = 1
	}
	if r, ok := coldRecord(rs); ok {
		d := time.Duration(r.Seconds * float64(r.Cores) / float64(cores) * float64(time.Second))
		return d, fmt.Sprintf("measured here: %d packages in %s on %d cores, %s", r.Packages, time.Duration(r.Seconds*float64(time.Second)).Round(time.Second), r.Cores, r.When.Format("2006-01-02"))
	}
	d := ReferenceColdBuild * ReferenceColdBuildCores / time.Duration(cores)
	return d, fmt.Sprintf("measured on a %d-core machine: %s, plus module downloads", ReferenceColdBuildCores, ReferenceColdBuild.Round(time.Minute))
}

// BuildProgress is a progress line of a running build: elapsed is the whole build, compiling the
// time since the first package compiled, done the packages compiled, stale how many the build
// compiles in all (0: not known yet), total the packages in its graph (0: not known yet). The time
// left is the packages left at the pace of this build so far.
func BuildProgress(elapsed, compiling time.Duration, done, stale, total int64) string {
	s := fmt.Sprintf("%s elapsed, %d packages compiled", elapsed.Round(time.Second), done)
	switch {
	case stale > 0 && done >= stale:
		return s + fmt.Sprintf(" of %d: linking", stale)
	case stale > 0 && done >= 20 && compiling > 0:
		left := time.Duration(float64(compiling) / float64(done) * float64(stale-done))
		return s + fmt.Sprintf(" of %d (%d cached); about %s left at this build's pace", stale, total-stale, roundLeft(left))
	case stale > 0:
		return s + fmt.Sprintf(" of %d (%d cached)", stale, total-stale)
	}
	return s + " (counting the packages to compile)"
}

func roundLeft(d time.Duration) string {
	if d < time.Minute {
		return d.Round(5 * time.Second).String()
	}
	return d.Round(time.Minute).String()
}
