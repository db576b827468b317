package awsmachines

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nuv-dev/nuv/internal/cluster"
	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// MachineImagePrefix begins the name of nuv's machine image (an AMI with systemd, containerd,
// kubeadm, kubelet, the control plane's images, sshd and HAProxy): nuv-machine-VERSION-....
const MachineImagePrefix = "nuv-machine-"

// MachineVersions are the Kubernetes versions nuv's machine image carries.
var MachineVersions = []string{"1.36.3"}

// validateMachines checks a self-managed spec: its own rules, then what only AWS can answer (the
// credentials, the zones, the instance types, nuv's machine image in the region).
func (p *Provider) validateMachines(c *spec.Cluster) []spec.FieldError {
	if errs := checkMachines(c); len(errs) > 0 {
		return errs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, errs := p.resolveMachines(ctx, c)
	return errs
}

// resolveMachines asks AWS what a self-managed spec means (cached per cluster until the spec
// changes).
func (p *Provider) resolveMachines(ctx context.Context, c *spec.Cluster) (*machinesResolved, []spec.FieldError) {
	ck := "aws|" + awsnet.SpecKey(c, "eks") + string(c.Section(Name)) + fmt.Sprint(c.Spec.ControlPlane.Count)
	p.mu.Lock()
	if r, ok := p.machines[ck]; ok {
		p.mu.Unlock()
		return r, nil
	}
	p.mu.Unlock()
	sec := Key.Get(c).withDefaults()
	ss, err := p.session(ctx, c, sec)
	if err != nil {
		return nil, []spec.FieldError{{Msg: err.Error()}}
	}
	r := &machinesResolved{sec: sec}
	var errs []spec.FieldError
	add := func(path, f string, a ...any) { errs = append(errs, spec.Errorf(path, f, a...)) }

	r.version = MachineVersions[len(MachineVersions)-1]
	if v := c.Spec.KubernetesVersion; v != "" {
		nv, _ := spec.NormalVersion(v)
		r.version = ""
		for _, mv := range MachineVersions {
			if strings.HasPrefix(mv, nv+".") {
				r.version = mv
			}
		}
		if r.version == "" {
			add("spec.kubernetesVersion", "%q: nuv's machine image carries Kubernetes %s", v, strings.Join(MachineVersions, ", "))
		}
	}
	zones, err := ss.Zones(ctx)
	if err != nil {
		return nil, []spec.FieldError{{Path: "spec.zones", Msg: err.Error()}}
	}
	r.zones = c.Spec.Zones
	for i, z := range c.Spec.Zones {
		if !slices.Contains(zones, z) {
			add(fmt.Sprintf("spec.zones[%d]", i), "%q is not a zone of %s (zones: %s)", z, ss.Config.Region, strings.Join(zones, ", "))
		}
	}
	if len(r.zones) == 0 {
		// The control planes spread over up to three zones; one control plane takes one.
		n := min(max(c.Spec.ControlPlane.Count, 1), 3, len(zones))
		if n == 0 {
			return nil, []spec.FieldError{{Path: "spec.zones", Msg: "region " + ss.Config.Region + " has no available zone"}}
		}
		r.zones = zones[:n]
	}
	var cerrs []spec.FieldError
	r.subnets, cerrs = awsnet.CarveSubnets(c.Spec.Networking.VPCCIDR, r.zones, sec.PublicSubnetCIDRs, sec.PrivateSubnetCIDRs)
	for _, e := range cerrs {
		e.Path = strings.Replace(e.Path, "spec.eks.", "spec.aws.", 1)
		errs = append(errs, e)
	}
	checked := map[string]error{}
	check := func(path, t string) {
		if _, done := checked[t]; !done {
			checked[t] = ss.InstanceType(ctx, t)
		}
		if err := checked[t]; err != nil {
			add(path, "%v", err)
		}
	}
	check("spec.aws.controlPlane.instanceType", sec.ControlPlane.InstanceType)
	if sec.Etcd.Placement == EtcdExternal {
		check("spec.aws.etcd.instanceType", sec.Etcd.InstanceType)
	}
	if sec.LoadBalancer.Type == LBHAProxy {
		check("spec.aws.loadBalancer.instanceType", sec.LoadBalancer.InstanceType)
	}
	for i, g := range c.Spec.NodeGroups {
		check(fmt.Sprintf("spec.nodeGroups[%d].instanceType", i), awsnet.InstanceTypeOf(g))
	}
	if r.version != "" {
		img, err := ss.machineImage(ctx, sec.Image, r.version)
		if err != nil {
			path := "spec.kubernetesVersion"
			if sec.Image != "" {
				path = "spec.aws.image"
			}
			add(path, "%v", err)
		}
		r.image = img
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b spec.FieldError) int { return strings.Compare(a.Path, b.Path) })
		return nil, errs
	}
	p.mu.Lock()
	if p.machines == nil {
		p.machines = map[string]*machinesResolved{}
	}
	p.machines[ck] = r
	p.mu.Unlock()
	return r, nil
}

// machineImage finds the AMI the machines boot: the one the spec names (by id or name), else the
// newest of nuv's machine images for version that this account owns. It returns the AMI's name.
func (s *session) machineImage(ctx context.Context, named, version string) (string, error) {
	in := &ec2.DescribeImagesInput{Owners: []string{"self"}}
	switch {
	case strings.HasPrefix(named, "ami-"):
		in = &ec2.DescribeImagesInput{ImageIds: []string{named}}
	case named != "":
		in.Filters = []ec2types.Filter{{Name: aws.String("name"), Values: []string{named}}}
	default:
		in.Filters = []ec2types.Filter{{Name: aws.String("name"), Values: []string{MachineImagePrefix + version + "*"}}}
	}
	out, err := s.EC2.DescribeImages(ctx, in)
	if err != nil && !strings.Contains(awsnet.APICode(err), "NotFound") {
		return "", fmt.Errorf("look up the machine image (ec2:DescribeImages): %s", awsnet.APIMessage(err))
	}
	var best *ec2types.Image
	if out != nil {
		for i, im := range out.Images {
			if im.State != ec2types.ImageStateAvailable {
				continue
			}
			if best == nil || aws.ToString(im.CreationDate) > aws.ToString(best.CreationDate) {
				best = &out.Images[i]
			}
		}
	}
	if best == nil {
		want := named
		if want == "" {
			want = MachineImagePrefix + version + "*"
		}
		return "", errors.New("no available machine image " + want + " in " + s.Config.Region +
			" (ec2:DescribeImages, owner self): nuv's machine image must be registered in the account first")
	}
	return aws.ToString(best.Name), nil
}

// machinesDesiredOf is Desired for a self-managed spec (resolved against AWS first).
func (p *Provider) machinesDesiredOf(c *spec.Cluster) ([]cluster.Resource, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, errs := p.resolveMachines(ctx, c)
	if len(errs) > 0 {
		var all []error
		for _, e := range errs {
			all = append(all, e)
		}
		return nil, errors.Join(all...)
	}
	return machinesDesired(c, r), nil
}
