package awsnet

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/kit"
)

// The waits, each an SDK waiter whose polls report the resource's status and the elapsed time.

// Progress prints a wait's status changes with the elapsed time, and the status every 15s
// (kit.Progress).
type Progress struct {
	log  cli.Logger
	what string
	*kit.Progress
}

// NewProgress is the progress of a wait for what, printed to log.
func NewProgress(log cli.Logger, what string) *Progress {
	return &Progress{log: log, what: what, Progress: kit.NewProgress()}
}

// doneStatuses end a wait; a wait that finds one at its first look prints nothing (the resource
// was ready already).
var doneStatuses = map[string]bool{"ACTIVE": true, "available": true, "Successful": true, "deleted": true, "running": true}

// Status reports the status a poll read.
func (g *Progress) Status(s string) {
	first := !g.Started()
	if !g.Due(s) || first && doneStatuses[s] {
		return
	}
	g.log.Infof("  waiting for %s: %s (%s)", g.what, s, g.Elapsed().Round(100*time.Millisecond))
}

// Delays sets an SDK waiter's delays to the session's polling interval (when it has one).
func (s *Session) Delays(minDelay, maxDelay *time.Duration) {
	if s.Poll > 0 {
		*minDelay, *maxDelay = s.Poll, 2*s.Poll
	}
}

// Reporting wraps an SDK waiter's Retryable so each poll reports the status read from its output
// (status returns "" when the output names no resource).
func Reporting[I, O any](prev func(context.Context, *I, *O, error) (bool, error), g *Progress, status func(*O) string) func(context.Context, *I, *O, error) (bool, error) {
	return func(ctx context.Context, in *I, out *O, err error) (bool, error) {
		if out != nil {
			if st := status(out); st != "" {
				g.Status(st)
			}
		}
		return prev(ctx, in, out, err)
	}
}

// The status each wait reports.
func natStatus(o *ec2.DescribeNatGatewaysOutput) string {
	if len(o.NatGateways) == 0 {
		return ""
	}
	return string(o.NatGateways[0].State)
}

func vpcStatus(o *ec2.DescribeVpcsOutput) string {
	if len(o.Vpcs) == 0 {
		return ""
	}
	return string(o.Vpcs[0].State)
}

func subnetStatus(o *ec2.DescribeSubnetsOutput) string {
	if len(o.Subnets) == 0 {
		return ""
	}
	return string(o.Subnets[0].State)
}

// WaitErr is a failed wait's error, with its elapsed time and the last status it read (nil when
// err is).
func WaitErr(what string, g *Progress, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("wait for %s (%s, last status %s): %w", what, g.Elapsed().Round(time.Second), g.Last(), err)
}

// WaitNAT waits for NAT gateway id to be available (or deleted), reporting to log.
func (s *Session) WaitNAT(ctx context.Context, log cli.Logger, id string, available bool) error {
	in := &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{id}}
	what := "nat-gateway " + id
	g := NewProgress(log, what)
	if !available {
		err := ec2.NewNatGatewayDeletedWaiter(s.EC2, func(o *ec2.NatGatewayDeletedWaiterOptions) {
			s.Delays(&o.MinDelay, &o.MaxDelay)
			o.Retryable = Reporting(o.Retryable, g, natStatus)
		}).Wait(ctx, in, 20*time.Minute)
		return WaitErr(what+" to be deleted", g, err)
	}
	err := ec2.NewNatGatewayAvailableWaiter(s.EC2, func(o *ec2.NatGatewayAvailableWaiterOptions) {
		s.Delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = Reporting(o.Retryable, g, natStatus)
	}).Wait(ctx, in, 20*time.Minute)
	return WaitErr(what+" to be available", g, err)
}

// WaitVPC waits for VPC id to be available, reporting to log.
func (s *Session) WaitVPC(ctx context.Context, log cli.Logger, id string) error {
	g := NewProgress(log, "vpc "+id)
	err := ec2.NewVpcAvailableWaiter(s.EC2, func(o *ec2.VpcAvailableWaiterOptions) {
		s.Delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = Reporting(o.Retryable, g, vpcStatus)
	}).Wait(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{id}}, 10*time.Minute)
	return WaitErr("vpc "+id+" to be available", g, err)
}

// WaitSubnet waits for subnet id to be available, reporting to log.
func (s *Session) WaitSubnet(ctx context.Context, log cli.Logger, id string) error {
	g := NewProgress(log, "subnet "+id)
	err := ec2.NewSubnetAvailableWaiter(s.EC2, func(o *ec2.SubnetAvailableWaiterOptions) {
		s.Delays(&o.MinDelay, &o.MaxDelay)
		o.Retryable = Reporting(o.Retryable, g, subnetStatus)
	}).Wait(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{id}}, 10*time.Minute)
	return WaitErr("subnet "+id+" to be available", g, err)
}

// RetryWhile repeats f while it fails with an error retryable accepts (AWS's eventual
// consistency: a role just made that EKS cannot assume yet, a subnet whose network interfaces are
// still going), for at most limit; the last error is returned.
func (s *Session) RetryWhile(ctx context.Context, limit time.Duration, f func() error, retryable func(error) bool) error {
	deadline := time.Now().Add(limit)
	delay := s.Poll
	if delay == 0 {
		delay = 5 * time.Second
	}
	for {
		err := f()
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
}
