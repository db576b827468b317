// Package awsnet is the AWS network and client plumbing nuv's AWS providers share: the session
// (SDK configuration from the default chain, the endpoint of nuv's emulator or AWS, the credentials
// checked once), the waits, and the network a cluster lives in (a VPC with a public and a private
// subnet per zone, an internet gateway, NAT gateways, route tables and security groups): planning
// it (NetworkDesired, CarveSubnets), making and deleting it (Exec), writing it as Terraform (TF)
// and observing it (Observation, Session.ObserveNetwork, Session.Sweep). The EKS provider (package
// eks) and the self-managed provider embed Exec and TF in their own change and writer types, so
// the network's kinds sit in their kit.Kinds beside theirs.
package awsnet
