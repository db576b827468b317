package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/machine"
)

// TestMachinesKey: the image loader over SSH takes nuv's SSH key from $NUV_AWS_SSH_KEY when it is
// set (as `nuv cluster apply` does), else from the cluster's directory under nuv's home; a bad
// value is an error naming the variable, never the value.
func TestMachinesKey(t *testing.T) {
	fileKey, err := machine.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	envKey, err := machine.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	envPEM, err := envKey.PrivatePEM("nuv@env")
	if err != nil {
		t.Fatal(err)
	}
	withFile := t.TempDir()
	if err := machine.WriteKey(filepath.Join(withFile, machine.KeyFile), fileKey, "nuv@file"); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	const bad = "not-a-key-but-a-secret-value"
	for _, tc := range []struct {
		name, dir, env string
		want           *machine.Key
		err            string
	}{
		{"the key under nuv's home", withFile, "", fileKey, ""},
		{"the environment's key wins", withFile, string(envPEM), envKey, ""},
		{"the environment's key without a home's", empty, string(envPEM), envKey, ""},
		{"a bad value names the variable", withFile, bad, nil, "$" + machine.EnvSSHKey},
		{"no key anywhere", empty, "", nil, "under that nuv home, or given in $" + machine.EnvSSHKey},
	} {
		m := &Machines{Dir: tc.dir, Getenv: func(k string) string {
			if k == machine.EnvSSHKey {
				return tc.env
			}
			return ""
		}}
		got, err := m.key()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), bad) {
				t.Errorf("%s: error %v, want one with %q and without the value", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got.AuthorizedKey("") != tc.want.AuthorizedKey("") {
			t.Errorf("%s: got key %s, want %s", tc.name, got.AuthorizedKey(""), tc.want.AuthorizedKey(""))
		}
	}
	if _, err := os.Stat(filepath.Join(empty, machine.KeyFile)); !os.IsNotExist(err) {
		t.Errorf("reading the key wrote one: %v", err)
	}
}
