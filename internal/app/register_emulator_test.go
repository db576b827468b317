package app

import (
	"fmt"
	"strings"
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

// TestEmulatorChildEnv: run as a child (a test's or completion's environment), nuv-emulator gets
// the process's environment with the variables it reads as the command's Getenv answers them.
func TestEmulatorChildEnv(t *testing.T) {
	t.Setenv("NUV_EMULATOR_PORT", "6000")
	t.Setenv("NUV_HOME", "/process/home")
	t.Setenv("NUV_APP_TEST_UNRELATED", "kept")
	answers := map[string]string{"NUV_HOME": "/test/home", "NUV_EMULATOR_DELAY": "0s"}
	got := map[string][]string{}
	for _, kv := range childEnv(func(k string) string { return answers[k] }, []string{"EXTRA=1"}) {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = append(got[k], v)
	}
	for _, tc := range []struct {
		key  string
		want []string
	}{
		{"NUV_HOME", []string{"/test/home"}},         // Getenv's answer, once
		{"NUV_EMULATOR_DELAY", []string{"0s"}},       // set by Getenv alone
		{"NUV_EMULATOR_PORT", nil},                   // the process's, which Getenv does not answer
		{"NUV_APP_TEST_UNRELATED", []string{"kept"}}, // not the emulators': the process's
		{"EXTRA", []string{"1"}},
	} {
		if strings.Join(got[tc.key], ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s = %q, want %q", tc.key, got[tc.key], tc.want)
		}
	}
}
