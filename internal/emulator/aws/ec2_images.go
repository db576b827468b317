package aws

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/companion"
)

// The emulator has one AMI: nuv's machine image, the kind node image its instances boot (systemd,
// containerd, kubelet, kubeadm, the control-plane images, openssh-server and haproxy). Its id is
// derived from the node image's tag, so it stays the same while the image does, and its name is
// nuv-machine-<Kubernetes version>-<build key>; its owner is the emulator's account.

// machineImageCache resolves the machine image once (outside the emulator's lock: resolving may
// take seconds) and keeps it; a failure is kept for a few seconds so retries do not pile up.
type machineImageCache struct {
	mu      sync.Mutex
	img     MachineImage
	ok      bool
	err     error
	errTime time.Time
}

// imageRetry is how long a failure to resolve the machine image is answered before trying again.
const imageRetry = 5 * time.Second

// resolve returns the machine image, asking m the first time.
func (c *machineImageCache) resolve(ctx context.Context, m Machines) (MachineImage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok {
		return c.img, nil
	}
	if c.err != nil && time.Since(c.errTime) < imageRetry {
		return MachineImage{}, c.err
	}
	img, err := m.Image(ctx)
	if err != nil {
		c.err, c.errTime = err, time.Now()
		return MachineImage{}, err
	}
	c.img, c.ok, c.err = img, true, nil
	return img, nil
}

// get is the resolved image, if any.
func (c *machineImageCache) get() (MachineImage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok {
		return c.img, nil
	}
	if c.err != nil {
		return MachineImage{}, c.err
	}
	return MachineImage{}, errf(500, "InternalError", "nuv emulator: the machine image is not resolved yet")
}

// needsImage are the EC2 actions that need the machine image resolved before they run.
func needsImage(service, op string) bool {
	return service == "ec2" && (op == "RunInstances" || op == "DescribeImages")
}

// prepare does the slow work an operation needs before it runs under the lock: resolving the
// machine image for RunInstances and DescribeImages. Without a container runtime that answers,
// DescribeImages still lists the images the emulator knows (see ec2DescribeImages) and
// RunInstances is refused as EC2 refuses a launch it has no capacity for.
func (s *Server) prepare(ctx context.Context, service, op string) *apiError {
	if !needsImage(service, op) {
		return nil
	}
	if _, err := s.images.resolve(ctx, s.machines); err != nil {
		s.Log.V(1).Infof("emulator: the machine image is not available: %v", err)
		if op == "RunInstances" {
			return noCapacity(err)
		}
	}
	return nil
}

// noCapacity is EC2's refusal of a launch it has no capacity for (a server error: EC2 answers
// its capacity errors with a 5xx status, which the SDKs retry), here because the container
// runtime the machines run on does not answer.
func noCapacity(err error) *apiError {
	return errf(503, "InsufficientInstanceCapacity", "We currently do not have sufficient capacity to launch the requested instances. Our system will be working on provisioning additional capacity. (nuv emulator: the container runtime its machines run on is not available: %v)", err)
}

// ami is the emulator's AMI of img.
type ami struct {
	ID, Name, Description, Arch string
	Created                     time.Time
}

func (s *Server) amiOf(img MachineImage) ami {
	tag := img.Ref[strings.LastIndex(img.Ref, ":")+1:]
	e := s.ec2()
	if e.ImagesSeen == nil {
		e.ImagesSeen = map[string]time.Time{}
	}
	if _, ok := e.ImagesSeen[img.Ref]; !ok {
		d := img.Created
		if d.IsZero() {
			d = time.Now()
		}
		e.ImagesSeen[img.Ref] = d.UTC().Truncate(time.Second)
	}
	created := e.ImagesSeen[img.Ref]
	arch := img.Architecture
	if arch == "" {
		arch = "x86_64"
	}
	return ami{ID: "ami-0" + stableHex(img.Ref, 16), Name: "nuv-machine-" + strings.TrimPrefix(tag, "v"), Arch: arch, Created: created,
		Description: "nuv machine image: Kubernetes " + img.KubernetesVersion + " with systemd, containerd, kubeadm, openssh-server and haproxy (" + img.Ref + ")"}
}

type xmlImage struct {
	ImageID            string    `xml:"imageId"`
	ImageLocation      string    `xml:"imageLocation"`
	ImageState         string    `xml:"imageState"`
	ImageOwnerID       string    `xml:"imageOwnerId"`
	CreationDate       time.Time `xml:"creationDate"`
	IsPublic           bool      `xml:"isPublic"`
	Architecture       string    `xml:"architecture"`
	ImageType          string    `xml:"imageType"`
	Name               string    `xml:"name"`
	Description        string    `xml:"description"`
	RootDeviceType     string    `xml:"rootDeviceType"`
	RootDeviceName     string    `xml:"rootDeviceName"`
	VirtualizationType string    `xml:"virtualizationType"`
	Hypervisor         string    `xml:"hypervisor"`
	EnaSupport         bool      `xml:"enaSupport"`
	PlatformDetails    string    `xml:"platformDetails"`
	UsageOperation     string    `xml:"usageOperation"`
	BootMode           string    `xml:"bootMode"`
}

// ec2DescribeImages answers the emulator's AMI when the request selects it: Owner.N (self, the
// account; other owners have no images here), ImageId.N (another id is InvalidAMIID.NotFound)
// and the filters image-id, name, state, architecture, owner-id, image-type, is-public,
// root-device-type, virtualization-type, hypervisor.
//
// Without a container runtime that answers, the images listed are those the emulator has served
// before (its state dates each image it resolved) and those its instances run.
func (s *Server) ec2DescribeImages(p params) (any, error) {
	var amis []ami
	if img, err := s.images.get(); err == nil {
		amis = append(amis, s.amiOf(img))
	} else {
		amis = s.knownAMIs()
	}
	out := &struct {
		ec2Meta
		Images []xmlImage `xml:"imagesSet>item"`
	}{}
	for _, id := range p.list("ImageId") {
		if !slices.ContainsFunc(amis, func(a ami) bool { return a.ID == id }) {
			return nil, amiNotFound(id)
		}
	}
	if owners := p.list("Owner"); len(owners) > 0 && !contains(owners, "self") && !contains(owners, s.St.Account) {
		return out, nil
	}
	for _, a := range amis {
		if ids := p.list("ImageId"); len(ids) > 0 && !contains(ids, a.ID) {
			continue
		}
		if x, ok := s.describeImage(p, a); ok {
			out.Images = append(out.Images, x)
		}
	}
	return out, nil
}

// knownAMIs are the AMIs of the machine images the state names: those dated when served and
// those the instances run, oldest first.
func (s *Server) knownAMIs() []ami {
	e := s.ec2()
	refs := map[string]bool{}
	for ref := range e.ImagesSeen {
		refs[ref] = true
	}
	for _, in := range e.Instances {
		if in.ImageRef != "" {
			refs[in.ImageRef] = true
		}
	}
	var out []ami
	for ref := range refs {
		out = append(out, s.amiOf(MachineImage{Ref: ref, KubernetesVersion: companion.KubeVersion, Architecture: ec2Arch(runtime.GOARCH)}))
	}
	slices.SortFunc(out, func(a, b ami) int { return a.Created.Compare(b.Created) })
	return out
}

// describeImage is a's entry of DescribeImages if it passes p's filters.
func (s *Server) describeImage(p params, a ami) (xmlImage, bool) {
	x := xmlImage{ImageID: a.ID, ImageLocation: s.St.Account + "/" + a.Name, ImageState: "available", ImageOwnerID: s.St.Account,
		CreationDate: a.Created.UTC().Truncate(time.Second), Architecture: a.Arch, ImageType: "machine", Name: a.Name, Description: a.Description,
		RootDeviceType: "ebs", RootDeviceName: "/dev/xvda", VirtualizationType: "hvm", Hypervisor: "xen", EnaSupport: true,
		PlatformDetails: "Linux/UNIX", UsageOperation: "RunInstances", BootMode: "uefi-preferred"}
	if !matchFilters(p.filters(), nil, func(n string) []string {
		return map[string][]string{"image-id": {x.ImageID}, "name": {x.Name}, "state": {x.ImageState}, "architecture": {x.Architecture},
			"owner-id": {x.ImageOwnerID}, "image-type": {x.ImageType}, "is-public": {"false"}, "root-device-type": {x.RootDeviceType},
			"virtualization-type": {x.VirtualizationType}, "hypervisor": {x.Hypervisor}, "description": {x.Description}}[n]
	}) {
		return xmlImage{}, false
	}
	return x, true
}

func amiNotFound(id string) error {
	if !strings.HasPrefix(id, "ami-") {
		return errf(400, "InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", id)
	}
	return errf(400, "InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
}
