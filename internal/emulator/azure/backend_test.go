package azure

import (
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

func TestLocalName(t *testing.T) {
	seen := map[string]string{}
	for _, key := range []string{"rg/mc", "RG/MC_x", "a-very-long-resource-group-name.with.dots/and-a-long-cluster-name", "rg/mc2", "(weird)/x"} {
		n := LocalName(key)
		if err := emucore.ValidName(n); err != nil {
			t.Errorf("LocalName(%q) = %q: %v", key, n, err)
		}
		if n != LocalName(key) {
			t.Errorf("LocalName(%q) is not stable", key)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("LocalName(%q) = LocalName(%q) = %q", key, other, n)
		}
		seen[n] = key
		if !strings.HasPrefix(n, "aks-") {
			t.Errorf("LocalName(%q) = %q: want the aks- prefix", key, n)
		}
	}
}
