package awsmachines

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/machine"
	"github.com/nuv-dev/nuv/internal/machine/userdata"
)

// TagHostKey holds an instance's SSH host key (its public half, an authorized_keys line): nuv made
// the key and put it in the machine's user data, and pins it when it connects.
const TagHostKey = "nuv.dev/host-key"

// sshKeyPath is nuv's SSH key for the machines of cluster name, under nuv's home (0600; its public
// half is the cluster's key pair).
func (p *Provider) sshKeyPath(name string) string {
	return filepath.Join(p.Home, "aws", name, "id_ed25519")
}

// EnvSSHKey, when set, holds nuv's SSH key for the machines (OpenSSH private-key format) in place
// of the one under nuv's home: the Terraform module's bootstrap step passes the key Terraform made.
// Loading images into the machines (publish.Machines) reads it too.
const EnvSSHKey = machine.EnvSSHKey

// clientKey reads nuv's SSH key of cluster name (EnvSSHKey's when set), making it when create is
// set and there is none.
func (p *Provider) clientKey(name string, create bool) (*machine.Key, error) {
	if v := p.getenv(EnvSSHKey); v != "" {
		k, err := machine.ParseKey([]byte(v))
		if err != nil {
			// the message names the variable, never its value
			return nil, fmt.Errorf("nuv's SSH key of cluster %s from $%s: not an ed25519 private key in OpenSSH's format", name, EnvSSHKey)
		}
		return k, nil
	}
	path := p.sshKeyPath(name)
	k, err := machine.ReadKey(path)
	if err == nil {
		return k, nil
	}
	if !errors.Is(err, os.ErrNotExist) || !create {
		return nil, fmt.Errorf("nuv's SSH key of cluster %s (%s): %w; it is made by the apply that created the cluster, on that machine", name, path, err)
	}
	if p.Home == "" {
		return nil, errors.New("nuv's home is not set: the SSH key of the machines has nowhere to go")
	}
	k, err = machine.NewKey()
	if err != nil {
		return nil, err
	}
	if err := machine.WriteKey(path, k, "nuv@"+name); err != nil {
		return nil, err
	}
	return k, nil
}

// machineSG makes a role's security group and brings its ingress rules to the plan's: each port
// range and source is one permission; rules nuv did not ask for are revoked.
func (x *exec) machineSG(ctx context.Context, _ cluster.Change) error {
	if x.Res.ID == "" {
		vpc, err := x.ID(x.Res.Fields["vpc"])
		if err != nil {
			return err
		}
		out, err := x.s.EC2.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("nuv-" + x.Name + "-" + x.RName), VpcId: aws.String(vpc),
			Description:       aws.String("nuv cluster " + x.Name + ": " + x.RName),
			TagSpecifications: x.EC2Tags(ec2types.ResourceTypeSecurityGroup)})
		if err != nil {
			return x.Fail("ec2:CreateSecurityGroup", x.Res.Key(), err)
		}
		if err := x.Made(aws.ToString(out.GroupId)); err != nil {
			return err
		}
	}
	want := map[string]ec2types.IpPermission{}
	for _, r := range strings.Split(x.Res.Fields["ingress"], ",") {
		if r == "" {
			continue
		}
		proto, from, to := ruleProto(r)
		for _, src := range ruleSources(r) {
			perm := ec2types.IpPermission{IpProtocol: aws.String(proto)}
			if proto != "-1" {
				perm.FromPort, perm.ToPort = aws.Int32(int32(from)), aws.Int32(int32(to))
			}
			if strings.HasPrefix(src, awsnet.KindSG+"/") {
				id := x.Res.ID
				if src != x.Res.Key() {
					var err error
					if id, err = x.ID(src); err != nil {
						return err
					}
				}
				perm.UserIdGroupPairs = []ec2types.UserIdGroupPair{{GroupId: aws.String(id)}}
			} else {
				perm.IpRanges = []ec2types.IpRange{{CidrIp: aws.String(src)}}
			}
			want[permKey(perm)] = perm
		}
	}
	cur, err := x.s.EC2.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{x.Res.ID}})
	if err != nil || len(cur.SecurityGroups) == 0 {
		return x.Fail("ec2:DescribeSecurityGroups", x.Res.Key(), err)
	}
	for _, perm := range splitPerms(cur.SecurityGroups[0].IpPermissions) {
		k := permKey(perm)
		if _, ok := want[k]; ok {
			delete(want, k)
			continue
		}
		if _, err := x.s.EC2.RevokeSecurityGroupIngress(ctx, &ec2.RevokeSecurityGroupIngressInput{GroupId: aws.String(x.Res.ID), IpPermissions: []ec2types.IpPermission{perm}}); err != nil && !awsnet.NotFound(err) {
			return x.Fail("ec2:RevokeSecurityGroupIngress", x.Res.Key(), err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		_, err := x.s.EC2.AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{GroupId: aws.String(x.Res.ID), IpPermissions: []ec2types.IpPermission{want[k]}})
		if err != nil && awsnet.APICode(err) != "InvalidPermission.Duplicate" {
			return x.Fail("ec2:AuthorizeSecurityGroupIngress", x.Res.Key(), err)
		}
	}
	return nil
}

// ruleProto reads a plan rule's protocol ("tcp", or "-1" for all) and ports.
func ruleProto(r string) (proto string, from, to int) {
	p, rest, _ := strings.Cut(r, ":")
	if p == "all" {
		return "-1", -1, -1
	}
	ports, _, _ := strings.Cut(rest, ":")
	lo, hi, ranged := strings.Cut(ports, "-")
	from, _ = strconv.Atoi(lo)
	to = from
	if ranged {
		to, _ = strconv.Atoi(hi)
	}
	return p, from, to
}

// splitPerms splits permissions into one per source (AWS groups the sources of a port range).
func splitPerms(perms []ec2types.IpPermission) []ec2types.IpPermission {
	var out []ec2types.IpPermission
	for _, p := range perms {
		base := ec2types.IpPermission{IpProtocol: p.IpProtocol, FromPort: p.FromPort, ToPort: p.ToPort}
		for _, r := range p.IpRanges {
			q := base
			q.IpRanges = []ec2types.IpRange{{CidrIp: r.CidrIp}}
			out = append(out, q)
		}
		for _, g := range p.UserIdGroupPairs {
			q := base
			q.UserIdGroupPairs = []ec2types.UserIdGroupPair{{GroupId: g.GroupId}}
			out = append(out, q)
		}
	}
	return out
}

// permKey is a one-source permission as a comparable string.
func permKey(p ec2types.IpPermission) string {
	src := ""
	if len(p.IpRanges) > 0 {
		src = aws.ToString(p.IpRanges[0].CidrIp)
	}
	if len(p.UserIdGroupPairs) > 0 {
		src = aws.ToString(p.UserIdGroupPairs[0].GroupId)
	}
	proto := aws.ToString(p.IpProtocol)
	if proto == "-1" {
		return "all:" + src
	}
	return fmt.Sprintf("%s:%d-%d:%s", proto, aws.ToInt32(p.FromPort), aws.ToInt32(p.ToPort), src)
}

// keyPair imports nuv's SSH key (made now if the cluster has none) as the cluster's key pair.
func (x *exec) keyPair(ctx context.Context, _ cluster.Change) error {
	if x.Res.ID != "" {
		return nil
	}
	k, err := x.p.clientKey(x.Name, true)
	if err != nil {
		return err
	}
	out, err := x.s.EC2.ImportKeyPair(ctx, &ec2.ImportKeyPairInput{KeyName: aws.String(x.RName), PublicKeyMaterial: []byte(k.AuthorizedKey("nuv@" + x.Name)),
		TagSpecifications: x.EC2Tags(ec2types.ResourceTypeKeyPair)})
	if err != nil {
		return x.Fail("ec2:ImportKeyPair", x.Res.Key(), err)
	}
	return x.Made(aws.ToString(out.KeyPairId))
}

func (x *exec) deleteKeyPair(ctx context.Context, ch cluster.Change) error {
	_, err := x.s.EC2.DeleteKeyPair(ctx, &ec2.DeleteKeyPairInput{KeyPairId: aws.String(awsnet.ActualID(ch))})
	if !awsnet.NotFound(err) {
		return x.Fail("ec2:DeleteKeyPair", ch.Key, err)
	}
	// The key's private half goes with the key pair: no machine of the cluster accepts it any more.
	if err := os.RemoveAll(filepath.Dir(x.p.sshKeyPath(x.Name))); err != nil {
		return fmt.Errorf("remove nuv's SSH key of cluster %s: %w", x.Name, err)
	}
	return nil
}

// instance launches one machine with user data that installs a host key nuv made (its public half
// in the instance's tags) and nuv's SSH key, and waits until it runs (a roll, which bootstraps the
// machine at once).
func (x *exec) instance(ctx context.Context, _ cluster.Change) error {
	for launch := 1; ; launch++ {
		err := x.startInstance(ctx)
		if err == nil {
			err = x.p.waitInstance(ctx, x.s, x.Res.Key(), x.Res.ID, true)
		}
		var failed *launchFailedError
		if err == nil || !errors.As(err, &failed) || !failed.transient() || launch == launchAttempts || ctx.Err() != nil {
			return err
		}
		if err := x.launchAgain(ctx, failed, launch); err != nil {
			return err
		}
	}
}

// launchAgain makes the next launch of a machine whose launch EC2 failed on its side
// (Server.InternalError, ...): the instance is gone and another launch is what an Auto Scaling
// group would do. A new host key makes it a new request (a new client token), at the same
// address if the machine is to keep one, once the failed instance freed it.
func (x *exec) launchAgain(ctx context.Context, failed *launchFailedError, launch int) error {
	x.p.log().Warnf("  %s: %v: launching it again (launch %d of %d)", x.Res.Key(), failed, launch+1, launchAttempts)
	if err := x.p.waitInstance(ctx, x.s, x.Res.Key(), failed.id, false); err != nil {
		return err
	}
	x.Res.ID = ""
	return x.startInstance(ctx)
}

// launchAttempts bounds the launches of one machine whose launch EC2 fails on its side.
const launchAttempts = 3

// startInstance launches the step's machine unless it is launched, and records it as soon as EC2
// accepted it (pending), with the private address EC2 gave it: a killed apply finds it again.
func (x *exec) startInstance(ctx context.Context) error {
	if x.Res.ID != "" {
		return nil
	}
	f := x.Res.Fields
	client, err := x.p.clientKey(x.Name, false)
	if err != nil {
		return err
	}
	host, err := machine.NewKey()
	if err != nil {
		return err
	}
	ud, err := userdata.Script(userdata.Config{Hostname: x.Name + "-" + x.RName, HostKey: host, AuthorizedKeys: []string{client.AuthorizedKey("nuv@" + x.Name)}})
	if err != nil {
		return err
	}
	ami, err := x.s.imageID(ctx, f["image"])
	if err != nil {
		return err
	}
	subnet, err := x.ID(f["subnet"])
	if err != nil {
		return err
	}
	var sgs []string
	for _, k := range strings.Split(f["securityGroups"], ",") {
		id, err := x.ID(k)
		if err != nil {
			return err
		}
		sgs = append(sgs, id)
	}
	if x.keepIP != "" {
		x.p.log().Infof("  %s: launched at %s, its address before", x.Res.Key(), x.keepIP)
	}
	out, err := x.s.EC2.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: aws.String(ami), InstanceType: ec2types.InstanceType(f["instanceType"]), MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		SubnetId: aws.String(subnet), SecurityGroupIds: sgs, KeyName: aws.String(strings.TrimPrefix(f["keyPair"], kindKeyPair+"/")), PrivateIpAddress: optional(x.keepIP),
		UserData: aws.String(base64.StdEncoding.EncodeToString(ud)), ClientToken: aws.String(clientToken(x.Name, x.Res.Key(), host.Fingerprint())),
		TagSpecifications: x.EC2Tags(ec2types.ResourceTypeInstance, TagRole, f["role"], TagHostKey, host.AuthorizedKey("")),
	})
	if err != nil && x.keepIP != "" && awsnet.APICode(err) == "InvalidIPAddress.InUse" {
		return &addressTakenError{addr: x.keepIP, msg: awsnet.APIMessage(err)}
	}
	if err != nil {
		return x.Fail("ec2:RunInstances", x.Res.Key(), err)
	}
	if len(out.Instances) != 1 {
		return fmt.Errorf("ec2:RunInstances on %s: %d instances launched, want 1", x.Res.Key(), len(out.Instances))
	}
	// The machine's private address goes in the record: a machine lost behind nuv's back is
	// launched again there (what names it by address stays right). EC2 gives it at launch.
	x.Res.Fields = maps.Clone(x.Res.Fields)
	if ip := aws.ToString(out.Instances[0].PrivateIpAddress); ip != "" {
		x.Res.Fields[fieldPrivateIP] = ip
	} else {
		delete(x.Res.Fields, fieldPrivateIP)
	}
	return x.Made(aws.ToString(out.Instances[0].InstanceId))
}

// fieldPrivateIP is a machine's private address in its record (not in the plan: AWS picks it,
// once; a lost machine's replacement is launched there).
const fieldPrivateIP = "privateIP"

// addressTakenError is a launch at a machine's former address that AWS refused: something else
// has it now.
type addressTakenError struct{ addr, msg string }

func (e *addressTakenError) Error() string { return "address " + e.addr + " is taken: " + e.msg }

// clientToken is the idempotency token of one launch of a machine (its host key is new for each):
// the SDK's retries of the call get the one instance. A launch that an apply killed before it
// recorded the instance is found again by its tags (nuv.dev/resource), not by its token.
func clientToken(clusterName, key, hostKey string) string {
	h := sha256.Sum256([]byte(clusterName + "\x00" + key + "\x00" + hostKey))
	return "nuv-" + hex.EncodeToString(h[:16])
}

func (x *exec) deleteInstance(ctx context.Context, ch cluster.Change) error {
	id := awsnet.ActualID(ch)
	_, err := x.s.EC2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	if awsnet.NotFound(err) && err != nil {
		return nil
	}
	if err != nil {
		return x.Fail("ec2:TerminateInstances", ch.Key, err)
	}
	x.p.forgetMachine(id)
	return x.p.waitInstance(ctx, x.s, ch.Key, id, false)
}

// imageID is the id of the AMI named name.
func (s *session) imageID(ctx context.Context, name string) (string, error) {
	out, err := s.EC2.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}, Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{name}}}})
	if err != nil {
		return "", fmt.Errorf("look up machine image %s (ec2:DescribeImages): %s", name, awsnet.APIMessage(err))
	}
	for _, im := range out.Images {
		if im.State == ec2types.ImageStateAvailable {
			return aws.ToString(im.ImageId), nil
		}
	}
	return "", fmt.Errorf("machine image %s is not available in %s", name, s.Config.Region)
}

// launchFailedError is an instance that ended while nuv waited for it to run: its state and
// EC2's state reason.
type launchFailedError struct {
	what, id, state string
	// code and reason are the instance's state reason (e.g. Server.InternalError and its message).
	code, reason string
}

func (e *launchFailedError) Error() string {
	return fmt.Sprintf("%s (%s) did not start: it is %s (%s)", e.what, e.id, e.state, awsnet.OrDefault(e.reason, "no reason given"))
}

// transient says whether EC2 failed the launch on its side (a state reason code Server.*), which
// another launch may not meet; a Client.* reason (a limit, the user's own shutdown) would recur.
func (e *launchFailedError) transient() bool { return strings.HasPrefix(e.code, "Server.") }

// waitInstance waits until instance id runs (its machine booted and its user data ran), or, with
// running unset, until it is terminated or gone. An instance that ends terminated while nuv waits
// for it to run is an error saying why (its state reason).
func (p *Provider) waitInstance(ctx context.Context, s *session, what, id string, running bool) error {
	g := p.progress(what)
	delay := s.Poll
	if delay == 0 {
		delay = 2 * time.Second
	}
	deadline := time.Now().Add(15 * time.Minute)
	for {
		out, err := s.EC2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		state, code, reason := "", "", ""
		switch {
		case awsnet.NotFound(err) && err != nil:
			state = "gone"
		case err != nil:
			return fmt.Errorf("wait for %s (%s): ec2:DescribeInstances: %s", what, id, awsnet.APIMessage(err))
		default:
			for _, r := range out.Reservations {
				for _, in := range r.Instances {
					state = string(in.State.Name)
					if in.StateReason != nil {
						code, reason = aws.ToString(in.StateReason.Code), aws.ToString(in.StateReason.Message)
					}
				}
			}
			if state == "" {
				state = "gone"
			}
		}
		g.Status(state)
		switch {
		case running && state == "running":
			return nil
		case running && (state == "terminated" || state == "shutting-down" || state == "gone"):
			return &launchFailedError{what: what, id: id, state: state, code: code, reason: reason}
		case !running && (state == "terminated" || state == "gone"):
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s (%s): still %s after %s", what, id, state, g.Elapsed().Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}
