package aws

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// EC2 instances. Each instance is a real machine (Machines: a privileged systemd container of
// nuv's node image) on the network of its subnet, with the private address EC2 would give it
// from the subnet's block. An instance moves through EC2's states:
//
//	pending -> running            once its machine is up and its user data ran (and Delay passed)
//	running -> stopping -> stopped -> pending (StartInstances) -> running
//	any -> shutting-down -> terminated, visible for terminatedVisible, then gone
//
// The machines are made, stopped and removed by background jobs (one at a time per instance);
// the state says where each instance is, so a restarted emulator carries on: a launch that was
// interrupted runs again, and the running and stopped instances are matched with the machines
// the backend lists. A machine that vanished behind the emulator's back makes its instance
// terminated (StateReason Server.InternalError); one that stopped on its own makes it stopped
// (Client.InstanceInitiatedShutdown), as EC2 reports an instance shut down from inside.

// ec2Machines is EC2's instance part of the state (embedded in ec2State).
type ec2Machines struct {
	Instances    map[string]*ec2Instance    `json:"instances,omitempty"`
	Reservations map[string]*ec2Reservation `json:"reservations,omitempty"`
	KeyPairs     map[string]*ec2KeyPair     `json:"keyPairs,omitempty"`
	// MachineNetworks are the subnets whose machine network exists (or may).
	MachineNetworks []string `json:"machineNetworks,omitempty"`
	// NetworksToRemove are machine networks of deleted subnets still to be removed.
	NetworksToRemove []string `json:"networksToRemove,omitempty"`
	// ImagesSeen dates the machine images without a creation time of their own: when the
	// emulator first served them.
	ImagesSeen map[string]time.Time `json:"imagesSeen,omitempty"`
}

type ec2StateReason struct {
	Code    string `xml:"code" json:"code"`
	Message string `xml:"message" json:"message"`
}

type ec2Instance struct {
	InstanceID    string   `json:"instanceId"`
	ReservationID string   `json:"reservationId"`
	ImageID       string   `json:"imageId"`
	ImageRef      string   `json:"imageRef"`
	InstanceType  string   `json:"instanceType"`
	Architecture  string   `json:"architecture"`
	KeyName       string   `json:"keyName,omitempty"`
	AuthorizedKey string   `json:"authorizedKey,omitempty"` // the key pair's public key at launch
	SubnetID      string   `json:"subnetId"`
	VpcID         string   `json:"vpcId"`
	Zone          string   `json:"zone"`
	PrivateIP     string   `json:"privateIp"`
	Groups        []string `json:"groups"`
	Tags          []ec2Tag `json:"tags"`
	// UserData is the user data as given (base64); the state file is 0600.
	UserData    string    `json:"userData,omitempty"`
	ClientToken string    `json:"clientToken,omitempty"`
	LaunchIndex int       `json:"launchIndex"`
	LaunchTime  time.Time `json:"launchTime"`

	State string `json:"state"`
	// Since is when the instance entered State; Due is when a pending instance may be running.
	Since time.Time `json:"since"`
	Due   time.Time `json:"due"`
	// Reason is EC2's StateTransitionReason; StateReason its StateReason.
	Reason      string          `json:"reason,omitempty"`
	StateReason *ec2StateReason `json:"stateReason,omitempty"`
	// Launched says the machine was made (StartInstances starts it again); Booted that a pending
	// instance's machine is up.
	Launched bool `json:"launched,omitempty"`
	Booted   bool `json:"booted,omitempty"`
	// RetryAt is when a failed stop or removal of the machine is tried again.
	RetryAt      time.Time  `json:"retryAt,omitempty"`
	TerminatedAt *time.Time `json:"terminatedAt,omitempty"`
	// FailLaunch and TerminateAt are injected faults: the launch fails, or the instance is
	// terminated at that time.
	FailLaunch  bool       `json:"failLaunch,omitempty"`
	TerminateAt *time.Time `json:"terminateAt,omitempty"`
	// SourceDestCheckOff says ModifyInstanceAttribute turned the source/destination check off:
	// the instance then receives packets for addresses not its own (routes to it).
	SourceDestCheckOff bool `json:"sourceDestCheckOff,omitempty"`
}

// ec2Reservation is one RunInstances call: its instances, and its client token with a digest
// of its parameters (a retry with the same token answers the same reservation).
type ec2Reservation struct {
	ReservationID string    `json:"reservationId"`
	ClientToken   string    `json:"clientToken,omitempty"`
	Request       string    `json:"request,omitempty"`
	InstanceIDs   []string  `json:"instanceIds"`
	Time          time.Time `json:"time"`
}

// EC2's instance state codes.
// stateCode is EC2's code of an instance state name.
func stateCode(state string) int {
	switch state {
	case "running":
		return 16
	case "shutting-down":
		return 32
	case "terminated":
		return 48
	case "stopping":
		return 64
	case "stopped":
		return 80
	}
	return 0 // pending
}

const (
	// terminatedVisible is how long a terminated instance stays in DescribeInstances (EC2: about
	// an hour).
	terminatedVisible = time.Hour
	// instanceLimit caps the instances that are not terminated: each is a real machine here.
	instanceLimit = 32
	// userDataLimit is EC2's limit on user data (decoded).
	userDataLimit = 16 << 10
	// machineCheckEvery is how often the machines are listed to notice one gone or stopped.
	machineCheckEvery = 5 * time.Second
	// machineRetry is how long a failed stop or removal waits before it is tried again.
	machineRetry = 5 * time.Second
)

// instanceRuntime is what the emulator keeps of its instances besides the state: the cancel
// functions of launches in progress (a termination cancels its launch) and when the machines
// were listed last. Guarded by s.Mu.
type instanceRuntime struct {
	cancels   map[string]context.CancelFunc
	lastCheck time.Time
	// warned is the listing error warned about last; listFailures counts the failures in a row.
	warned       string
	listFailures int
	// routes is the digest of the instance routes the machines' network carries (routesSet: it
	// was given since the start); routesWarned the last error about them.
	routes       string
	routesSet    bool
	routesWarned string
	routesRetry  time.Time // after a failure, when to try again
}

func (s *Server) instances() map[string]*ec2Instance {
	e := s.ec2()
	if e.Instances == nil {
		e.Instances = map[string]*ec2Instance{}
	}
	if e.Reservations == nil {
		e.Reservations = map[string]*ec2Reservation{}
	}
	return e.Instances
}

func instanceNotFound(id string) error {
	if !strings.HasPrefix(id, "i-") {
		return errf(400, "InvalidInstanceID.Malformed", "Invalid id: \"%s\" (expecting \"i-...\")", id)
	}
	return errf(400, "InvalidInstanceID.NotFound", "The instance ID '%s' does not exist", id)
}

// live reports whether the instance holds its machine and address (it is not terminated).
func (in *ec2Instance) live() bool { return in.State != "terminated" }

// userReason is EC2's StateTransitionReason of a user's request at t.
func userReason(t time.Time) string {
	return "User initiated (" + t.UTC().Format("2006-01-02 15:04:05") + " GMT)"
}

// setState moves in to state at t with EC2's reasons.
func (in *ec2Instance) setState(state string, t time.Time, reason string, sr *ec2StateReason) {
	in.State, in.Since, in.Reason, in.StateReason = state, t, reason, sr
}

var (
	reasonUserShutdown  = &ec2StateReason{"Client.UserInitiatedShutdown", "Client.UserInitiatedShutdown: User initiated shutdown"}
	reasonInsideStop    = &ec2StateReason{"Client.InstanceInitiatedShutdown", "Client.InstanceInitiatedShutdown: Instance initiated shutdown"}
	reasonPending       = &ec2StateReason{"pending", "pending"}
	reasonLaunchFailure = &ec2StateReason{"Server.InternalError", "Server.InternalError: Internal error on launch"}
)

func serverError(msg string) *ec2StateReason {
	return &ec2StateReason{"Server.InternalError", "Server.InternalError: " + msg}
}

// privateDNS is the instance's private DNS name (ip-10-0-1-5.ec2.internal in us-east-1).
func (s *Server) privateDNS(ip string) string {
	if ip == "" {
		return ""
	}
	host := hostnameOf(ip)
	if s.St.Region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + s.St.Region + ".compute.internal"
}

// hostnameOf is EC2's host name of a private address: ip-10-0-1-5.
func hostnameOf(ip string) string { return "ip-" + strings.ReplaceAll(ip, ".", "-") }

// usedIPs are the addresses of subnet held by instances and NAT gateways.
func (s *Server) usedIPs(subnet string) map[string]bool {
	used := map[string]bool{}
	for _, in := range s.instances() {
		if in.SubnetID == subnet && in.live() {
			used[in.PrivateIP] = true
		}
	}
	// A load balancer's addresses, taken from the top of the subnet down.
	for _, ip := range s.elbSubnetAddresses(subnet) {
		used[ip] = true
	}
	for _, n := range s.ec2().NatGateways {
		if n.SubnetID == subnet && n.State != "deleted" {
			for _, a := range n.Addresses {
				used[a.PrivateIP] = true
			}
		}
	}
	return used
}

// usable reports whether ip is an address of pfx that EC2 gives instances: not the first four
// (network, VPC router, DNS, reserved) nor the last (broadcast).
func usable(pfx netip.Prefix, ip netip.Addr) bool {
	if !pfx.Contains(ip) {
		return false
	}
	first := pfx.Addr()
	for i := 0; i < 4; i++ {
		if ip == first {
			return false
		}
		first = first.Next()
	}
	size := uint32(1) << (32 - pfx.Bits())
	b := pfx.Addr().As4()
	last := (uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])) + size - 1
	lb := ip.As4()
	return uint32(lb[0])<<24|uint32(lb[1])<<16|uint32(lb[2])<<8|uint32(lb[3]) != last
}

// freeIPs returns up to n free addresses of sn, lowest first.
func (s *Server) freeIPs(sn *ec2Subnet, n int, used map[string]bool) []string {
	pfx, _ := parseCIDR(sn.CidrBlock)
	var out []string
	for ip := pfx.Addr(); pfx.Contains(ip) && len(out) < n; ip = ip.Next() {
		if usable(pfx, ip) && !used[ip.String()] {
			out = append(out, ip.String())
		}
	}
	return out
}

// requestDigest is a digest of the parameters of a RunInstances call (its client token aside).
func requestDigest(p params) string {
	var parts []string
	for _, k := range sortedKeys(p) {
		if k == "ClientToken" || k == "Action" || k == "Version" {
			continue
		}
		parts = append(parts, k+"="+strings.Join(p[k], "\x00"))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:])
}

// runInstancesArgs are the checked parameters of RunInstances.
type runInstancesArgs struct {
	ami          ami
	imageRef     string
	instanceType string
	min, max     int
	subnet       *ec2Subnet
	groups       []string
	key          *ec2KeyPair
	userData     string
	privateIP    string
	tags         []ec2Tag
}

func positive(p params, k string) (int, error) {
	v, err := p.required(k)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, errf(400, "InvalidParameterValue", "Value (%s) for parameter %s is invalid. Expected a positive integer.", v, strings.ToLower(k[:1])+k[1:])
	}
	return n, nil
}

// first is the first non-empty of vs.
func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// runInstancesArgs checks RunInstances' parameters against the emulator's image, catalogue,
// network and key pairs, in the order EC2 answers them.
func (s *Server) runInstancesArgs(p params) (*runInstancesArgs, error) {
	img, err := s.images.get()
	if err != nil {
		return nil, noCapacity(err)
	}
	a := &runInstancesArgs{ami: s.amiOf(img), imageRef: img.Ref}
	if err := a.checkImageAndCounts(p); err != nil {
		return nil, err
	}
	if err := a.checkInstanceType(p); err != nil {
		return nil, err
	}
	nic := params{}
	if nics := p.structs("NetworkInterface"); len(nics) > 0 {
		nic = nics[0]
	}
	snID, err := s.runSubnetAndGroups(a, p, nic)
	if err != nil {
		return nil, err
	}
	if err := s.runKeyAndUserData(a, p); err != nil {
		return nil, err
	}
	if err := s.runPrivateIP(a, p, nic, snID); err != nil {
		return nil, err
	}
	if err := a.checkTags(p); err != nil {
		return nil, err
	}
	return a, nil
}

// checkImageAndCounts checks ImageId is the emulator's AMI and MinCount and MaxCount are positive
// and in order.
func (a *runInstancesArgs) checkImageAndCounts(p params) error {
	imageID, err := p.required("ImageId")
	if err != nil {
		return err
	}
	if imageID != a.ami.ID {
		return amiNotFound(imageID)
	}
	if a.min, err = positive(p, "MinCount"); err != nil {
		return err
	}
	if a.max, err = positive(p, "MaxCount"); err != nil {
		return err
	}
	if a.min > a.max {
		return errf(400, "InvalidParameterValue", "Value (%d) for parameter maxCount is invalid. Must be greater than or equal to minCount (%d).", a.max, a.min)
	}
	return nil
}

// checkInstanceType checks InstanceType is given, in the emulator's catalogue, and of the AMI's
// architecture.
func (a *runInstancesArgs) checkInstanceType(p params) error {
	a.instanceType = p.get("InstanceType")
	if a.instanceType == "" {
		return errf(400, "InvalidParameterValue", "nuv emulator: give InstanceType (EC2's default, m1.small, is not in the emulator's catalogue)")
	}
	_, _, arch, ok := lookupInstanceType(a.instanceType)
	if !ok {
		return errf(400, "InvalidParameterValue", "Invalid value '%s' for InstanceType.", a.instanceType)
	}
	if arch != a.ami.Arch {
		return errf(400, "InvalidParameterValue", "The architecture '%s' of the specified instance type does not match the architecture '%s' of the specified AMI. Specify an instance type and an AMI that have matching architectures, and try again.", arch, a.ami.Arch)
	}
	return nil
}

// runSubnetAndGroups resolves the subnet (of the request or its first network interface) and the
// security groups, by ID or by name, all in the subnet's VPC (its default group when none is
// given); it returns the subnet's ID.
func (s *Server) runSubnetAndGroups(a *runInstancesArgs, p, nic params) (string, error) {
	snID := first(p.get("SubnetId"), nic.get("SubnetId"))
	if snID == "" {
		return "", errf(400, "VPCIdNotSpecified", "No default VPC for this user. GroupName is only supported for EC2-Classic and default VPC. (nuv emulator: give SubnetId)")
	}
	if a.subnet = s.ec2().Subnets[snID]; a.subnet == nil {
		return "", errf(400, "InvalidSubnetID.NotFound", "The subnet ID '%s' does not exist", snID)
	}
	ids := append(p.list("SecurityGroupId"), nic.list("SecurityGroupId")...)
	for _, name := range p.list("SecurityGroup") {
		found := ""
		for _, g := range s.ec2().SecurityGroups {
			if g.VpcID == a.subnet.VpcID && g.GroupName == name {
				found = g.GroupID
			}
		}
		if found == "" {
			return "", errf(400, "InvalidGroup.NotFound", "The security group '%s' does not exist in VPC '%s'", name, a.subnet.VpcID)
		}
		ids = append(ids, found)
	}
	for _, id := range ids {
		g := s.ec2().SecurityGroups[id]
		if g == nil {
			return "", errf(400, "InvalidGroup.NotFound", "The security group '%s' does not exist", id)
		}
		if g.VpcID != a.subnet.VpcID {
			return "", errf(400, "InvalidParameter", "Security group %s and subnet %s belong to different networks.", id, snID)
		}
		if !contains(a.groups, id) {
			a.groups = append(a.groups, id)
		}
	}
	if len(a.groups) == 0 {
		if v := s.ec2().Vpcs[a.subnet.VpcID]; v != nil && v.DefaultSG != "" {
			a.groups = []string{v.DefaultSG}
		}
	}
	return snID, nil
}

// runKeyAndUserData checks KeyName names a key pair and UserData is base64 within EC2's limit.
func (s *Server) runKeyAndUserData(a *runInstancesArgs, p params) error {
	if name := p.get("KeyName"); name != "" {
		if a.key = s.keyPairs()[name]; a.key == nil {
			return keyPairNotFound(name)
		}
	}
	if ud := p.get("UserData"); ud != "" {
		raw, err := base64.StdEncoding.DecodeString(ud)
		if err != nil {
			return errf(400, "InvalidParameterValue", "Invalid BASE64 encoding of user data.")
		}
		if len(raw) > userDataLimit {
			return errf(400, "InvalidParameterValue", "User data is limited to 16384 bytes (got %d)", len(raw))
		}
		a.userData = ud
	}
	return nil
}

// runPrivateIP checks a requested private address (of the request or its network interface) is a
// usable, free address of subnet snID, for a single instance.
func (s *Server) runPrivateIP(a *runInstancesArgs, p, nic params, snID string) error {
	ip := first(p.get("PrivateIpAddress"), nic.get("PrivateIpAddress"))
	if ip == "" {
		return nil
	}
	addr, err := netip.ParseAddr(ip)
	pfx, _ := parseCIDR(a.subnet.CidrBlock)
	if err != nil || !addr.Is4() || !pfx.Contains(addr) {
		return errf(400, "InvalidParameterValue", "Address %s does not fall within the subnet's address range", ip)
	}
	if !usable(pfx, addr) {
		return errf(400, "InvalidParameterValue", "Address %s is reserved by EC2 in subnet %s (the first four addresses and the last one of a subnet are)", ip, snID)
	}
	if a.max > 1 {
		return errf(400, "InvalidParameterCombination", "Cannot specify a private IP address when launching more than one instance (maxCount %d)", a.max)
	}
	if s.usedIPs(snID)[ip] {
		return errf(400, "InvalidIPAddress.InUse", "Address %s is in use.", ip)
	}
	a.privateIP = ip
	return nil
}

// checkTags takes the instance tags of the TagSpecifications; tags of volumes and network
// interfaces are accepted and dropped (the emulator's instances have none of their own).
func (a *runInstancesArgs) checkTags(p params) error {
	for _, spec := range p.structs("TagSpecification") {
		switch rt := spec.get("ResourceType"); rt {
		case "instance":
			for _, t := range spec.structs("Tag") {
				a.tags = setTag(a.tags, t.get("Key"), t.get("Value"))
			}
		case "volume", "network-interface":
			// the emulator's instances have no EBS volumes or network interfaces of their own
		default:
			return errf(400, "InvalidParameterValue", "'%s' is not a valid taggable resource type for this operation.", rt)
		}
	}
	return nil
}

func (s *Server) ec2RunInstances(p params) (any, error) {
	token := p.get("ClientToken")
	digest := requestDigest(p)
	if token != "" {
		for _, r := range s.ec2().Reservations {
			if r.ClientToken != token {
				continue
			}
			if r.Request != digest {
				return nil, errf(400, "IdempotentParameterMismatch", "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).")
			}
			return s.reservationWire(r, nil), nil
		}
	}
	a, err := s.runInstancesArgs(p)
	if err != nil {
		return nil, err
	}
	active := 0
	for _, in := range s.instances() {
		if in.live() {
			active++
		}
	}
	n := a.max
	if n > instanceLimit-active {
		n = instanceLimit - active
	}
	if n < a.min {
		return nil, errf(400, "InstanceLimitExceeded", "You have requested more instances (%d) than your current instance limit of %d allows for the specified instance type. (nuv emulator: each instance is a real machine on this host; %d are in use)", a.min, instanceLimit, active)
	}
	ips := []string{a.privateIP}
	if a.privateIP == "" {
		ips = s.freeIPs(a.subnet, n, s.usedIPs(a.subnet.SubnetID))
		if len(ips) < a.min {
			return nil, errf(400, "InsufficientFreeAddressesInSubnet", "There are not enough free addresses in subnet '%s' to satisfy the requested number of instances.", a.subnet.SubnetID)
		}
		n = len(ips)
	}
	now := time.Now().UTC()
	r := &ec2Reservation{ReservationID: awsID("r"), ClientToken: token, Request: digest, Time: now}
	if token == "" {
		r.Request = ""
	}
	for i := 0; i < n; i++ {
		in := &ec2Instance{InstanceID: awsID("i"), ReservationID: r.ReservationID, ImageID: a.ami.ID, ImageRef: a.imageRef,
			InstanceType: a.instanceType, Architecture: a.ami.Arch, SubnetID: a.subnet.SubnetID, VpcID: a.subnet.VpcID,
			Zone: a.subnet.AvailabilityZone, PrivateIP: ips[i], Groups: a.groups, Tags: append([]ec2Tag(nil), a.tags...),
			UserData: a.userData, ClientToken: token, LaunchIndex: i, LaunchTime: now.Truncate(time.Second), Due: now.Add(s.Delay)}
		if a.key != nil {
			in.KeyName, in.AuthorizedKey = a.key.KeyName, a.key.PublicKey
		}
		in.setState("pending", now, "", reasonPending)
		s.instanceFaults(in, p, now)
		s.instances()[in.InstanceID] = in
		a.subnet.AvailableIPAddressCount--
		r.InstanceIDs = append(r.InstanceIDs, in.InstanceID)
	}
	s.ec2().Reservations[r.ReservationID] = r
	if !contains(s.ec2().MachineNetworks, a.subnet.SubnetID) {
		s.ec2().MachineNetworks = append(s.ec2().MachineNetworks, a.subnet.SubnetID)
	}
	s.Log.Infof("emulator: EC2 RunInstances %s: %s in %s (%s)", r.ReservationID, strings.Join(r.InstanceIDs, ", "), a.subnet.SubnetID, strings.Join(ips[:n], ", "))
	return s.reservationWire(r, nil), nil
}

// instanceFaults applies the injected instance faults of RunInstances to in: a launch that fails,
// an instance terminated some seconds after its launch. Each instance launched is one call of
// these faults (every: 2 hits every second instance).
func (s *Server) instanceFaults(in *ec2Instance, p params, now time.Time) {
	s.Calls["ec2:instance-launch"]++
	for _, kind := range []string{faultLaunchFailure, faultTerminateAfter} {
		f := emucore.Hit(s.Faults, s.Calls["ec2:instance-launch"], func(f *Fault) bool {
			return f.Kind == kind &&
				!strings.HasPrefix(f.Resource, "i-") && (f.Resource == "" || paramsName(p, f.Resource))
		})
		if f == nil {
			continue
		}
		s.Log.V(1).Infof("emulator: fault %s on instance %s", f.Kind, in.InstanceID)
		if kind == faultLaunchFailure {
			in.FailLaunch = true
		} else {
			at := now.Add(time.Duration(f.Seconds * float64(time.Second)))
			in.TerminateAt = &at
		}
	}
}

// paramsName reports whether a parameter of p has the value res.
func paramsName(p params, res string) bool {
	for _, vs := range p {
		if contains(vs, res) {
			return true
		}
	}
	return false
}

// The XML forms of instances.
type xmlInstanceState struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

type xmlGroup struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

type xmlInstance struct {
	InstanceID     string           `xml:"instanceId"`
	ImageID        string           `xml:"imageId"`
	State          xmlInstanceState `xml:"instanceState"`
	PrivateDNSName string           `xml:"privateDnsName"`
	DNSName        string           `xml:"dnsName"`
	Reason         string           `xml:"reason"`
	KeyName        string           `xml:"keyName,omitempty"`
	AmiLaunchIndex int              `xml:"amiLaunchIndex"`
	InstanceType   string           `xml:"instanceType"`
	LaunchTime     time.Time        `xml:"launchTime"`
	Placement      struct {
		AvailabilityZone string `xml:"availabilityZone"`
		GroupName        string `xml:"groupName"`
		Tenancy          string `xml:"tenancy"`
	} `xml:"placement"`
	Monitoring struct {
		State string `xml:"state"`
	} `xml:"monitoring"`
	SubnetID           string          `xml:"subnetId,omitempty"`
	VpcID              string          `xml:"vpcId,omitempty"`
	PrivateIP          string          `xml:"privateIpAddress,omitempty"`
	SourceDestCheck    bool            `xml:"sourceDestCheck"`
	Groups             []xmlGroup      `xml:"groupSet>item"`
	StateReason        *ec2StateReason `xml:"stateReason,omitempty"`
	Architecture       string          `xml:"architecture"`
	RootDeviceType     string          `xml:"rootDeviceType"`
	RootDeviceName     string          `xml:"rootDeviceName"`
	VirtualizationType string          `xml:"virtualizationType"`
	ClientToken        string          `xml:"clientToken,omitempty"`
	Tags               []ec2Tag        `xml:"tagSet>item"`
	Hypervisor         string          `xml:"hypervisor"`
	EbsOptimized       bool            `xml:"ebsOptimized"`
	EnaSupport         bool            `xml:"enaSupport"`
	PlatformDetails    string          `xml:"platformDetails"`
	UsageOperation     string          `xml:"usageOperation"`
}

func (s *Server) instanceWire(in *ec2Instance) xmlInstance {
	x := xmlInstance{InstanceID: in.InstanceID, ImageID: in.ImageID, State: xmlInstanceState{stateCode(in.State), in.State},
		Reason: in.Reason, KeyName: in.KeyName, AmiLaunchIndex: in.LaunchIndex, InstanceType: in.InstanceType, LaunchTime: in.LaunchTime,
		SubnetID: in.SubnetID, VpcID: in.VpcID, SourceDestCheck: !in.SourceDestCheckOff, StateReason: in.StateReason, Architecture: in.Architecture,
		RootDeviceType: "ebs", RootDeviceName: "/dev/xvda", VirtualizationType: "hvm", ClientToken: in.ClientToken, Tags: in.Tags,
		Hypervisor: "xen", EnaSupport: true, PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances"}
	x.Placement.AvailabilityZone, x.Placement.Tenancy = in.Zone, "default"
	x.Monitoring.State = "disabled"
	if in.live() {
		x.PrivateIP, x.PrivateDNSName = in.PrivateIP, s.privateDNS(in.PrivateIP)
		for _, g := range in.Groups {
			name := ""
			if sg := s.ec2().SecurityGroups[g]; sg != nil {
				name = sg.GroupName
			}
			x.Groups = append(x.Groups, xmlGroup{g, name})
		}
	}
	return x
}

type xmlReservation struct {
	ReservationID string        `xml:"reservationId"`
	OwnerID       string        `xml:"ownerId"`
	Groups        []xmlGroup    `xml:"groupSet>item"`
	Instances     []xmlInstance `xml:"instancesSet>item"`
}

// reservationWire is r with its instances that keep passes (nil: all).
func (s *Server) reservationWire(r *ec2Reservation, keep func(*ec2Instance) bool) *struct {
	ec2Meta
	xmlReservation
} {
	out := &struct {
		ec2Meta
		xmlReservation
	}{xmlReservation: xmlReservation{ReservationID: r.ReservationID, OwnerID: s.St.Account}}
	for _, id := range r.InstanceIDs {
		if in := s.instances()[id]; in != nil && (keep == nil || keep(in)) {
			out.Instances = append(out.Instances, s.instanceWire(in))
		}
	}
	return out
}

// instanceFields are the values of an instance the DescribeInstances filters look at.
func (s *Server) instanceFields(in *ec2Instance) map[string][]string {
	f := map[string][]string{"instance-id": {in.InstanceID}, "instance-state-name": {in.State}, "instance-state-code": {strconv.Itoa(stateCode(in.State))},
		"vpc-id": {in.VpcID}, "subnet-id": {in.SubnetID}, "image-id": {in.ImageID}, "instance-type": {in.InstanceType}, "key-name": {in.KeyName},
		"availability-zone": {in.Zone}, "reservation-id": {in.ReservationID}, "architecture": {in.Architecture}, "client-token": {in.ClientToken},
		"owner-id": {s.St.Account}, "state-reason-code": nil, "source-dest-check": {strconv.FormatBool(!in.SourceDestCheckOff)}}
	if in.StateReason != nil {
		f["state-reason-code"] = []string{in.StateReason.Code}
	}
	if in.live() {
		f["private-ip-address"] = []string{in.PrivateIP}
		f["network-interface.addresses.private-ip-address"] = []string{in.PrivateIP}
		f["private-dns-name"] = []string{s.privateDNS(in.PrivateIP)}
		f["instance.group-id"] = in.Groups
	}
	return f
}

// selectInstances are the instances InstanceId.N names (all when none; an unknown one is
// InvalidInstanceID.NotFound) whose tags and fields match the filters.
func (s *Server) selectInstances(p params) ([]*ec2Instance, error) {
	return selectEC2(s.instances(), p.list("InstanceId"), instanceNotFound, p.filters(), nil,
		func(in *ec2Instance) []ec2Tag { return in.Tags }, s.instanceFields)
}

func (s *Server) ec2DescribeInstances(p params) (any, error) {
	sel, err := s.selectInstances(p)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	var rids []string
	for _, in := range sel {
		keep[in.InstanceID] = true
		if !contains(rids, in.ReservationID) {
			rids = append(rids, in.ReservationID)
		}
	}
	rs := s.ec2().Reservations
	sort.Slice(rids, func(i, j int) bool {
		a, b := rs[rids[i]], rs[rids[j]]
		if a == nil || b == nil || a.Time.Equal(b.Time) {
			return rids[i] < rids[j]
		}
		return a.Time.Before(b.Time)
	})
	out := &struct {
		ec2Meta
		Reservations []xmlReservation `xml:"reservationSet>item"`
	}{}
	for _, rid := range rids {
		r := rs[rid]
		if r == nil {
			continue
		}
		out.Reservations = append(out.Reservations, s.reservationWire(r, func(in *ec2Instance) bool { return keep[in.InstanceID] }).xmlReservation)
	}
	return out, nil
}

type xmlStateChange struct {
	InstanceID    string           `xml:"instanceId"`
	CurrentState  xmlInstanceState `xml:"currentState"`
	PreviousState xmlInstanceState `xml:"previousState"`
}

// changeStates applies change to each instance InstanceId.N names (all must exist) and answers
// their state changes; change returns an error to refuse an instance (nothing changes then).
func (s *Server) changeStates(p params, check func(in *ec2Instance) error, change func(in *ec2Instance, now time.Time)) (any, error) {
	ids := p.list("InstanceId")
	if len(ids) == 0 {
		return nil, errf(400, "MissingParameter", "The request must contain the parameter InstanceId")
	}
	for _, id := range ids {
		in := s.instances()[id]
		if in == nil {
			return nil, instanceNotFound(id)
		}
		if err := check(in); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC()
	out := &struct {
		ec2Meta
		Changes []xmlStateChange `xml:"instancesSet>item"`
	}{}
	for _, id := range ids {
		in := s.instances()[id]
		prev := xmlInstanceState{stateCode(in.State), in.State}
		change(in, now)
		out.Changes = append(out.Changes, xmlStateChange{id, xmlInstanceState{stateCode(in.State), in.State}, prev})
	}
	return out, nil
}

func incorrectState(in *ec2Instance, what string) error {
	return errf(400, "IncorrectInstanceState", "The instance '%s' is not in a state from which it can be %s.", in.InstanceID, what)
}

func (s *Server) ec2StopInstances(p params) (any, error) {
	return s.changeStates(p, func(in *ec2Instance) error {
		switch in.State {
		case "running", "stopping", "stopped":
			return nil
		}
		return incorrectState(in, "stopped")
	}, func(in *ec2Instance, now time.Time) {
		if in.State == "running" {
			in.setState("stopping", now, userReason(now), reasonUserShutdown)
			in.RetryAt = time.Time{}
		}
	})
}

func (s *Server) ec2StartInstances(p params) (any, error) {
	return s.changeStates(p, func(in *ec2Instance) error {
		switch in.State {
		case "pending", "running", "stopped":
			return nil
		}
		return incorrectState(in, "started")
	}, func(in *ec2Instance, now time.Time) {
		if in.State == "stopped" {
			in.setState("pending", now, "", reasonPending)
			in.Booted, in.Due = false, now.Add(s.Delay)
		}
	})
}

func (s *Server) ec2TerminateInstances(p params) (any, error) {
	return s.changeStates(p, func(in *ec2Instance) error { return nil }, func(in *ec2Instance, now time.Time) {
		if in.State != "terminated" && in.State != "shutting-down" {
			s.beginTermination(in, now, userReason(now), reasonUserShutdown)
		}
	})
}

// beginTermination moves in to shutting-down, cancelling its launch if one runs; the reconciler
// removes its machine. s.Mu is held.
func (s *Server) beginTermination(in *ec2Instance, now time.Time, reason string, sr *ec2StateReason) {
	in.setState("shutting-down", now, reason, sr)
	in.Booted, in.RetryAt = false, time.Time{}
	if cancel := s.inst.cancels[in.InstanceID]; cancel != nil {
		cancel()
	}
}

// finishTermination makes in terminated: its address returns to the subnet. s.Mu is held.
func (s *Server) finishTermination(in *ec2Instance, now time.Time) {
	in.State, in.Since, in.Booted = "terminated", now, false
	in.TerminatedAt = &now
	if sn := s.ec2().Subnets[in.SubnetID]; sn != nil {
		sn.AvailableIPAddressCount++
	}
}

type xmlStatusSummary struct {
	Status  string `xml:"status"`
	Details []struct {
		Name   string `xml:"name"`
		Status string `xml:"status"`
	} `xml:"details>item"`
}

func statusSummary(status, detail string) xmlStatusSummary {
	x := xmlStatusSummary{Status: status}
	if detail != "" {
		x.Details = append(x.Details, struct {
			Name   string `xml:"name"`
			Status string `xml:"status"`
		}{"reachability", detail})
	}
	return x
}

// ec2DescribeInstanceStatus answers the status checks: a running instance's machine is up, so
// both checks pass; other states are not-applicable. Without IncludeAllInstances only running
// instances are listed, as on EC2.
func (s *Server) ec2DescribeInstanceStatus(p params) (any, error) {
	sel, err := selectEC2(s.instances(), p.list("InstanceId"), instanceNotFound, nil, nil,
		func(in *ec2Instance) []ec2Tag { return in.Tags }, s.instanceFields)
	if err != nil {
		return nil, err
	}
	type item struct {
		InstanceID       string           `xml:"instanceId"`
		AvailabilityZone string           `xml:"availabilityZone"`
		State            xmlInstanceState `xml:"instanceState"`
		SystemStatus     xmlStatusSummary `xml:"systemStatus"`
		InstanceStatus   xmlStatusSummary `xml:"instanceStatus"`
	}
	all := p.boolean("IncludeAllInstances", false)
	out := &struct {
		ec2Meta
		Items []item `xml:"instanceStatusSet>item"`
	}{}
	filters := p.filters()
	for _, in := range sel {
		if in.State != "running" && !all {
			continue
		}
		status, detail := "not-applicable", ""
		if in.State == "running" {
			status, detail = "ok", "passed"
		}
		it := item{in.InstanceID, in.Zone, xmlInstanceState{stateCode(in.State), in.State}, statusSummary(status, detail), statusSummary(status, detail)}
		if !matchFilters(filters, nil, func(n string) []string {
			return map[string][]string{"instance-state-name": {in.State}, "instance-state-code": {strconv.Itoa(stateCode(in.State))},
				"availability-zone": {in.Zone}, "instance-status.status": {status}, "system-status.status": {status},
				"instance-status.reachability": {detail}, "system-status.reachability": {detail}}[n]
		}) {
			continue
		}
		out.Items = append(out.Items, it)
	}
	return out, nil
}

// instanceDeps are the instances (not terminated) that keep pass: what a subnet, a VPC or a
// security group cannot be deleted under.
func (s *Server) instanceDeps(keep func(*ec2Instance) bool) []string {
	var out []string
	for _, id := range sortedKeys(s.instances()) {
		if in := s.instances()[id]; in.live() && keep(in) {
			out = append(out, id)
		}
	}
	return out
}

// subnetDeleted queues the removal of the machine network of a deleted subnet. s.Mu is held.
func (s *Server) subnetDeleted(id string) {
	e := s.ec2()
	for i, sn := range e.MachineNetworks {
		if sn == id {
			e.MachineNetworks = append(e.MachineNetworks[:i], e.MachineNetworks[i+1:]...)
			e.NetworksToRemove = append(e.NetworksToRemove, id)
			return
		}
	}
}

// taggableInstance finds the tags of an instance or a key pair (by its key-... id).
func (s *Server) taggableInstance(id string) (*[]ec2Tag, string, bool) {
	if in := s.instances()[id]; in != nil {
		return &in.Tags, "instance", true
	}
	if k := s.keyPairByID(id); k != nil {
		return &k.Tags, "key-pair", true
	}
	return nil, "", false
}

// taggableInstanceIDs are the ids DescribeTags lists besides the network's: instances and key pairs.
func (s *Server) taggableInstanceIDs() []string {
	ids := sortedKeys(s.instances())
	var keys []string
	for _, k := range s.keyPairs() {
		keys = append(keys, k.KeyPairID)
	}
	sort.Strings(keys)
	return append(ids, keys...)
}
