package aws

// The machines behind EC2 instances: the reconciler that launches, stops, starts and removes
// each instance's machine in the background and records what became of it.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// jobKey is the key of the background work on instance id: one job at a time per instance.
func jobKey(id string) string { return "ec2/" + id }

// reconcileInstances moves instances along and starts the jobs that make, stop and remove their
// machines; s.Mu is held.
func (s *Server) reconcileInstances(t time.Time) bool {
	e := s.ec2()
	changed := s.namedInstanceFaults(t)
	for id, in := range s.instances() {
		if in.TerminateAt != nil && !t.Before(*in.TerminateAt) && in.live() && in.State != "shutting-down" {
			s.Log.Infof("emulator: EC2 instance %s terminated by an injected fault", id)
			s.beginTermination(in, t.UTC(), "Server.InternalError", serverError("the instance was lost (nuv emulator: injected fault terminate-after)"))
			changed = true
		}
		switch in.State {
		case "pending":
			if in.Booted {
				if !t.Before(in.Due) {
					s.Log.Infof("emulator: EC2 instance %s running (%s, %.1fs after it was pending)", id, in.PrivateIP, t.Sub(in.Since).Seconds())
					in.setState("running", t.UTC(), "", nil)
					changed = true
				}
				continue
			}
			s.spawnLaunch(in)
		case "stopping":
			if !t.Before(in.RetryAt) {
				s.spawnMachineOp(in, "stopping", "stop", s.machines.Stop, func(now time.Time) {
					in.setState("stopped", now, in.Reason, in.StateReason)
				})
			}
		case "shutting-down":
			if !t.Before(in.RetryAt) {
				s.spawnMachineOp(in, "shutting-down", "remove", s.machines.Remove, func(now time.Time) { s.finishTermination(in, now) })
			}
		case "terminated":
			if in.TerminatedAt != nil && t.Sub(*in.TerminatedAt) > terminatedVisible {
				delete(s.instances(), id)
				s.forgetReservation(in)
				changed = true
			}
		}
	}
	for _, sn := range e.NetworksToRemove {
		s.spawnRemoveNetwork(sn)
	}
	s.reconcileRoutes()
	if t.Sub(s.inst.lastCheck) >= machineCheckEvery && s.hasMachines(t) {
		s.inst.lastCheck = t
		s.spawnCheck(t)
	}
	return changed
}

// orphanWatch is how long after a termination the machines are still listed, to remove one that
// appeared late (a launch cut short while the runtime was making its container).
const orphanWatch = 2 * time.Minute

// hasMachines reports whether an instance has (or may have) a machine.
func (s *Server) hasMachines(t time.Time) bool {
	for _, in := range s.instances() {
		if in.live() || (in.TerminatedAt != nil && t.Sub(*in.TerminatedAt) < orphanWatch) {
			return true
		}
	}
	return false
}

func (s *Server) forgetReservation(in *ec2Instance) {
	r := s.ec2().Reservations[in.ReservationID]
	if r == nil {
		return
	}
	for _, id := range r.InstanceIDs {
		if s.instances()[id] != nil {
			return
		}
	}
	delete(s.ec2().Reservations, r.ReservationID)
}

// namedInstanceFaults arms the terminate-after faults naming an instance (resource i-...): the
// instance is terminated Seconds after the fault is seen. s.Mu is held; true when one was armed.
func (s *Server) namedInstanceFaults(t time.Time) bool {
	armed := false
	for _, f := range s.Faults {
		if f.Kind != faultTerminateAfter || !strings.HasPrefix(f.Resource, "i-") || (f.Count > 0 && f.Fired >= f.Count) {
			continue
		}
		in := s.instances()[f.Resource]
		if in == nil || !in.live() || in.TerminateAt != nil {
			continue
		}
		at := t.Add(time.Duration(f.Seconds * float64(time.Second)))
		in.TerminateAt = &at
		f.Fired++
		armed = true
		s.Log.V(1).Infof("emulator: fault terminate-after: instance %s at %s", in.InstanceID, at.Format(time.RFC3339))
	}
	return armed
}

// spec is the machine of in.
func (in *ec2Instance) spec(cidr string) (MachineSpec, error) {
	m := MachineSpec{ID: in.InstanceID, Image: in.ImageRef, Subnet: in.SubnetID, CIDR: cidr, IP: in.PrivateIP,
		Hostname: hostnameOf(in.PrivateIP), Tags: map[string]string{}}
	if in.AuthorizedKey != "" {
		m.AuthorizedKeys = []string{in.AuthorizedKey}
	}
	for _, t := range in.Tags {
		m.Tags[t.Key] = t.Value
	}
	if in.UserData != "" {
		ud, err := base64.StdEncoding.DecodeString(in.UserData)
		if err != nil {
			return m, fmt.Errorf("user data of %s: %w", in.InstanceID, err)
		}
		m.UserData = ud
	}
	return m, nil
}

// spawnLaunch makes (or starts again) the machine of a pending instance in the background; the
// instance is booted when it is up, or shutting-down with Server.InternalError when it failed.
// s.Mu is held.
func (s *Server) spawnLaunch(in *ec2Instance) {
	id := in.InstanceID
	if s.Jobs[jobKey(id)] || s.BG.Ctx().Err() != nil {
		return
	}
	cidr := ""
	if sn := s.ec2().Subnets[in.SubnetID]; sn != nil {
		cidr = sn.CidrBlock
	}
	spec, specErr := in.spec(cidr)
	spec.VPC, spec.VPCCIDR = s.vpcOfSubnet(in.SubnetID)
	launched, fail := in.Launched, in.FailLaunch
	ctx, cancel := context.WithCancel(s.BG.Ctx())
	if s.inst.cancels == nil {
		s.inst.cancels = map[string]context.CancelFunc{}
	}
	s.inst.cancels[id] = cancel
	s.Spawn(jobKey(id), func(context.Context) func() {
		var err error
		switch {
		case fail:
			err = fmt.Errorf("injected fault launch-failure")
		case specErr != nil:
			err = specErr
		case cidr == "":
			err = fmt.Errorf("its subnet %s is gone", in.SubnetID)
		case launched:
			err = s.machines.Start(ctx, id)
		default:
			err = s.machines.Create(ctx, spec)
		}
		cancelled := ctx.Err() != nil
		cancel()
		return func() {
			delete(s.inst.cancels, id)
			if s.instances()[id] != in || in.State != "pending" || cancelled {
				return // terminated meanwhile: the termination removes the machine
			}
			now := time.Now().UTC()
			if errors.Is(err, ErrNoMachine) {
				s.machineGone(in, now)
				return
			}
			if err != nil && launched {
				// a start that failed leaves the instance stopped, as EC2 does
				s.Log.Warnf("emulator: EC2 instance %s failed to start: %v", id, err)
				in.setState("stopped", now, "Server.InternalError", serverError("the instance failed to start (nuv emulator: "+err.Error()+")"))
				in.Booted = false
				return
			}
			if err != nil {
				s.Log.Warnf("emulator: EC2 instance %s failed to launch: %v", id, err)
				in.Launched = true // whatever was made is removed
				// EC2's reason, and the cause (a network whose CIDR another network on the
				// container runtime overlaps, a machine that did not boot) for the user
				cause := err.Error()
				if len(cause) > 400 {
					cause = cause[:400] + "..."
				}
				sr := *reasonLaunchFailure
				sr.Message += " (nuv emulator: " + cause + ")"
				s.beginTermination(in, now, "Server.InternalError: Internal error on launch", &sr)
				return
			}
			in.Launched, in.Booted = true, true
		}
	})
}

// spawnMachineOp runs op on the machine of in (in state from) in the background, then done; a
// failure is retried after machineRetry. s.Mu is held.
func (s *Server) spawnMachineOp(in *ec2Instance, from, what string, op func(context.Context, string) error, done func(now time.Time)) {
	id := in.InstanceID
	launched := in.Launched
	s.Spawn(jobKey(id), func(ctx context.Context) func() {
		var err error
		if launched || what != "remove" {
			err = op(ctx, id)
		}
		return func() {
			if s.instances()[id] != in || in.State != from {
				return
			}
			if errors.Is(err, ErrNoMachine) {
				s.machineGone(in, time.Now().UTC())
				return
			}
			if err != nil {
				s.Log.Warnf("emulator: EC2 instance %s: %s its machine: %v (retrying in %s)", id, what, err, machineRetry)
				in.RetryAt = time.Now().Add(machineRetry)
				return
			}
			done(time.Now().UTC())
		}
	})
}

// spawnRemoveNetwork removes the machine network of a deleted subnet in the background. s.Mu is held.
func (s *Server) spawnRemoveNetwork(subnet string) {
	s.Spawn("ec2/network/"+subnet, func(ctx context.Context) func() {
		err := s.machines.RemoveNetwork(ctx, subnet)
		return func() {
			if err != nil {
				s.Log.Warnf("emulator: remove the machine network of subnet %s: %v (retrying)", subnet, err)
				return
			}
			e := s.ec2()
			for i, sn := range e.NetworksToRemove {
				if sn == subnet {
					e.NetworksToRemove = append(e.NetworksToRemove[:i], e.NetworksToRemove[i+1:]...)
					break
				}
			}
		}
	})
}

// removeOrphan removes in the background the machine of an instance that is terminated or
// forgotten (made late by a launch cut short). s.Mu is held.
func (s *Server) removeOrphan(id string) {
	s.Log.Infof("emulator: removing machine %s: its instance is terminated", id)
	s.Spawn(jobKey(id), func(ctx context.Context) func() {
		err := s.machines.Remove(ctx, id)
		return func() {
			if err != nil {
				s.Log.Warnf("emulator: remove machine %s of a terminated instance: %v", id, err)
			}
		}
	})
}

// machineGone terminates in, whose machine was removed behind the emulator's back. s.Mu is held.
func (s *Server) machineGone(in *ec2Instance, now time.Time) {
	s.Log.Warnf("emulator: EC2 instance %s: its machine is gone: the instance is terminated", in.InstanceID)
	in.setState("terminated", now, "Server.InternalError", serverError("the instance's machine is gone (nuv emulator: its container was removed behind the emulator's back)"))
	s.finishTermination(in, now)
}

// spawnCheck lists the machines in the background and compares them with the instances that
// should have one: a machine gone makes its instance terminated, a machine stopped behind the
// emulator's back makes it stopped, one started again makes it running. Only instances that
// were in their state before the listing began, with no job of theirs running, are judged.
// s.Mu is held.
func (s *Server) spawnCheck(start time.Time) {
	s.Spawn("ec2/machines", func(ctx context.Context) func() {
		list, err := s.machines.List(ctx)
		return func() {
			if err != nil {
				// once in a row is a machine listed while it is made or removed; twice is a problem
				s.inst.listFailures++
				if msg := err.Error(); msg != s.inst.warned && s.inst.listFailures > 1 {
					s.Log.Warnf("emulator: list the machines of the EC2 instances: %v", err)
					s.inst.warned = msg
				}
				return
			}
			s.inst.warned, s.inst.listFailures = "", 0
			now := time.Now().UTC()
			for _, id := range sortedKeys(list) {
				if in := s.instances()[id]; (in == nil || in.State == "terminated") && !s.Jobs[jobKey(id)] {
					s.removeOrphan(id)
				}
			}
			for _, id := range sortedKeys(s.instances()) {
				in := s.instances()[id]
				if (in.State != "running" && in.State != "stopped") || !in.Since.Before(start) || s.Jobs[jobKey(id)] {
					continue
				}
				st, ok := list[id]
				switch {
				case !ok:
					s.machineGone(in, now)
				case in.State == "running" && !st.Running:
					s.Log.Warnf("emulator: EC2 instance %s: its machine stopped: the instance is stopped", id)
					in.setState("stopped", now, "User initiated", reasonInsideStop)
				case in.State == "stopped" && st.Running:
					s.Log.Infof("emulator: EC2 instance %s: its machine runs again: the instance is running", id)
					in.setState("running", now, "", nil)
				}
			}
		}
	})
}
