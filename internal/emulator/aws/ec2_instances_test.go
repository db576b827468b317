package aws

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"golang.org/x/crypto/ssh"
)

// memMachines is the machine backend of the unit tests: machines kept in memory, with the state
// a container runtime would have (made, running or stopped, removed; networks per subnet), so the
// emulator's states and jobs are tested without a Docker daemon. The integration test
// (TestIntegrationEC2Instances) runs the real ContainerMachines.
type memMachines struct {
	mu       sync.Mutex
	machines map[string]*memMachine
	networks map[string]string // subnet -> CIDR
	created  int
	// gate, when set, holds every Create until it is closed (or the job is cancelled).
	gate chan struct{}
	// startErr, when set, is what Start answers (the machine does not boot).
	startErr error
	// routes are the instance routes SetRoutes gave last (routesSet: it was called).
	routes    map[string][]InstanceRoute
	routesSet int
}

type memMachine struct {
	spec    MachineSpec
	running bool
}

func newMemMachines() *memMachines {
	return &memMachines{machines: map[string]*memMachine{}, networks: map[string]string{}}
}

func (m *memMachines) Image(ctx context.Context) (MachineImage, error) {
	return MachineImage{Ref: "nuv.dev/kind-node:v1.36.3-0123456789ab", KubernetesVersion: "1.36.3", Architecture: "x86_64",
		Created: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}, nil
}

func (m *memMachines) Create(ctx context.Context, s MachineSpec) error {
	m.mu.Lock()
	gate := m.gate
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.networks[s.Subnet]; ok && c != s.CIDR {
		return fmt.Errorf("network of %s has %s, not %s", s.Subnet, c, s.CIDR)
	}
	m.networks[s.Subnet] = s.CIDR
	if mm := m.machines[s.ID]; mm != nil {
		mm.running = true
		return nil
	}
	m.machines[s.ID] = &memMachine{spec: s, running: true}
	m.created++
	return nil
}

func (m *memMachines) set(id string, running bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mm := m.machines[id]
	if mm == nil {
		return fmt.Errorf("machine %s: %w", id, ErrNoMachine)
	}
	mm.running = running
	return nil
}

func (m *memMachines) Start(ctx context.Context, id string) error {
	m.mu.Lock()
	err := m.startErr
	m.mu.Unlock()
	if err != nil {
		return err
	}
	return m.set(id, true)
}
func (m *memMachines) Stop(ctx context.Context, id string) error { return m.set(id, false) }

func (m *memMachines) Remove(ctx context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.machines, id)
	return nil
}

func (m *memMachines) List(ctx context.Context) (map[string]MachineStatus, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]MachineStatus{}
	for id, mm := range m.machines {
		out[id] = MachineStatus{Running: mm.running}
	}
	return out, nil
}

func (m *memMachines) RemoveNetwork(ctx context.Context, subnet string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, mm := range m.machines {
		if mm.spec.Subnet == subnet {
			return fmt.Errorf("network of %s is used by %s", subnet, id)
		}
	}
	delete(m.networks, subnet)
	return nil
}

func (m *memMachines) SetRoutes(ctx context.Context, routes map[string][]InstanceRoute) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.routes = routes
	m.routesSet++
	return nil
}

// givenRoutes are the instance routes the network carries now.
func (m *memMachines) givenRoutes() map[string][]InstanceRoute {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.routes
}

func (m *memMachines) get(id string) (memMachine, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mm := m.machines[id]
	if mm == nil {
		return memMachine{}, false
	}
	return *mm, true
}

// ec2Net is a VPC with one subnet made for a test.
type ec2Net struct {
	vpc, subnet, sg string
}

func makeNet(t *testing.T, c *ec2.Client, vpcCIDR, subnetCIDR string) ec2Net {
	t.Helper()
	ctx := context.Background()
	vpc := must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String(vpcCIDR)})).Vpc
	sn := must(c.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String(subnetCIDR), AvailabilityZone: aws.String("us-east-1b")})).Subnet
	sg := must(c.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("machines"), Description: aws.String("machines"), VpcId: vpc.VpcId}))
	return ec2Net{aws.ToString(vpc.VpcId), aws.ToString(sn.SubnetId), aws.ToString(sg.GroupId)}
}

// machineAMI is the emulator's AMI, found the way a client finds it.
func machineAMI(t *testing.T, c *ec2.Client) string {
	t.Helper()
	imgs := must(c.DescribeImages(context.Background(), &ec2.DescribeImagesInput{Owners: []string{"self"},
		Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"nuv-machine-*"}}}})).Images
	if len(imgs) != 1 {
		t.Fatalf("DescribeImages owners=self name=nuv-machine-*: %d images, want 1", len(imgs))
	}
	return aws.ToString(imgs[0].ImageId)
}

func describeInstance(t *testing.T, c *ec2.Client, id string) ec2types.Instance {
	t.Helper()
	out := must(c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}}))
	if len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		t.Fatalf("DescribeInstances %s: %+v", id, out.Reservations)
	}
	return out.Reservations[0].Instances[0]
}

// waitState polls until instance id is in state want and returns it.
func waitState(t *testing.T, c *ec2.Client, id string, want ec2types.InstanceStateName, timeout time.Duration) ec2types.Instance {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		in := describeInstance(t, c, id)
		if in.State.Name == want {
			return in
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %s is %s after %s, want %s (reason %q, %+v)", id, in.State.Name, timeout, want, aws.ToString(in.StateTransitionReason), in.StateReason)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestEC2KeyPairs: CreateKeyPair answers a private key that matches the public key the emulator
// keeps (and only then), ImportKeyPair takes an OpenSSH public key, DescribeKeyPairs filters,
// DeleteKeyPair deletes; EC2's errors for a duplicate, a missing key and a malformed key.
func TestEC2KeyPairs(t *testing.T) {
	defer catch(t)
	e := startEmulatorWith(t, Options{Machines: newMemMachines()})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()

	for _, typ := range []ec2types.KeyType{ec2types.KeyTypeRsa, ec2types.KeyTypeEd25519} {
		name := "made-" + string(typ)
		k := must(c.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String(name), KeyType: typ, TagSpecifications: tagSpec(ec2types.ResourceTypeKeyPair, "nuv.dev/cluster", "a")}))
		signer, err := ssh.ParsePrivateKey([]byte(aws.ToString(k.KeyMaterial)))
		if err != nil {
			t.Fatalf("%s key material does not parse: %v", typ, err)
		}
		d := must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{KeyNames: []string{name}, IncludePublicKey: aws.Bool(true)})).KeyPairs
		if len(d) != 1 || d[0].KeyType != typ || aws.ToString(d[0].KeyFingerprint) != aws.ToString(k.KeyFingerprint) || aws.ToString(d[0].KeyPairId) != aws.ToString(k.KeyPairId) || len(d[0].Tags) != 1 {
			t.Fatalf("%s key pair described as %+v, made %+v", typ, d, k)
		}
		pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(aws.ToString(d[0].PublicKey)))
		if err != nil || string(pub.Marshal()) != string(signer.PublicKey().Marshal()) {
			t.Fatalf("%s public key %q does not match the private key: %v", typ, aws.ToString(d[0].PublicKey), err)
		}
		if typ == ec2types.KeyTypeRsa && !regexp.MustCompile(`^([0-9a-f]{2}:){19}[0-9a-f]{2}$`).MatchString(aws.ToString(k.KeyFingerprint)) {
			t.Fatalf("RSA fingerprint %q, want EC2's SHA-1 colon form", aws.ToString(k.KeyFingerprint))
		}
	}
	_, err := c.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String("made-rsa")})
	wantCode(t, err, "InvalidKeyPair.Duplicate")

	pk, _, _ := ed25519.GenerateKey(rand.Reader)
	pub := must(ssh.NewPublicKey(pk))
	line := ssh.MarshalAuthorizedKey(pub)
	imp := must(c.ImportKeyPair(ctx, &ec2.ImportKeyPairInput{KeyName: aws.String("imported"), PublicKeyMaterial: line}))
	if got := aws.ToString(imp.KeyFingerprint); !strings.HasPrefix(ssh.FingerprintSHA256(pub), "SHA256:"+strings.TrimRight(got, "=")) {
		t.Fatalf("imported fingerprint %q, want %s", got, ssh.FingerprintSHA256(pub))
	}
	for _, tc := range []struct {
		name     string
		material []byte
		code     string
	}{
		{"not a key", []byte("hello"), "InvalidKey.Format"},
		{"a private key", []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"), "InvalidKey.Format"},
		{"taken name", line, "InvalidKeyPair.Duplicate"},
	} {
		name := "bad"
		if tc.code == "InvalidKeyPair.Duplicate" {
			name = "imported"
		}
		_, err := c.ImportKeyPair(ctx, &ec2.ImportKeyPairInput{KeyName: aws.String(name), PublicKeyMaterial: tc.material})
		if got := apiCode(err); got != tc.code {
			t.Errorf("import %s: %v, want %s", tc.name, err, tc.code)
		}
	}

	all := must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{})).KeyPairs
	ed := must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{Filters: []ec2types.Filter{{Name: aws.String("key-type"), Values: []string{"ed25519"}}}})).KeyPairs
	tagged := must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:nuv.dev/cluster"), Values: []string{"a"}}}})).KeyPairs
	if len(all) != 3 || len(ed) != 2 || len(tagged) != 2 || all[0].PublicKey != nil {
		t.Fatalf("key pairs: all %d, ed25519 %d, tagged %d, public key without IncludePublicKey %v", len(all), len(ed), len(tagged), all[0].PublicKey)
	}
	must(c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: []string{aws.ToString(imp.KeyPairId)}, Tags: []ec2types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}))
	tags := must(c.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{{Name: aws.String("resource-type"), Values: []string{"key-pair"}}}})).Tags
	if len(tags) != 3 {
		t.Fatalf("key-pair tags: %+v", tags)
	}

	_, err = c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{KeyNames: []string{"nope"}})
	wantCode(t, err, "InvalidKeyPair.NotFound")
	must(c.DeleteKeyPair(ctx, &ec2.DeleteKeyPairInput{KeyName: aws.String("imported")}))
	must(c.DeleteKeyPair(ctx, &ec2.DeleteKeyPairInput{KeyName: aws.String("imported")})) // EC2: deleting a missing name succeeds
	_, err = c.DeleteKeyPair(ctx, &ec2.DeleteKeyPairInput{KeyPairId: aws.String("key-0123456789abcdef0")})
	wantCode(t, err, "InvalidKeyPair.NotFound")
	if n := len(must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{})).KeyPairs); n != 2 {
		t.Fatalf("%d key pairs after the delete, want 2", n)
	}
}

// TestEC2Images: the machine image is one AMI owned by the emulator's account, found by owner and
// name, with an id that stays across restarts; other owners have no images, another id is
// InvalidAMIID.NotFound.
func TestEC2Images(t *testing.T) {
	defer catch(t)
	dir := t.TempDir()
	e := startEmulatorWith(t, Options{Dir: dir, Machines: newMemMachines()})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	_, _, account, _ := e.Credentials()
	id := machineAMI(t, c)
	img := must(c.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{id}})).Images[0]
	if !regexp.MustCompile(`^ami-0[0-9a-f]{16}$`).MatchString(id) || aws.ToString(img.Name) != "nuv-machine-1.36.3-0123456789ab" ||
		aws.ToString(img.OwnerId) != account || img.Architecture != ec2types.ArchitectureValuesX8664 || img.State != ec2types.ImageStateAvailable ||
		!strings.Contains(aws.ToString(img.Description), "nuv.dev/kind-node:v1.36.3-0123456789ab") {
		t.Fatalf("machine image %+v", img)
	}
	for _, tc := range []struct {
		name string
		in   ec2.DescribeImagesInput
		n    int
		code string
	}{
		{"owner account", ec2.DescribeImagesInput{Owners: []string{account}}, 1, ""},
		{"owner amazon", ec2.DescribeImagesInput{Owners: []string{"amazon"}}, 0, ""},
		{"name of another image", ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"ubuntu-*"}}}}, 0, ""},
		{"architecture arm64", ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("architecture"), Values: []string{"arm64"}}}}, 0, ""},
		{"state available", ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"available"}}}}, 1, ""},
		{"another id", ec2.DescribeImagesInput{ImageIds: []string{"ami-0123456789abcdef0"}}, 0, "InvalidAMIID.NotFound"},
		{"not an image id", ec2.DescribeImagesInput{ImageIds: []string{"i-0123456789abcdef0"}}, 0, "InvalidAMIID.Malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer catch(t)
			out, err := c.DescribeImages(ctx, &tc.in)
			if tc.code != "" {
				wantCode(t, err, tc.code)
				return
			}
			if err != nil || len(out.Images) != tc.n {
				t.Fatalf("%v; %d images, want %d", err, len(out.Images), tc.n)
			}
		})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := startEmulatorWith(t, Options{Dir: dir, Machines: newMemMachines()})
	if id2 := machineAMI(t, ec2.NewFromConfig(e2.Cfg)); id2 != id {
		t.Fatalf("the AMI id changed across a restart: %s, then %s", id, id2)
	}
}

// TestEC2InstanceLifecycle walks two instances through EC2's states: RunInstances answers them
// pending with addresses from the subnet (after EC2's reserved ones), their machines are made
// with the user data, key and host name, they become running; DescribeInstances filters and
// groups them by reservation; stop and start; a subnet, VPC or security group with instances
// refuses deletion; terminate removes the machines, the terminated instances stay visible, and
// the deleted subnet's network is removed.
func TestEC2InstanceLifecycle(t *testing.T) {
	defer catch(t)
	mm := newMemMachines()
	e := startEmulatorWith(t, Options{Machines: mm, Delay: 200 * time.Millisecond})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	n := makeNet(t, c, "10.20.0.0/16", "10.20.1.0/24")
	ami := machineAMI(t, c)
	key := must(c.CreateKeyPair(ctx, &ec2.CreateKeyPairInput{KeyName: aws.String("ops")}))
	keyPub := must(c.DescribeKeyPairs(ctx, &ec2.DescribeKeyPairsInput{KeyNames: []string{"ops"}, IncludePublicKey: aws.Bool(true)})).KeyPairs[0].PublicKey
	ud := "#!/bin/sh\necho hello > /root/hello\n"

	t0 := time.Now()
	run := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Medium, MinCount: aws.Int32(2), MaxCount: aws.Int32(2),
		SubnetId: aws.String(n.subnet), SecurityGroupIds: []string{n.sg}, KeyName: key.KeyName, UserData: aws.String(base64.StdEncoding.EncodeToString([]byte(ud))),
		TagSpecifications: tagSpec(ec2types.ResourceTypeInstance, "nuv.dev/cluster", "a", "nuv.dev/role", "worker")}))
	if len(run.Instances) != 2 || !strings.HasPrefix(aws.ToString(run.ReservationId), "r-0") {
		t.Fatalf("RunInstances: %+v", run)
	}
	var ids []string
	for i, in := range run.Instances {
		ids = append(ids, aws.ToString(in.InstanceId))
		wantIP := fmt.Sprintf("10.20.1.%d", 4+i)
		if in.State.Name != ec2types.InstanceStateNamePending || aws.ToInt32(in.State.Code) != 0 || aws.ToString(in.PrivateIpAddress) != wantIP ||
			aws.ToString(in.PrivateDnsName) != "ip-10-20-1-"+fmt.Sprint(4+i)+".ec2.internal" || in.PublicIpAddress != nil ||
			aws.ToString(in.SubnetId) != n.subnet || aws.ToString(in.VpcId) != n.vpc || aws.ToString(in.ImageId) != ami ||
			aws.ToString(in.Placement.AvailabilityZone) != "us-east-1b" || len(in.SecurityGroups) != 1 || aws.ToString(in.SecurityGroups[0].GroupName) != "machines" ||
			aws.ToString(in.KeyName) != "ops" || aws.ToInt32(in.AmiLaunchIndex) != int32(i) || len(in.Tags) != 2 || aws.ToString(in.StateReason.Code) != "pending" {
			t.Fatalf("instance %d at launch: %+v", i, in)
		}
	}
	for _, id := range ids {
		in := waitState(t, c, id, ec2types.InstanceStateNameRunning, 10*time.Second)
		if in.StateReason != nil || aws.ToString(in.StateTransitionReason) != "" {
			t.Fatalf("running instance with a state reason: %+v %q", in.StateReason, aws.ToString(in.StateTransitionReason))
		}
	}
	if d := time.Since(t0); d < 200*time.Millisecond {
		t.Fatalf("instances running after %s, before the emulator's delay", d)
	}
	m, ok := mm.get(ids[1])
	if !ok || !m.running || string(m.spec.UserData) != ud || m.spec.IP != "10.20.1.5" || m.spec.CIDR != "10.20.1.0/24" || m.spec.Subnet != n.subnet ||
		m.spec.Hostname != "ip-10-20-1-5" || len(m.spec.AuthorizedKeys) != 1 || m.spec.AuthorizedKeys[0] != aws.ToString(keyPub) || m.spec.Tags["nuv.dev/role"] != "worker" {
		t.Fatalf("machine of %s: %+v", ids[1], m)
	}

	// A third instance in its own reservation, at an address of its choosing.
	third := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Small, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: aws.String(n.subnet), PrivateIpAddress: aws.String("10.20.1.200"), TagSpecifications: tagSpec(ec2types.ResourceTypeInstance, "nuv.dev/cluster", "b")})).Instances[0]
	ids = append(ids, aws.ToString(third.InstanceId))
	if aws.ToString(third.PrivateIpAddress) != "10.20.1.200" || aws.ToString(third.SecurityGroups[0].GroupName) != "default" {
		t.Fatalf("third instance: %+v", third)
	}
	waitState(t, c, ids[2], ec2types.InstanceStateNameRunning, 10*time.Second)
	sn := must(c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{n.subnet}})).Subnets[0]
	if aws.ToInt32(sn.AvailableIpAddressCount) != 251-3 {
		t.Fatalf("subnet with 3 instances has %d free addresses, want 248", aws.ToInt32(sn.AvailableIpAddressCount))
	}

	for _, tc := range []struct {
		name    string
		filters map[string][]string
		ids     []string
	}{
		{"tag", map[string][]string{"tag:nuv.dev/cluster": {"a"}}, ids[:2]},
		{"tag-key", map[string][]string{"tag-key": {"nuv.dev/role"}}, ids[:2]},
		{"state", map[string][]string{"instance-state-name": {"running"}}, ids},
		{"state none", map[string][]string{"instance-state-name": {"stopped"}}, nil},
		{"vpc", map[string][]string{"vpc-id": {n.vpc}}, ids},
		{"subnet and instance id", map[string][]string{"subnet-id": {n.subnet}, "instance-id": {ids[2]}}, ids[2:]},
		{"private ip", map[string][]string{"private-ip-address": {"10.20.1.4"}}, ids[:1]},
		{"instance type wildcard", map[string][]string{"instance-type": {"t3.s*"}}, ids[2:]},
	} {
		t.Run("filter "+tc.name, func(t *testing.T) {
			defer catch(t)
			var fs []ec2types.Filter
			for k, v := range tc.filters {
				fs = append(fs, ec2types.Filter{Name: aws.String(k), Values: v})
			}
			out := must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: fs}))
			var got []string
			for _, r := range out.Reservations {
				if len(r.Instances) == 0 {
					t.Fatalf("an empty reservation %s", aws.ToString(r.ReservationId))
				}
				for _, in := range r.Instances {
					got = append(got, aws.ToString(in.InstanceId))
				}
			}
			sort.Strings(got)
			want := append([]string(nil), tc.ids...)
			sort.Strings(want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("instances %v, want %v", got, want)
			}
		})
	}
	if rs := must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})).Reservations; len(rs) != 2 || len(rs[0].Instances) != 2 || aws.ToString(rs[0].ReservationId) != aws.ToString(run.ReservationId) {
		t.Fatalf("reservations: %+v", rs)
	}
	st := must(c.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: ids[:1]})).InstanceStatuses
	if len(st) != 1 || st[0].InstanceStatus.Status != ec2types.SummaryStatusOk || st[0].SystemStatus.Status != ec2types.SummaryStatusOk {
		t.Fatalf("status of a running instance: %+v", st)
	}

	// Stop and start.
	stop := must(c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[:1]})).StoppingInstances[0]
	if stop.PreviousState.Name != ec2types.InstanceStateNameRunning || stop.CurrentState.Name != ec2types.InstanceStateNameStopping {
		t.Fatalf("stop: %+v", stop)
	}
	stopped := waitState(t, c, ids[0], ec2types.InstanceStateNameStopped, 10*time.Second)
	if !strings.HasPrefix(aws.ToString(stopped.StateTransitionReason), "User initiated (") || aws.ToString(stopped.StateReason.Code) != "Client.UserInitiatedShutdown" ||
		aws.ToString(stopped.PrivateIpAddress) != "10.20.1.4" {
		t.Fatalf("stopped instance: %+v", stopped)
	}
	if m, _ := mm.get(ids[0]); m.running {
		t.Fatal("the machine of a stopped instance runs")
	}
	if st := must(c.DescribeInstanceStatus(ctx, &ec2.DescribeInstanceStatusInput{InstanceIds: ids[:1]})).InstanceStatuses; len(st) != 0 {
		t.Fatalf("status of a stopped instance without IncludeAllInstances: %+v", st)
	}
	_, err := c.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}})
	wantCode(t, err, "InvalidInstanceID.NotFound")
	must(c.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: ids[:1]}))
	waitState(t, c, ids[0], ec2types.InstanceStateNameRunning, 10*time.Second)
	if m, _ := mm.get(ids[0]); !m.running || mm.created != 3 {
		t.Fatalf("after start: machine running %v, %d machines made (want 3: a start makes none)", m.running, mm.created)
	}

	// Deletion refused while instances live.
	_, err = c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(n.subnet)})
	if msg := wantCode(t, err, "DependencyViolation"); !strings.Contains(msg, ids[0]) {
		t.Fatalf("subnet deletion refused with %q, want the instances named", msg)
	}
	_, err = c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(n.sg)})
	wantCode(t, err, "DependencyViolation")
	_, err = c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(n.vpc)})
	wantCode(t, err, "DependencyViolation")

	// Tags on instances.
	must(c.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ids[2:], Tags: []ec2types.Tag{{Key: aws.String("Name"), Value: aws.String("third")}}}))
	tags := must(c.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{{Name: aws.String("resource-id"), Values: ids[2:]}}})).Tags
	if len(tags) != 2 || tags[0].ResourceType != ec2types.ResourceTypeInstance {
		t.Fatalf("tags of the third instance: %+v", tags)
	}

	// Terminate: shutting-down, then terminated; the machines are gone; the instances stay visible.
	term := must(c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids})).TerminatingInstances
	if len(term) != 3 || term[0].CurrentState.Name != ec2types.InstanceStateNameShuttingDown {
		t.Fatalf("terminate: %+v", term)
	}
	for _, id := range ids {
		in := waitState(t, c, id, ec2types.InstanceStateNameTerminated, 10*time.Second)
		if aws.ToInt32(in.State.Code) != 48 || in.PrivateIpAddress != nil || aws.ToString(in.StateReason.Code) != "Client.UserInitiatedShutdown" {
			t.Fatalf("terminated instance: %+v", in)
		}
		if _, ok := mm.get(id); ok {
			t.Fatalf("the machine of terminated instance %s remains", id)
		}
	}
	must(c.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ids[:1]})) // again: no error, as on EC2
	_, err = c.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: ids[:1]})
	wantCode(t, err, "IncorrectInstanceState")
	_, err = c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[:1]})
	wantCode(t, err, "IncorrectInstanceState")
	if sn := must(c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{n.subnet}})).Subnets[0]; aws.ToInt32(sn.AvailableIpAddressCount) != 251 {
		t.Fatalf("the addresses of terminated instances are not free again: %d", aws.ToInt32(sn.AvailableIpAddressCount))
	}
	must(c.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: aws.String(n.sg)}))
	must(c.DeleteSubnet(ctx, &ec2.DeleteSubnetInput{SubnetId: aws.String(n.subnet)}))
	must(c.DeleteVpc(ctx, &ec2.DeleteVpcInput{VpcId: aws.String(n.vpc)}))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mm.mu.Lock()
		left := len(mm.networks)
		mm.mu.Unlock()
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the machine network of the deleted subnet remains")
		}
	}
	if n := len(must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})).Reservations); n != 2 {
		t.Fatalf("terminated instances vanished at once: %d reservations, want 2", n)
	}
	// An hour later they are gone (the clock moved by making them older).
	e.Mu.Lock()
	for _, in := range e.St.EC2.Instances {
		old := in.TerminatedAt.Add(-terminatedVisible - time.Second)
		in.TerminatedAt = &old
	}
	e.Mu.Unlock()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if n := len(must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})).Reservations); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("terminated instances still visible an hour after their termination")
		}
	}
	_, err = c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids[:1]})
	wantCode(t, err, "InvalidInstanceID.NotFound")
}

// TestEC2RunInstancesRefusals: what EC2 refuses, it refuses with its codes, launching nothing.
func TestEC2RunInstancesRefusals(t *testing.T) {
	defer catch(t)
	mm := newMemMachines()
	e := startEmulatorWith(t, Options{Machines: mm})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	n := makeNet(t, c, "10.30.0.0/16", "10.30.1.0/28")
	other := makeNet(t, c, "10.31.0.0/16", "10.31.1.0/24")
	ami := machineAMI(t, c)
	must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: aws.String(n.subnet), PrivateIpAddress: aws.String("10.30.1.9")}))
	base := func() *ec2.RunInstancesInput {
		return &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(n.subnet)}
	}
	for _, tc := range []struct {
		name   string
		change func(in *ec2.RunInstancesInput)
		code   string
	}{
		{"unknown image", func(in *ec2.RunInstancesInput) { in.ImageId = aws.String("ami-0123456789abcdef0") }, "InvalidAMIID.NotFound"},
		{"not an image id", func(in *ec2.RunInstancesInput) { in.ImageId = aws.String("vpc-0123") }, "InvalidAMIID.Malformed"},
		{"unknown instance type", func(in *ec2.RunInstancesInput) { in.InstanceType = "t9.huge" }, "InvalidParameterValue"},
		{"arm64 instance type", func(in *ec2.RunInstancesInput) { in.InstanceType = ec2types.InstanceTypeM7gLarge }, "InvalidParameterValue"},
		{"no subnet", func(in *ec2.RunInstancesInput) { in.SubnetId = nil }, "VPCIdNotSpecified"},
		{"unknown subnet", func(in *ec2.RunInstancesInput) { in.SubnetId = aws.String("subnet-0123456789abcdef0") }, "InvalidSubnetID.NotFound"},
		{"unknown security group", func(in *ec2.RunInstancesInput) { in.SecurityGroupIds = []string{"sg-0123456789abcdef0"} }, "InvalidGroup.NotFound"},
		{"security group of another VPC", func(in *ec2.RunInstancesInput) { in.SecurityGroupIds = []string{other.sg} }, "InvalidParameter"},
		{"unknown key pair", func(in *ec2.RunInstancesInput) { in.KeyName = aws.String("nope") }, "InvalidKeyPair.NotFound"},
		{"user data not base64", func(in *ec2.RunInstancesInput) { in.UserData = aws.String("#!/bin/sh") }, "InvalidParameterValue"},
		{"user data too long", func(in *ec2.RunInstancesInput) {
			in.UserData = aws.String(base64.StdEncoding.EncodeToString(make([]byte, 16<<10+1)))
		}, "InvalidParameterValue"},
		{"address outside the subnet", func(in *ec2.RunInstancesInput) { in.PrivateIpAddress = aws.String("10.30.2.5") }, "InvalidParameterValue"},
		{"reserved address", func(in *ec2.RunInstancesInput) { in.PrivateIpAddress = aws.String("10.30.1.2") }, "InvalidParameterValue"},
		{"broadcast address", func(in *ec2.RunInstancesInput) { in.PrivateIpAddress = aws.String("10.30.1.15") }, "InvalidParameterValue"},
		{"address in use", func(in *ec2.RunInstancesInput) { in.PrivateIpAddress = aws.String("10.30.1.9") }, "InvalidIPAddress.InUse"},
		{"address for two", func(in *ec2.RunInstancesInput) {
			in.PrivateIpAddress, in.MaxCount = aws.String("10.30.1.10"), aws.Int32(2)
		}, "InvalidParameterCombination"},
		{"min above max", func(in *ec2.RunInstancesInput) { in.MinCount, in.MaxCount = aws.Int32(3), aws.Int32(2) }, "InvalidParameterValue"},
		{"zero count", func(in *ec2.RunInstancesInput) { in.MinCount = aws.Int32(0) }, "InvalidParameterValue"},
		{"more than the subnet holds", func(in *ec2.RunInstancesInput) { in.MinCount, in.MaxCount = aws.Int32(11), aws.Int32(11) }, "InsufficientFreeAddressesInSubnet"},
		{"more than the limit", func(in *ec2.RunInstancesInput) { in.MinCount, in.MaxCount = aws.Int32(40), aws.Int32(40) }, "InstanceLimitExceeded"},
		{"tags for a VPC", func(in *ec2.RunInstancesInput) { in.TagSpecifications = tagSpec(ec2types.ResourceTypeVpc, "a", "b") }, "InvalidParameterValue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.change(in)
			_, err := c.RunInstances(ctx, in)
			wantCode(t, err, tc.code)
		})
	}
	if rs := must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})).Reservations; len(rs) != 1 {
		t.Fatalf("refused launches made instances: %d reservations", len(rs))
	}
	// A /28 holds 11 instances: 16 addresses less EC2's 5; 1 is taken. MaxCount above what is free
	// launches what fits when MinCount does.
	out := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(1), MaxCount: aws.Int32(20), SubnetId: aws.String(n.subnet)}))
	if len(out.Instances) != 10 {
		t.Fatalf("MaxCount 20 in a subnet with 10 free addresses launched %d", len(out.Instances))
	}

	// ClientToken: the same call answers the same reservation, another call with it is refused.
	in := base()
	in.SubnetId, in.ClientToken = aws.String(other.subnet), aws.String("token-1")
	r1 := must(c.RunInstances(ctx, in))
	r2 := must(c.RunInstances(ctx, in))
	if aws.ToString(r1.ReservationId) != aws.ToString(r2.ReservationId) || aws.ToString(r1.Instances[0].InstanceId) != aws.ToString(r2.Instances[0].InstanceId) ||
		aws.ToString(r2.Instances[0].ClientToken) != "token-1" {
		t.Fatalf("a retried RunInstances made another reservation: %s, %s", aws.ToString(r1.ReservationId), aws.ToString(r2.ReservationId))
	}
	in.InstanceType = ec2types.InstanceTypeT3Small
	_, err := c.RunInstances(ctx, in)
	wantCode(t, err, "IdempotentParameterMismatch")
	byToken := must(c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{{Name: aws.String("client-token"), Values: []string{"token-1"}}}})).Reservations
	if len(byToken) != 1 || len(byToken[0].Instances) != 1 {
		t.Fatalf("instances of token-1: %+v", byToken)
	}
}

// TestEC2InstanceFaults: the injected faults of instances: a launch that fails (pending, then
// terminated with Server.InternalError, no machine left), the next instance terminated some
// seconds after its launch, and a named running instance terminated; a fault of another kind on
// RunInstances still fails the call; a malformed instance fault is refused.
func TestEC2InstanceFaults(t *testing.T) {
	defer catch(t)
	mm := newMemMachines()
	e := startEmulatorWith(t, Options{Machines: mm, Delay: 100 * time.Millisecond})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	n := makeNet(t, c, "10.40.0.0/16", "10.40.1.0/24")
	ami := machineAMI(t, c)
	launch := func() string {
		out := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(n.subnet)}))
		return aws.ToString(out.Instances[0].InstanceId)
	}
	post := func(body string, want int) {
		t.Helper()
		resp := must(e.admin("POST", body))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("POST /_nuv/faults %s: %d %s, want %d", body, resp.StatusCode, b, want)
		}
	}
	for _, bad := range []string{
		`{"operation":"ec2:CreateVpc","kind":"launch-failure"}`,
		`{"operation":"eks:*","kind":"terminate-after","seconds":1}`,
		`{"operation":"ec2:RunInstances","kind":"terminate-after","seconds":-1}`,
	} {
		post(bad, http.StatusBadRequest)
	}

	post(`{"operation":"ec2:RunInstances","kind":"launch-failure","count":1}`, http.StatusOK)
	failed := launch()
	in := waitState(t, c, failed, ec2types.InstanceStateNameTerminated, 10*time.Second)
	if aws.ToString(in.StateReason.Code) != "Server.InternalError" || aws.ToString(in.StateReason.Message) != "Server.InternalError: Internal error on launch (nuv emulator: injected fault launch-failure)" {
		t.Fatalf("instance that failed to launch: %+v %+v", in.State, in.StateReason)
	}
	if _, ok := mm.get(failed); ok {
		t.Fatal("the failed launch left a machine")
	}
	if ok := launch(); ok != "" {
		waitState(t, c, ok, ec2types.InstanceStateNameRunning, 10*time.Second) // the fault was spent
	}

	post(`{"operation":"ec2:RunInstances","kind":"terminate-after","seconds":0.5,"count":1}`, http.StatusOK)
	lost := launch()
	waitState(t, c, lost, ec2types.InstanceStateNameRunning, 10*time.Second)
	in = waitState(t, c, lost, ec2types.InstanceStateNameTerminated, 10*time.Second)
	if aws.ToString(in.StateReason.Code) != "Server.InternalError" || aws.ToString(in.StateTransitionReason) != "Server.InternalError" {
		t.Fatalf("instance lost by the fault: %+v %q", in.StateReason, aws.ToString(in.StateTransitionReason))
	}

	named := launch()
	waitState(t, c, named, ec2types.InstanceStateNameRunning, 10*time.Second)
	post(`{"operation":"ec2:RunInstances","kind":"terminate-after","resource":"`+named+`"}`, http.StatusOK)
	waitState(t, c, named, ec2types.InstanceStateNameTerminated, 10*time.Second)
	if _, ok := mm.get(named); ok {
		t.Fatal("the machine of the terminated instance remains")
	}

	// A start that fails leaves the instance stopped, saying why; the next start works.
	again := launch()
	waitState(t, c, again, ec2types.InstanceStateNameRunning, 10*time.Second)
	must(c.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{again}}))
	waitState(t, c, again, ec2types.InstanceStateNameStopped, 10*time.Second)
	mm.mu.Lock()
	mm.startErr = fmt.Errorf("machine %s did not boot", again)
	mm.mu.Unlock()
	must(c.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{again}}))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		in = describeInstance(t, c, again)
		if in.State.Name == ec2types.InstanceStateNameStopped && in.StateReason != nil && strings.Contains(aws.ToString(in.StateReason.Message), "did not boot") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance whose start failed: %s %+v", in.State.Name, in.StateReason)
		}
	}
	mm.mu.Lock()
	mm.startErr = nil
	mm.mu.Unlock()
	must(c.StartInstances(ctx, &ec2.StartInstancesInput{InstanceIds: []string{again}}))
	waitState(t, c, again, ec2types.InstanceStateNameRunning, 10*time.Second)

	post(`{"operation":"ec2:RunInstances","kind":"throttle","count":1}`, http.StatusOK)
	c1 := ec2.NewFromConfig(e.Cfg, func(o *ec2.Options) { o.RetryMaxAttempts = 1 })
	_, err := c1.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(n.subnet)})
	wantCode(t, err, "RequestLimitExceeded")
}

// TestEC2InstancesAcrossRestart: the state survives a restart of the emulator: a launch cut short
// by the restart runs again (one machine, not two), running instances are matched with their
// machines; a machine removed behind the emulator's back makes its instance terminated with a
// reason, one stopped behind its back makes it stopped.
func TestEC2InstancesAcrossRestart(t *testing.T) {
	defer catch(t)
	dir := t.TempDir()
	mm := newMemMachines()
	e := startEmulatorWith(t, Options{Dir: dir, Machines: mm})
	c := ec2.NewFromConfig(e.Cfg)
	ctx := context.Background()
	n := makeNet(t, c, "10.50.0.0/16", "10.50.1.0/24")
	ami := machineAMI(t, c)
	out := must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(3), MaxCount: aws.Int32(3), SubnetId: aws.String(n.subnet)}))
	var ids []string
	for _, in := range out.Instances {
		ids = append(ids, aws.ToString(in.InstanceId))
	}
	for _, id := range ids {
		waitState(t, c, id, ec2types.InstanceStateNameRunning, 10*time.Second)
	}
	mm.mu.Lock()
	mm.gate = make(chan struct{})
	mm.mu.Unlock()
	pending := aws.ToString(must(c.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String(ami), InstanceType: ec2types.InstanceTypeT3Micro, MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(n.subnet)})).Instances[0].InstanceId)
	time.Sleep(300 * time.Millisecond) // its launch job waits at the gate
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// Behind the emulator's back: one machine removed, one stopped.
	must(0, mm.Remove(ctx, ids[1]))
	must(0, mm.Stop(ctx, ids[2]))
	mm.mu.Lock()
	close(mm.gate)
	mm.gate = nil
	mm.mu.Unlock()
	must(0, mm.Create(ctx, MachineSpec{ID: "i-0aaaaaaaaaaaaaaa0", Subnet: n.subnet, CIDR: "10.50.1.0/24"})) // no instance of the emulator's

	e2 := startEmulatorWith(t, Options{Dir: dir, Machines: mm})
	c2 := ec2.NewFromConfig(e2.Cfg)
	waitState(t, c2, pending, ec2types.InstanceStateNameRunning, 10*time.Second)
	gone := waitState(t, c2, ids[1], ec2types.InstanceStateNameTerminated, 10*time.Second)
	if aws.ToString(gone.StateReason.Code) != "Server.InternalError" || !strings.Contains(aws.ToString(gone.StateReason.Message), "machine is gone") {
		t.Fatalf("instance whose machine vanished: %+v", gone.StateReason)
	}
	stopped := waitState(t, c2, ids[2], ec2types.InstanceStateNameStopped, 10*time.Second)
	if aws.ToString(stopped.StateReason.Code) != "Client.InstanceInitiatedShutdown" {
		t.Fatalf("instance whose machine stopped: %+v", stopped.StateReason)
	}
	if in := describeInstance(t, c2, ids[0]); in.State.Name != ec2types.InstanceStateNameRunning {
		t.Fatalf("instance with its machine is %s after the restart", in.State.Name)
	}
	if mm.created != 5 {
		t.Fatalf("%d machines made, want 5 (the interrupted launch made its machine once)", mm.created)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, ok := mm.get("i-0aaaaaaaaaaaaaaa0"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a machine of the emulator's without an instance was not removed")
		}
	}
	// Stopping an instance whose machine is gone terminates it.
	must(0, mm.Remove(ctx, ids[0]))
	must(c2.StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: ids[:1]}))
	if in := waitState(t, c2, ids[0], ec2types.InstanceStateNameTerminated, 10*time.Second); !strings.Contains(aws.ToString(in.StateReason.Message), "machine is gone") {
		t.Fatalf("stopped instance without a machine: %+v", in.StateReason)
	}
}
