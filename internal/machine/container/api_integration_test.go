package container_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	. "github.com/nuv-dev/nuv/internal/machine/container"
)

// TestIntegrationAPIMatchesCLI asks the shared Docker daemon the same questions through the
// Engine API and through the docker CLI, on the same plain containers (nuv's node image running
// sleep, labelled as machines, on a machines' network): List, Inspect (one, several with one
// gone, a missing one), a network's subnets, bridge and labels, and commands run without stdin
// (output, stderr, exit codes, a large output, a missing program, a stopped and a missing
// container, user data that fails) must give the same answers.
func TestIntegrationAPIMatchesCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: runs containers on the Docker daemon")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rt := testRuntime(ctx, t)
	image := testImage(ctx, t, rt, cli.Quiet())
	api, err := New(rt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !api.UsesAPI() {
		t.Fatalf("the daemon's endpoint (DOCKER_HOST=%q) is not a unix socket: this test compares the API with the CLI", os.Getenv("DOCKER_HOST"))
	}
	cliOnly, err := New(rt, nil)
	if err != nil {
		t.Fatal(err)
	}
	cliOnly.UseCLIOnly()
	both := []struct {
		name string
		m    *Manager
	}{{"api", api}, {"cli", cliOnly}}

	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	run := hex.EncodeToString(b)
	labels := map[string]string{"dev.nuv.test-run": run}
	network := "nuv-apitest-" + run
	subnet := fmt.Sprintf("10.%d.%d.0/24", 10+int(b[0])%200, b[1])
	docker := dockerCLI(t, ctx, rt.Path)
	names := []string{"nuv-apitest-" + run + "-a", "nuv-apitest-" + run + "-b", "nuv-apitest-" + run + "-stopped"}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, n := range names {
			if err := cliOnly.Remove(ctx, n); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
		if err := cliOnly.RemoveNetwork(ctx, network); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := api.EnsureNetwork(ctx, network, subnet, labels); err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		verb := []string{"run", "--detach"}
		if i == 2 {
			verb = []string{"create"}
		}
		ip := strings.TrimSuffix(subnet, "0/24") + fmt.Sprint(10+i)
		docker(append(verb, "--name", n, "--hostname", "h"+fmt.Sprint(i), "--network", network, "--ip", ip,
			"--label", MachineLabel+"=true", "--label", "dev.nuv.test-run="+run, "--volume", "/var",
			"--entrypoint", "sleep", image, "infinity")...)
	}

	// containers and networks
	var lists [2][]Info
	for i, m := range both {
		if lists[i], err = m.m.List(ctx, labels); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
	}
	if len(lists[0]) != 3 || !reflect.DeepEqual(lists[0], lists[1]) {
		t.Fatalf("List: the API says\n%+v\nthe CLI says\n%+v", lists[0], lists[1])
	}
	a := lists[0][0]
	if a.Name != names[0] || a.Hostname != "h0" || !a.Running || a.Pid == 0 || a.Network != network ||
		a.IP != strings.TrimSuffix(subnet, "0/24")+"10" || len(a.Volumes) != 1 || a.Created.IsZero() || len(a.ID) != 64 ||
		a.Labels["dev.nuv.test-run"] != run || a.Image != image {
		t.Errorf("List's first machine is not what was run: %+v", a)
	}
	if s := lists[0][2]; s.State != "created" || s.Running || s.Pid != 0 {
		t.Errorf("the created machine: %+v", s)
	}
	if l, err := api.List(ctx, map[string]string{"dev.nuv.test-run": run + "-none"}); err != nil || len(l) != 0 {
		t.Errorf("List with a label no machine has: %v, %v", l, err)
	}
	gone := "nuv-apitest-" + run + "-gone"
	for i, m := range both {
		info, err := m.m.Inspect(ctx, names[1])
		if err != nil || !reflect.DeepEqual(info, lists[i][1]) {
			t.Errorf("%s: Inspect %s = %+v, %v; List said %+v", m.name, names[1], info, err, lists[i][1])
		}
		several, err := m.m.InspectSeveral(ctx, names[0], gone, names[2])
		if err != nil || len(several) != 2 || !reflect.DeepEqual(several[0], lists[i][0]) || !reflect.DeepEqual(several[1], lists[i][2]) {
			t.Errorf("%s: inspect of two machines and a missing one = %+v, %v", m.name, several, err)
		}
		if _, err := m.m.Inspect(ctx, gone); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), gone) {
			t.Errorf("%s: Inspect of a missing machine: %v, want ErrNotFound naming it", m.name, err)
		}
		if _, err := m.m.NetworkSubnets(ctx, network+"-gone"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: subnets of a missing network: %v, want ErrNotFound", m.name, err)
		}
		if _, err := m.m.Bridge(ctx, network+"-gone"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: bridge of a missing network: %v, want ErrNotFound", m.name, err)
		}
	}
	type netAnswers struct {
		Subnets []string
		Bridge  string
		Nets    []NetworkInfo
		Users   []string
	}
	var nets [2]netAnswers
	for i, m := range both {
		n := &nets[i]
		if n.Subnets, err = m.m.NetworkSubnets(ctx, network); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if n.Bridge, err = m.m.Bridge(ctx, network); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if n.Nets, err = m.m.Networks(ctx, labels); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		n.Users = m.m.NetworkUsers(ctx, network)
		sort.Strings(n.Users)
	}
	if !reflect.DeepEqual(nets[0], nets[1]) || len(nets[0].Nets) != 1 || nets[0].Nets[0].Labels[NetworkLabel] != "true" ||
		!reflect.DeepEqual(nets[0].Subnets, []string{subnet}) || !strings.HasPrefix(nets[0].Bridge, "br-") || len(nets[0].Users) != 3 {
		t.Fatalf("networks: the API says\n%+v\nthe CLI says\n%+v", nets[0], nets[1])
	}
	if err := api.EnsureNetwork(ctx, network, subnet, labels); err != nil {
		t.Errorf("EnsureNetwork of an existing network: %v", err)
	}

	// commands
	type answer struct {
		Out  string
		Code int
		Msg  string
		Err  bool
	}
	ask := func(m *Manager, name string, args ...string) answer {
		out, err := m.ExecNoStdin(ctx, name, args...)
		a := answer{Out: string(out), Err: err != nil}
		a.Code, a.Msg, _ = ExitOf(err)
		return a
	}
	big := strings.Repeat("0123456789abcdef", 20000)
	for _, tc := range []struct {
		name    string
		machine string
		args    []string
		want    answer
	}{
		{"output", names[0], []string{"sh", "-c", "echo out; echo err >&2"}, answer{Out: "out\n"}},
		{"exit code", names[0], []string{"sh", "-c", "echo out; echo err1 >&2; echo err2 >&2; exit 3"}, answer{Out: "out\n", Code: 3, Msg: "err1\nerr2", Err: true}},
		{"silent failure", names[0], []string{"false"}, answer{Code: 1, Msg: "", Err: true}},
		{"large output", names[0], []string{"sh", "-c", "for i in $(seq 20000); do printf 0123456789abcdef; printf e >&2; done"}, answer{Out: big, Code: 0}},
	} {
		for _, m := range both {
			got := ask(m.m, tc.machine, tc.args...)
			if tc.want.Msg == "" && got.Code != 0 {
				got.Msg = "" // the CLI's message for a silent exit is its own
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %s: got %+v, want %+v", tc.name, m.name, got, tc.want)
			}
		}
	}
	// a program that is not there: the daemon's own words on stdout from both, code 126 (runc's)
	// or 127
	if a, c := ask(api, names[0], "no-such-program"), ask(cliOnly, names[0], "no-such-program"); !reflect.DeepEqual(a, c) ||
		a.Code != 126 && a.Code != 127 || !strings.Contains(a.Out, "no-such-program") {
		t.Errorf("missing program: the API says %+v, the CLI %+v", a, c)
	}
	// what the two paths say differently, but alike in what callers read: the code, not-found
	for _, tc := range []struct {
		name    string
		machine string
		args    []string
		check   func(answer, error) bool
	}{
		{"stopped machine", names[2], []string{"true"}, func(a answer, err error) bool { return err != nil && a.Out == "" && !NoSuch(err) }},
		{"missing machine", gone, []string{"true"}, func(a answer, err error) bool { return NoSuch(err) && a.Out == "" }},
	} {
		for _, m := range both {
			out, err := m.m.ExecNoStdin(ctx, tc.machine, tc.args...)
			a := answer{Out: string(out), Err: err != nil}
			a.Code, _, _ = ExitOf(err)
			if !tc.check(a, err) {
				t.Errorf("%s: %s: %+v, %v", tc.name, m.name, a, err)
			}
		}
	}

	// user data that fails: the same *UserDataError from both
	for i, m := range both {
		if err := m.m.StoreUserData(ctx, names[i], []byte("#!/bin/sh\necho from-user-data\nexit 4\n")); err != nil {
			t.Fatal(err)
		}
		err := m.m.RunUserData(ctx, names[i])
		var ue *UserDataError
		if !errors.As(err, &ue) || ue.ExitCode != 4 || ue.Machine != names[i] || !strings.Contains(ue.Tail, "from-user-data") {
			t.Errorf("%s: failing user data: %v, want a UserDataError with code 4 and its output", m.name, err)
		}
		if err := m.m.RunUserData(ctx, names[i]); err != nil {
			t.Errorf("%s: user data ran again: %v", m.name, err)
		}
	}

	// removal seen alike
	if err := api.Remove(ctx, names[1]); err != nil {
		t.Fatal(err)
	}
	for _, m := range both {
		if l, err := m.m.List(ctx, labels); err != nil || len(l) != 2 {
			t.Errorf("%s: List after a removal: %d machines, %v", m.name, len(l), err)
		}
	}
}
