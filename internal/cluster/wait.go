package cluster

import (
	"fmt"
	"time"
)

// EnvWaitTimeout bounds every wait of a provider for a cloud operation or a resource to settle
// (a Go duration, e.g. 20m); DefaultWaitTimeout when unset.
const EnvWaitTimeout = "NUV_CLUSTER_WAIT_TIMEOUT"

// DefaultWaitTimeout is the longest a provider waits for one operation: well beyond the slowest
// cloud create (AKS and GKE clusters take 5-15 minutes), short of forever.
const DefaultWaitTimeout = 45 * time.Minute

// WaitTimeout is the bound EnvWaitTimeout sets (read with getenv), or DefaultWaitTimeout; an
// error names a value that is not a positive duration.
func WaitTimeout(getenv func(string) string) (time.Duration, error) {
	v := getenv(EnvWaitTimeout)
	if v == "" {
		return DefaultWaitTimeout, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 20m", EnvWaitTimeout, v)
	}
	return d, nil
}

// WaitExpired is the error of a wait that reached its bound: it names what was waited for, its
// last known state and how long the wait lasted.
type WaitExpired struct {
	What, Last string
	Waited     time.Duration
}

func (e *WaitExpired) Error() string {
	return fmt.Sprintf("gave up waiting for %s after %s (last seen: %s); it may still finish: the next apply looks again (--wait-timeout or %s raises the bound)",
		e.What, e.Waited.Round(time.Second), e.Last, EnvWaitTimeout)
}
