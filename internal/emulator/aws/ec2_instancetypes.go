package aws

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nuv-dev/nuv/internal/lazy"
)

// instanceFamily is one EC2 instance family of the emulated catalogue: its sizes with vCPUs and
// memory, and its architecture.
type instanceFamily struct {
	arch  string
	sizes map[string][2]int // size -> {vCPUs, MiB}
}

// general sizes of the families below (m, c, r differ in memory per vCPU).
func sized(memPerCPU int, names ...string) map[string][2]int {
	cpus := map[string]int{"medium": 1, "large": 2, "xlarge": 4, "2xlarge": 8, "4xlarge": 16, "8xlarge": 32, "12xlarge": 48, "16xlarge": 64, "24xlarge": 96}
	out := map[string][2]int{}
	for _, n := range names {
		out[n] = [2]int{cpus[n], cpus[n] * memPerCPU * 1024}
	}
	return out
}

var burstable = lazy.Value[map[string][2]int]{New: func() map[string][2]int {
	return map[string][2]int{"nano": {2, 512}, "micro": {2, 1024}, "small": {2, 2048}, "medium": {2, 4096},
		"large": {2, 8192}, "xlarge": {4, 16384}, "2xlarge": {8, 32768}}
}}

var bigSizes = []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge"}

// instanceCatalog is the emulator's table of instance types (the families EKS node groups commonly
// use; DescribeInstanceTypes refuses the rest as AWS refuses a type that does not exist).
var instanceCatalog = lazy.Value[map[string]instanceFamily]{New: func() map[string]instanceFamily {
	return map[string]instanceFamily{
		"t3": {"x86_64", burstable.Get()}, "t3a": {"x86_64", burstable.Get()}, "t4g": {"arm64", burstable.Get()},
		"m5": {"x86_64", sized(4, bigSizes...)}, "m6i": {"x86_64", sized(4, bigSizes...)}, "m7i": {"x86_64", sized(4, bigSizes...)},
		"m6a": {"x86_64", sized(4, bigSizes...)}, "m6g": {"arm64", sized(4, bigSizes...)}, "m7g": {"arm64", sized(4, bigSizes...)},
		"c5": {"x86_64", sized(2, bigSizes...)}, "c6i": {"x86_64", sized(2, bigSizes...)}, "c7i": {"x86_64", sized(2, bigSizes...)},
		"c6g": {"arm64", sized(2, bigSizes...)}, "c7g": {"arm64", sized(2, bigSizes...)},
		"r5": {"x86_64", sized(8, bigSizes...)}, "r6i": {"x86_64", sized(8, bigSizes...)}, "r7i": {"x86_64", sized(8, bigSizes...)},
		"r6g": {"arm64", sized(8, bigSizes...)},
	}
}}

// lookupInstanceType returns the vCPUs, memory and architecture of an instance type.
func lookupInstanceType(t string) (cpus, mib int, arch string, ok bool) {
	fam, size, found := strings.Cut(t, ".")
	f, known := instanceCatalog.Get()[fam]
	if !found || !known {
		return 0, 0, "", false
	}
	s, ok := f.sizes[size]
	return s[0], s[1], f.arch, ok
}

type xmlInstanceType struct {
	InstanceType      string `xml:"instanceType"`
	CurrentGeneration bool   `xml:"currentGeneration"`
	VCPU              struct {
		DefaultVCpus int `xml:"defaultVCpus"`
	} `xml:"vCpuInfo"`
	Memory struct {
		SizeInMiB int `xml:"sizeInMiB"`
	} `xml:"memoryInfo"`
	Processor struct {
		Architectures []string `xml:"supportedArchitectures>item"`
	} `xml:"processorInfo"`
	UsageClasses []string `xml:"supportedUsageClasses>item"`
}

// ec2DescribeInstanceTypes answers DescribeInstanceTypes: the types named (InstanceType.N; one that
// does not exist is EC2's InvalidInstanceType), else the whole catalogue; the instance-type filter
// is honoured (with wildcards).
func (s *Server) ec2DescribeInstanceTypes(p params) (any, error) {
	names := p.list("InstanceType")
	var missing []string
	for _, n := range names {
		if _, _, _, ok := lookupInstanceType(n); !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return nil, errf(400, "InvalidInstanceType", "The following supplied instance types do not exist: [%s]", strings.Join(missing, ", "))
	}
	if len(names) == 0 {
		for fam, f := range instanceCatalog.Get() {
			for size := range f.sizes {
				names = append(names, fam+"."+size)
			}
		}
	}
	sort.Strings(names)
	filters := p.filters()
	out := &struct {
		ec2Meta
		Types []xmlInstanceType `xml:"instanceTypeSet>item"`
	}{}
	for _, n := range names {
		cpus, mib, arch, _ := lookupInstanceType(n)
		if !matchFilters(filters, nil, func(f string) []string {
			return map[string][]string{"instance-type": {n}, "processor-info.supported-architecture": {arch},
				"vcpu-info.default-vcpus": {fmt.Sprint(cpus)}, "memory-info.size-in-mib": {fmt.Sprint(mib)}}[f]
		}) {
			continue
		}
		it := xmlInstanceType{InstanceType: n, CurrentGeneration: true, UsageClasses: []string{"on-demand", "spot"}}
		it.VCPU.DefaultVCpus, it.Memory.SizeInMiB, it.Processor.Architectures = cpus, mib, []string{arch}
		out.Types = append(out.Types, it)
	}
	return out, nil
}
