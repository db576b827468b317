//go:build !linux

package container

import (
	"context"
	"fmt"
	"runtime"
)

// SetNetworkRoutes needs Linux's routing tables and rules (rtnetlink); on other systems it says so.
func (m *Manager) SetNetworkRoutes(ctx context.Context, network string, table int, routes []NetworkRoute) error {
	return fmt.Errorf("routes of network %s: routing tables of container networks need Linux (this is %s)", network, runtime.GOOS)
}
