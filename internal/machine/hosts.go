package machine

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/nuv-dev/nuv/internal/fsutil"
)

// Where nuv keeps what reaches the machines of a cluster it made on machines: nuv's home, then
// the provider (aws), then the cluster's name.
const (
	// KeyFile is nuv's SSH client key of the cluster's machines (0600).
	KeyFile = "id_ed25519"
	// HostsFile lists the cluster's machines as nuv last saw them running (Hosts).
	HostsFile = "machines"
)

// ClusterDir is the directory of cluster's machine access under nuv's home home, for provider.
func ClusterDir(home, provider, cluster string) string {
	return filepath.Join(home, provider, cluster)
}

// Host is one machine of a cluster as nuv reaches it: its name (its node's name), its private
// address, the endpoint nuv dials (host:port) and its host key (an authorized_keys line, pinned).
type Host struct {
	Name, Address, Endpoint, HostKey string
}

// WriteHosts writes hosts to path (atomically, 0600), one line each: NAME ADDRESS ENDPOINT
// KEY-TYPE KEY. Those who load images into the cluster's nodes read it (ReadHosts) with nuv's key
// beside it, so they dial the machines with the host keys nuv made pinned, without the cloud's
// API.
func WriteHosts(path string, hosts []Host) error {
	var b bytes.Buffer
	b.WriteString("# the machines nuv reaches over SSH (name, private address, endpoint, pinned host key)\n")
	for _, h := range hosts {
		k, err := ParsePublicKey(h.HostKey)
		if err != nil {
			return fmt.Errorf("machine %s: %w", h.Name, err)
		}
		if h.Name == "" || strings.ContainsAny(h.Name+h.Address+h.Endpoint, " \t\n") || net.ParseIP(h.Address) == nil {
			return fmt.Errorf("machine %q (%q): not a name and an address", h.Name, h.Address)
		}
		fmt.Fprintf(&b, "%s %s %s %s", h.Name, h.Address, h.Endpoint, AuthorizedKey(k, ""))
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(path, b.Bytes(), 0o600)
}

// ReadHosts reads what WriteHosts wrote; a bad line is an error naming the file and the line.
func ReadHosts(path string) ([]Host, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Host
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return nil, fmt.Errorf("%s:%d: want NAME ADDRESS ENDPOINT KEY-TYPE KEY, got %d fields", path, n, len(f))
		}
		key := f[3] + " " + f[4]
		if _, err := ParsePublicKey(key); err != nil {
			return nil, fmt.Errorf("%s:%d: host key of %s: %w", path, n, f[0], err)
		}
		if net.ParseIP(f[1]) == nil {
			return nil, fmt.Errorf("%s:%d: address of %s: %q is no IP address", path, n, f[0], f[1])
		}
		if _, _, err := net.SplitHostPort(f[2]); err != nil {
			return nil, fmt.Errorf("%s:%d: endpoint of %s: %w", path, n, f[0], err)
		}
		out = append(out, Host{Name: f[0], Address: f[1], Endpoint: f[2], HostKey: key})
	}
	return out, sc.Err()
}
