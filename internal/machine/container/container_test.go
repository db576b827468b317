package container

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestNew refuses runtimes whose flags this package does not use.
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		rt   Runtime
		want string
	}{
		{Runtime{Name: "podman", Path: "/usr/bin/podman"}, `the container runtime found is "podman"`},
		{Runtime{Name: "docker"}, "path of the docker program is required"},
	} {
		if _, err := New(tc.rt, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.rt, err, tc.want)
		}
	}
	if _, err := New(Runtime{Name: "docker", Path: "/usr/bin/docker"}, nil); err != nil {
		t.Error(err)
	}
}

// TestRefusedBeforeTheRuntime: bad specs and subnets are refused with the value named, before
// anything runs (the runtime here does not exist).
func TestRefusedBeforeTheRuntime(t *testing.T) {
	m, err := New(Runtime{Name: "docker", Path: "/nonexistent/docker"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		do   func() error
		want string
	}{
		{"subnet", func() error { return m.EnsureNetwork(ctx, "n", "10.0.1.0", nil) }, `subnet "10.0.1.0" is not an IPv4 CIDR`},
		{"subnet host bits", func() error { return m.EnsureNetwork(ctx, "n", "10.0.1.5/24", nil) }, "is not an IPv4 CIDR of a network"},
		{"subnet v6", func() error { return m.EnsureNetwork(ctx, "n", "fd00::/64", nil) }, "is not an IPv4 CIDR"},
		{"subnet tiny", func() error { return m.EnsureNetwork(ctx, "n", "10.0.1.0/30", nil) }, "at most /29"},
		{"no image", func() error { _, err := m.Run(ctx, Spec{Name: "m", Network: "n", IP: "10.0.1.4"}); return err }, "name, image and network are required"},
		{"ip", func() error {
			_, err := m.Run(ctx, Spec{Name: "m", Image: "i", Network: "n", IP: "10.0.1"})
			return err
		}, `address "10.0.1" is not an IPv4 address`},
		{"label", func() error {
			_, err := m.Run(ctx, Spec{Name: "m", Image: "i", Network: "n", IP: "10.0.1.4", Labels: map[string]string{"a=b": "c"}})
			return err
		}, `label "a=b"="c"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.do(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestLabelArgs(t *testing.T) {
	got, err := labelArgs(map[string]string{"b": "2", "a": "1", "dev.nuv.machine": "true"})
	want := []string{"--label", "a=1", "--label", "b=2", "--label", "dev.nuv.machine=true"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("labelArgs = %v %v, want %v (sorted)", got, err, want)
	}
	for _, bad := range []map[string]string{{"": "x"}, {"k": "a\nb"}} {
		if _, err := labelArgs(bad); err == nil {
			t.Errorf("labelArgs(%v) accepted", bad)
		}
	}
}

func TestErrors(t *testing.T) {
	e := &UserDataError{Machine: "i-1", ExitCode: 3, Tail: "step two failed\n"}
	if want := "user data of machine i-1 exited with code 3 (its output: /var/log/cloud-init-output.log inside it):\nstep two failed"; e.Error() != want {
		t.Errorf("%q, want %q", e.Error(), want)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&dockerError{args: []string{"inspect"}, msg: "Error: No such container: x"}, true},
		{&dockerError{args: []string{"network", "rm"}, msg: "Error response from daemon: network n not found"}, true},
		{&dockerError{args: []string{"rm"}, msg: "did not receive an exit event"}, false},
		{errors.New("No such container"), false},
	} {
		if got := noSuch(tc.err); got != tc.want {
			t.Errorf("noSuch(%v) = %v", tc.err, got)
		}
	}
}
