package paths

import "path/filepath"

// Locator answers where nuv keeps what belongs to one home (NUV_HOME): the state store, the
// directories of local control planes (the user's own local clusters and those behind each cloud
// emulator's clusters) and the emulators' own directories. It is the one place that knows this
// layout; packages ask it instead of joining folder names themselves.
//
//	<home>/state/                      the default state store (records and locks)
//	<home>/clusters/<name>/            a local cluster's control plane (its record, pki, logs, pids)
//	<home>/emulator/                   the AWS emulator; its EKS control planes in clusters/<name>
//	<home>/emulator/azure/             the Azure emulator; its AKS control planes in clusters/<name>
//	<home>/emulator/gcp/               the GCP emulator; its GKE control planes in clusters/clusters/<name>
type Locator struct{ Home string }

// Clouds whose emulators keep control planes under a home (Locator.Emulator).
const (
	AWS   = "aws"
	Azure = "azure"
	GCP   = "gcp"
)

// Emulators are the clouds nuv emulates, in the order their control planes are looked for.
var Emulators = []string{AWS, Azure, GCP}

// StateStore is the directory of the default state store.
func (l Locator) StateStore() string { return filepath.Join(l.Home, "state") }

// ControlPlane is the directory of the local control plane name whose home is l.Home (the
// user's own local clusters, or an emulator's control-plane home: EmulatorControlPlanes).
func (l Locator) ControlPlane(name string) string { return filepath.Join(l.Home, "clusters", name) }

// ControlPlanes is the directory holding every control plane of l.Home (one directory each).
func (l Locator) ControlPlanes() string { return filepath.Join(l.Home, "clusters") }

// Emulator is the directory of the emulator of cloud (AWS, Azure or GCP): its state, faults and
// process record.
func (l Locator) Emulator(cloud string) string {
	aws := filepath.Join(l.Home, "emulator")
	if cloud == AWS {
		return aws
	}
	return filepath.Join(aws, cloud)
}

// EmulatorControlPlanes is the home of the local control planes behind the clusters of cloud's
// emulator (ask Locator{Home: it}.ControlPlane(name) for one of them).
func (l Locator) EmulatorControlPlanes(cloud string) string {
	if cloud == GCP {
		return filepath.Join(l.Emulator(GCP), "clusters")
	}
	return l.Emulator(cloud)
}

// FindControlPlane returns the home of the local control plane called name: l.Home if it has
// one of that name, else the first emulator's control-plane home that has; ok is false (and home
// l.Home) when none has.
func (l Locator) FindControlPlane(name string) (home string, ok bool) {
	if isDir(l.ControlPlane(name)) {
		return l.Home, true
	}
	for _, cloud := range Emulators {
		h := l.EmulatorControlPlanes(cloud)
		if isDir(Locator{Home: h}.ControlPlane(name)) {
			return h, true
		}
	}
	return l.Home, false
}

// Kubeconfig is where the kubeconfig of cluster name goes in project (clusters/<name>.kubeconfig).
func Kubeconfig(project, name string) string {
	return filepath.Join(Clusters(project), name+".kubeconfig")
}
