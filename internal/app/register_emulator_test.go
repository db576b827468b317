package app

import (
	"fmt"
	"testing"

	"github.com/nuv-dev/nuv/internal/emulator/emulatorcmd"
)

// TestEmulatorVerbsAsTheEmulatorsAnswer: the full program lists `nuv emulator` and completes its
// verbs without linking the emulators; what it lists is what nuv-emulator answers.
func TestEmulatorVerbsAsTheEmulatorsAnswer(t *testing.T) {
	want := emulatorcmd.NewCommand()
	got := emulatorCommands()
	if len(got) != 1 || got[0].Name != want.Name || got[0].Short != want.Short || got[0].Group.Name != want.Group.Name {
		t.Fatalf("emulatorCommands() = %+v; want the command %q (%q), group %q", got, want.Name, want.Short, want.Group.Name)
	}
	var gotVerbs, wantVerbs []string
	for _, v := range got[0].Group.Verbs {
		gotVerbs = append(gotVerbs, fmt.Sprintf("%s hidden=%v: %s", v.Name, v.Hidden, v.Short))
	}
	for _, v := range want.Group.Verbs {
		wantVerbs = append(wantVerbs, fmt.Sprintf("%s hidden=%v: %s", v.Name, v.Hidden, v.Short))
	}
	if len(gotVerbs) != len(wantVerbs) {
		t.Fatalf("verbs %q; want %q", gotVerbs, wantVerbs)
	}
	for i := range wantVerbs {
		if gotVerbs[i] != wantVerbs[i] {
			t.Errorf("verb %d: %q; want %q", i, gotVerbs[i], wantVerbs[i])
		}
	}
}
