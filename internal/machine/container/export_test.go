package container

import (
	"context"
	"errors"
)

// What the external tests reach inside a Manager.

func (m *Manager) UsesAPI() bool { return m.api != nil }
func (m *Manager) UseCLIOnly()   { m.api = nil }
func (m *Manager) InspectSeveral(ctx context.Context, names ...string) ([]Info, error) {
	return m.inspect(ctx, names...)
}
func (m *Manager) NetworkSubnets(ctx context.Context, name string) ([]string, error) {
	return m.networkSubnets(ctx, name)
}
func (m *Manager) Bridge(ctx context.Context, name string) (string, error) {
	return m.bridge(ctx, name)
}
func (m *Manager) NetworkUsers(ctx context.Context, name string) []string {
	return m.networkUsers(ctx, name)
}
func (m *Manager) ExecNoStdin(ctx context.Context, name string, args ...string) ([]byte, error) {
	return m.execNoStdin(ctx, name, args...)
}
func (m *Manager) StoreUserData(ctx context.Context, name string, data []byte) error {
	_, err := m.docker(ctx, data, "exec", "-i", name, "sh", "-c", storeUserData)
	return err
}
func (m *Manager) RunUserData(ctx context.Context, name string) error {
	return m.runUserData(ctx, name)
}

// ExitOf is the exit code and message of a failed command (ok false: not a command's failure).
func ExitOf(err error) (code int, msg string, ok bool) {
	var de *dockerError
	if errors.As(err, &de) {
		return de.code, de.msg, true
	}
	return 0, "", false
}

var NoSuch = noSuch
