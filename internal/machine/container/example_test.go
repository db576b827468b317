package container_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nuv-dev/nuv/internal/machine"
	"github.com/nuv-dev/nuv/internal/machine/container"
	"github.com/nuv-dev/nuv/internal/machine/containerrt"
	"github.com/nuv-dev/nuv/internal/machine/userdata"
)

// A machine from nuv's node image, reached over SSH with its pinned host key: the path the AWS
// emulator's instances and a self-managed cluster's bootstrap take.
func ExampleManager_Run() {
	ctx := context.Background()
	rt, err := containerrt.Detect(ctx, os.Getenv) // the runtime kind clusters use (DOCKER_HOST)
	if err != nil {
		fmt.Println(err)
		return
	}
	mgr, err := container.New(container.Runtime{Name: rt.Name, Path: rt.Path}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := mgr.EnsureNetwork(ctx, "demo-subnet-a", "10.0.1.0/24", map[string]string{"nuv.dev/cluster": "demo"}); err != nil {
		fmt.Println(err)
		return
	}
	client, _ := machine.NewKey()  // nuv's client key (machine.WriteKey keeps it, 0600)
	hostKey, _ := machine.NewKey() // the machine's own: its public half is pinned in nuv's state
	ud, err := userdata.Script(userdata.Config{Hostname: "cp-0", HostKey: hostKey, AuthorizedKeys: []string{client.AuthorizedKey("nuv")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := mgr.Run(ctx, container.Spec{Name: "i-0123456789abcdef0", Hostname: "cp-0", Image: "nuv.dev/kind-node:v1.36.3-…",
		Network: "demo-subnet-a", IP: "10.0.1.10", Labels: map[string]string{"nuv.dev/cluster": "demo"}, UserData: ud})
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := machine.DialSSH(ctx, machine.SSHConfig{Name: info.Name, Address: info.IP, Key: client, HostKey: hostKey.PublicKey()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	out, err := m.Run(ctx, "kubeadm version -o short", nil)
	fmt.Println(string(out), err)
}
