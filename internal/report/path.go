package report

import "fmt"

// The paths by which a cell's deployment reached the version under test: the second axis of the
// matrix when all-kubes runs with --upgrade-from (the first being the cluster).
const (
	// PathInstall: the operator and its instance were installed fresh at the version under test.
	PathInstall = "install"
	// PathUpgrade: they were installed at an older version (Upgrade.From), found Ready, and the
	// operator was then upgraded to the version under test before the target ran.
	PathUpgrade = "upgrade"
)

// Upgrade is what the upgrade path of a cell did and found: the version it started from, the
// operator images before and after, and whether the instance survived the upgrade as itself (the
// same object, its UID kept) with its data (a document written to its store before the upgrade
// read back after it).
type Upgrade struct {
	// From is the version the path started from, as given (a git ref or an image reference).
	From string `json:"from"`
	// Commit is From resolved to a commit when it is a git ref.
	Commit string `json:"commit,omitempty"`
	// FromImage and ToImage are the operator images before and after the upgrade.
	FromImage string `json:"fromImage,omitempty"`
	ToImage   string `json:"toImage,omitempty"`
	// Instance is the instance checked (namespace/name) and UID its UID before the upgrade.
	Instance string `json:"instance,omitempty"`
	UID      string `json:"uid,omitempty"`
	// UIDKept is true when the instance after the upgrade is the same object (same UID).
	UIDKept bool `json:"uidKept"`
	// Data says what became of the document written before the upgrade: DataKept, DataLost, or
	// why it was not checked (e.g. the instance's pods run on simulated nodes).
	Data string `json:"data,omitempty"`
	// Changed lists what the upgraded operator changed on the instance's workloads (labels and
	// annotations, "Deployment default/whisk-controller: label a=1 -> 2").
	Changed []string `json:"changed,omitempty"`
}

// What Upgrade.Data says when the document was checked.
const (
	DataKept = "kept"
	DataLost = "lost"
)

// Verdict is a short line about the upgrade: "from v1 (abc1234): uid kept, data kept".
func (u *Upgrade) Verdict() string {
	if u == nil {
		return ""
	}
	from := u.From
	if u.Commit != "" && u.Commit != u.From {
		c := u.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		from += " (" + c + ")"
	}
	uid := "uid kept"
	if !u.UIDKept {
		uid = "uid NOT kept"
		if u.UID == "" {
			uid = "uid not checked"
		}
	}
	data := "data " + u.Data
	if u.Data == "" {
		data = "data not checked"
	}
	return fmt.Sprintf("from %s: %s, %s", from, uid, data)
}

// PathOf returns the cell's path; a report without the upgrade axis has only installs.
func PathOf(res Result) string {
	if res.Path == "" {
		return PathInstall
	}
	return res.Path
}

// HasPaths tells whether the report has the upgrade axis (any cell names its path).
func (r *Report) HasPaths() bool {
	for _, res := range r.Results {
		if res.Path != "" {
			return true
		}
	}
	return false
}

// Paths lists the paths of the report's cells, install first.
func (r *Report) Paths() []string {
	seen := map[string]bool{}
	for _, res := range r.Results {
		seen[PathOf(res)] = true
	}
	var out []string
	for _, p := range []string{PathInstall, PathUpgrade} {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out
}
