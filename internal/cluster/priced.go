package cluster

import "github.com/nuv-dev/nuv/internal/cluster/spec"

// Machines are machines of one type that a planned resource runs: what a plan's cost estimate
// prices (a node group of 3 m5.large, a control-plane instance).
type Machines struct {
	// Cloud names the price catalogue: "aws", "azure" or "gcp".
	Cloud string
	// Region is the cloud's region code (us-east-1, westeurope, us-central1).
	Region string
	// Type is the instance type, VM size or machine type.
	Type string
	// Count is how many machines run.
	Count int
	// Endpoint is the cloud API endpoint the provider uses when it is not the cloud's own (a spec's
	// endpoint); "" for the default.
	Endpoint string
	// VCPUs and MemoryGiB describe Type where its price is made of per-vCPU and per-GiB prices
	// (Compute Engine); zero elsewhere.
	VCPUs     float64
	MemoryGiB float64
}

// Priced is implemented by providers whose resources run machines a cloud prices by the hour.
type Priced interface {
	// Machines lists what the desired resource r of cluster c runs; none when it runs no machines
	// (a VPC, a role).
	Machines(c *spec.Cluster, r Resource) []Machines
}
