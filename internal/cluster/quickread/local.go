package quickread

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/proc"
)

// ProbeTimeout bounds the count of a local cluster's Ready nodes, as the local provider bounds it
// (local.ProbeTimeout): an API that does not answer shows "?" nodes.
const ProbeTimeout = 2 * time.Second

// LocalNames lists the local clusters under home (the directories of <home>/clusters), sorted.
func LocalNames(home string) ([]string, error) {
	entries, err := os.ReadDir(paths.Locator{Home: home}.ControlPlanes())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// Local reports local cluster name as the local provider's Status does: its record, whether each
// of its processes runs (pid files) and, when one does, its Ready nodes. found is false when the
// cluster has no directory; ErrUnsure when its record is not in the form this reader knows.
func Local(ctx context.Context, home, name string) (info cluster.Info, found bool, err error) {
	dir := paths.Locator{Home: home}.ControlPlane(name)
	if _, err := os.Stat(dir); err != nil {
		return cluster.Info{}, false, nil
	}
	s, err := loadLocal(dir)
	if err != nil {
		return cluster.Info{}, true, err
	}
	info = cluster.Info{Name: name, Provider: "local", NodesReady: -1,
		APIURL: s.data.APIURL, Kubeconfig: s.data.Kubeconfig, Flavor: s.flavor, Version: s.version,
		HA: s.ha, Nodes: s.nodes, Created: s.created, Binaries: s.data.BinarySource, Durability: durabilityText(s.durability)}
	up := 0
	for _, c := range localComponents(s) {
		if r, err := proc.ReadRecord(filepath.Join(dir, "pids", c.Name+".pid")); err == nil {
			c.PID, c.Running = r.PID, r.Alive()
		}
		if c.Running {
			up++
		}
		info.Components = append(info.Components, c)
	}
	switch {
	case up == len(info.Components):
		info.Status = cluster.Running
	case up == 0:
		info.Status = cluster.Stopped
	default:
		info.Status = cluster.Degraded
	}
	if s.phase == "creating" && info.Status != cluster.Stopped {
		info.Status = cluster.Creating
	}
	if up > 0 {
		if ready, err := nodesReady(ctx, filepath.Join(dir, "config", "admin.kubeconfig"), ProbeTimeout); err == nil {
			info.NodesReady = ready
		}
	}
	return info, true, nil
}

// LocalData is the local provider's data in a cluster's record (state.Record.Data): its one
// definition, which local clusters' machinery (package localkube) writes and this package reads.
type LocalData struct {
	Kubeconfig   string         `json:"kubeconfig"`
	APIURL       string         `json:"apiURL"`
	Binary       string         `json:"binary"`
	BinarySource string         `json:"binarySource,omitempty"`
	Ports        map[string]int `json:"ports"`
	TokenWebhook string         `json:"tokenWebhook,omitempty"`
	// ProviderIDs maps a node group to the providerID prefix of its nodes (emulated clouds).
	ProviderIDs map[string]string `json:"providerIDs,omitempty"`
}

// localSection is the local provider's spec section (spec.local), its fields and types: it is
// decoded strictly, so a field missing here would make it undecodable.
type localSection struct {
	Flavor     string `yaml:"flavor,omitempty" json:"flavor,omitempty"`
	PortBase   int    `yaml:"portBase,omitempty" json:"portBase,omitempty"`
	Durability string `yaml:"durability,omitempty" json:"durability,omitempty"`
}

// localState is what the verbs show of a local cluster's record.
type localState struct {
	data                               LocalData
	phase, version, flavor, durability string
	ha                                 bool
	nodes                              int
	created                            time.Time
}

// loadLocal reads <dir>/state.json, a state record with the local provider's data; the flat
// state.json of an older nuv (no generation) is ErrUnsure, as is anything the local provider
// would call corrupt or incomplete (its words are its own).
func loadLocal(dir string) (*localState, error) {
	path := filepath.Join(dir, "state.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, ErrUnsure)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("%s: %w", path, ErrUnsure)
	}
	if _, ok := keys["generation"]; !ok {
		return nil, fmt.Errorf("%s: an older nuv's flat record: %w", path, ErrUnsure)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, ErrUnsure)
	}
	s := &localState{}
	if len(r.Data) > 0 {
		if err := json.Unmarshal(r.Data, &s.data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, ErrUnsure)
		}
	}
	if r.Name == "" || r.Spec == nil || s.data.Ports == nil {
		return nil, fmt.Errorf("%s: incomplete: %w", path, ErrUnsure)
	}
	c := &r.Spec.Spec
	s.phase, s.created, s.version, s.ha = r.Phase, r.Created, c.KubernetesVersion, c.ControlPlane.Count > 1
	if sec := spec.SectionValue[localSection](r.Spec, "local"); sec.Flavor != "" || sec.Durability != "" {
		s.flavor, s.durability = sec.Flavor, sec.Durability
	}
	if len(c.NodeGroups) == 0 {
		s.nodes = 1 // one default group of one node
	}
	for _, g := range c.NodeGroups {
		s.nodes += g.Size()
	}
	return s, nil
}

// localComponents are a local cluster's processes in start order, with the port each is checked
// on: etcd, the API servers, the balancer of an HA cluster, the controllers and kwok.
func localComponents(s *localState) []cluster.Component {
	etcd, apiservers := []string{"etcd"}, []string{"kube-apiserver"}
	if s.ha {
		etcd, apiservers = []string{"etcd-0", "etcd-1", "etcd-2"}, []string{"kube-apiserver-0", "kube-apiserver-1"}
	}
	var cs []cluster.Component
	for _, e := range etcd {
		cs = append(cs, cluster.Component{Name: e, Port: s.data.Ports[e+"-client"]})
	}
	for _, a := range apiservers {
		cs = append(cs, cluster.Component{Name: a, Port: s.data.Ports[a]})
	}
	if s.ha {
		cs = append(cs, cluster.Component{Name: "lb", Port: s.data.Ports["lb"]})
	}
	for _, n := range []string{"kube-controller-manager", "kube-scheduler", "kwok"} {
		cs = append(cs, cluster.Component{Name: n, Port: s.data.Ports[n]})
	}
	return cs
}

// durabilityText says whether the cluster's etcd survives a host crash, in the local provider's
// words.
func durabilityText(durability string) string {
	if durability == "safe" {
		return "safe (etcd fsyncs every write)"
	}
	return "fast (etcd does not fsync: a host crash can lose recent writes; spec.local.durability: safe or --durability safe for clusters whose data must survive)"
}

// nodeList is what a count of Ready nodes reads of GET /api/v1/nodes.
type nodeList struct {
	Items []struct {
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"items"`
}

// nodesReady counts the Ready nodes of the cluster kubeconfig reaches, bounded by timeout.
func nodesReady(ctx context.Context, kubeconfig string, timeout time.Duration) (int, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return 0, fmt.Errorf("admin kubeconfig: %w", err)
	}
	cfg.Timeout = timeout
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return 0, fmt.Errorf("cluster client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/api/v1/nodes", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("list nodes: %s", resp.Status)
	}
	var nodes nodeList
	if err := json.NewDecoder(resp.Body).Decode(&nodes); err != nil {
		return 0, fmt.Errorf("list nodes: %w", err)
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == "Ready" {
				if c.Status == "True" {
					ready++
				}
				break
			}
		}
	}
	return ready, nil
}
