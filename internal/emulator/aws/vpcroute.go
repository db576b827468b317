package aws

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/machine/container"
)

// Labels of a subnet's network naming its VPC and the VPC's block, so the emulator can link the
// networks of a VPC's subnets (the VPC's local route) from what the runtime has, also after a restart.
const (
	LabelVPC     = "nuv.dev/ec2-vpc"
	LabelVPCCIDR = "nuv.dev/ec2-vpc-cidr"
)

// vpcOfSubnet is the VPC of subnet id and its CIDR block (s.Mu held).
func (s *Server) vpcOfSubnet(id string) (vpc, cidr string) {
	e := s.ec2()
	sn := e.Subnets[id]
	if sn == nil {
		return "", ""
	}
	if v := e.Vpcs[sn.VpcID]; v != nil {
		return v.VpcID, v.CidrBlock
	}
	return "", ""
}

// subnetNetworkLabels are the labels of the network of a subnet of account's emulator.
func subnetNetworkLabels(account, subnet, vpc, vpcCIDR string) map[string]string {
	l := map[string]string{LabelEmulator: "aws", LabelAccount: account, LabelSubnet: subnet}
	if vpc != "" && vpcCIDR != "" {
		l[LabelVPC], l[LabelVPCCIDR] = vpc, vpcCIDR
	}
	return l
}

// vpcLinkName names the routing of a VPC of an account's emulator (its iptables rules carry
// "nuv-vpc <account>/<vpc>").
func vpcLinkName(account, vpc string) string { return account + "/" + vpc }

// LinkVPC gives the networks of the subnets of VPC vpc of account's emulator (those that exist)
// routing between each other without NAT, as the VPC's local route does; a VPC without networks
// loses its routing. An empty vpc is nothing to do.
func LinkVPC(ctx context.Context, mgr *container.Manager, account, vpc string) error {
	if vpc == "" {
		return nil
	}
	name := vpcLinkName(account, vpc)
	// Machines of several subnets launch at once: their networks' links are reconciled one at a
	// time, each from the networks it reads under the lock.
	unlock, err := container.LockLink(ctx, name)
	if err != nil {
		return fmt.Errorf("the local route of VPC %s: %w", vpc, err)
	}
	defer unlock()
	nets, err := mgr.Networks(ctx, map[string]string{LabelEmulator: "aws", LabelAccount: account, LabelVPC: vpc})
	if err != nil {
		return fmt.Errorf("the local route of VPC %s: %w", vpc, err)
	}
	if len(nets) == 0 {
		if err := mgr.UnlinkNetworks(ctx, name); err != nil {
			return fmt.Errorf("the local route of VPC %s: %w", vpc, err)
		}
		return nil
	}
	var names []string
	cidr := ""
	for _, n := range nets {
		names = append(names, n.Name)
		cidr = n.Labels[LabelVPCCIDR]
	}
	if err := mgr.LinkNetworks(ctx, name, cidr, names); err != nil {
		return fmt.Errorf("the local route of VPC %s (%s): %w", vpc, cidr, err)
	}
	return nil
}

// LinkVPCs makes the routing of every VPC with subnet networks of account's emulator (every
// account's when account is empty) again: a restarted emulator re-adopts its networks.
func LinkVPCs(ctx context.Context, mgr *container.Manager, account string) error {
	sel := map[string]string{LabelEmulator: "aws"}
	if account != "" {
		sel[LabelAccount] = account
	}
	nets, err := mgr.Networks(ctx, sel)
	if err != nil {
		return fmt.Errorf("the local routes of the VPCs: %w", err)
	}
	vpcs := map[[2]string]bool{}
	for _, n := range nets {
		if v := n.Labels[LabelVPC]; v != "" {
			vpcs[[2]string{n.Labels[LabelAccount], v}] = true
		}
	}
	keys := make([][2]string, 0, len(vpcs))
	for k := range vpcs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	var errs []error
	for _, k := range keys {
		errs = append(errs, LinkVPC(ctx, mgr, k[0], k[1]))
	}
	return errors.Join(errs...)
}

// removeSubnetNetwork removes the network name of a subnet and then re-links the rest of its
// VPC (which drops the removed network's rules, and all of the VPC's with its last network).
func removeSubnetNetwork(ctx context.Context, mgr *container.Manager, name string) error {
	nets, err := mgr.Networks(ctx, nil)
	if err != nil {
		return err
	}
	var labels map[string]string
	for _, n := range nets {
		if n.Name == name {
			labels = n.Labels
		}
	}
	if sn := labels[LabelSubnet]; sn != "" {
		if err := mgr.SetNetworkRoutes(ctx, name, subnetRouteTableID(labels[LabelAccount], sn), nil); err != nil {
			return err
		}
	}
	// The machines of instances terminated just before their subnet was deleted may still be
	// going (their removal runs in the background too): wait for them a little.
	for deadline := time.Now().Add(time.Minute); ; {
		err := mgr.RemoveNetwork(ctx, name)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "active endpoints") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
	if labels[LabelVPC] == "" {
		return nil
	}
	return LinkVPC(ctx, mgr, labels[LabelAccount], labels[LabelVPC])
}
