package kind

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nuv-dev/nuv/internal/companion"
)

// kind's Docker (or podman) network "kind" is shared by every kind cluster on the host, whichever
// nuv (NUV_HOME, project, test) made it. kind makes it when it is missing, and nuv removes it once
// no container uses it (kind leaves it). Without coordination a delete can remove it in the moment
// between another create's making sure it exists and that create's node containers joining it
// ("network kind not found"). So every nuv on the host takes one lock file under nuv's cache
// directory: shared while kind creates (any number of creates at once), exclusive and without
// waiting for the removal, which a create in flight therefore skips: the network stays, in use.

// networkLock is the path of the lock on kind's network.
func (p *Provider) networkLock() string {
	return filepath.Join(companion.CacheDir(p.getenv), "locks", "kind-network.lock")
}

// flock takes a flock of how (syscall.LOCK_SH or LOCK_EX, with LOCK_NB not to wait) on path,
// made with its directory if missing; release undoes it. The lock goes with the process.
func flock(path string, how int) (release func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
