package nodeimage

import "testing"

// The root file system's key is pinned (buildcache pins Key itself): a change makes every warm
// cache debootstrap again.
func TestRootfsKeyGolden(t *testing.T) {
	d := Debian{Suite: "bookworm", Mirror: "http://deb.debian.org/debian"}
	if got, want := rootfsKey(d, "amd64"), "93cef7403d70d89813da"; got != want {
		t.Errorf("rootfsKey = %s, want %s (a deliberate change of the root file system also changes rootfsRecipe or Packages)", got, want)
	}
}
