package eks

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet"
	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// session is one AWS session (awsnet.Session) with the clients of the services besides EC2.
type session struct {
	*awsnet.Session
	eks *eks.Client
	iam *iam.Client
}

// session returns the clients for a spec, loading the configuration from the SDK's default chain
// and checking the credentials with STS GetCallerIdentity before anything else is asked.
func (p *Provider) session(ctx context.Context, c *spec.Cluster, sec Section) (*session, error) {
	as, err := p.sessions.Open(ctx, p.getenv, p.Poll, c.Spec.Region, sec.Endpoint, sec.Profile)
	if err != nil {
		return nil, err
	}
	return p.clients.Of(as, func(as *awsnet.Session) *session {
		return &session{Session: as, eks: eks.NewFromConfig(as.Config), iam: iam.NewFromConfig(as.Config)}
	}), nil
}

// envSession is the session of the environment's account and region (List, Tagged).
func (p *Provider) envSession(ctx context.Context) (*session, error) {
	return p.session(ctx, &spec.Cluster{}, Section{})
}

// clusterVersions returns the Kubernetes versions EKS offers and its default.
func (s *session) clusterVersions(ctx context.Context) ([]string, string, error) {
	var out []string
	def := ""
	pg := eks.NewDescribeClusterVersionsPaginator(s.eks, &eks.DescribeClusterVersionsInput{})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("ask EKS which versions it offers (eks:DescribeClusterVersions): %s", awsnet.APIMessage(err))
		}
		for _, v := range page.ClusterVersions {
			out = append(out, aws.ToString(v.ClusterVersion))
			if v.DefaultVersion {
				def = aws.ToString(v.ClusterVersion)
			}
		}
	}
	slices.Sort(out)
	if def == "" && len(out) > 0 {
		def = out[len(out)-1]
	}
	return out, def, nil
}

// addonVersion returns the version of add-on name to run on Kubernetes k: want if EKS offers it
// for k, else (want empty) the version EKS reports as the default.
func (s *session) addonVersion(ctx context.Context, name, want, k string) (string, error) {
	var offered []string
	def := ""
	pg := eks.NewDescribeAddonVersionsPaginator(s.eks, &eks.DescribeAddonVersionsInput{AddonName: aws.String(name), KubernetesVersion: aws.String(k)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if awsnet.APICode(err) == "ResourceNotFoundException" {
			return "", fmt.Errorf("EKS has no add-on %q", name)
		}
		if err != nil {
			return "", fmt.Errorf("ask EKS for %s versions (eks:DescribeAddonVersions): %s", name, awsnet.APIMessage(err))
		}
		for _, a := range page.Addons {
			for _, v := range a.AddonVersions {
				for _, c := range v.Compatibilities {
					if aws.ToString(c.ClusterVersion) != k {
						continue
					}
					offered = append(offered, aws.ToString(v.AddonVersion))
					if c.DefaultVersion {
						def = aws.ToString(v.AddonVersion)
					}
				}
			}
		}
	}
	if want == "" {
		if def == "" {
			return "", fmt.Errorf("EKS reports no default version of %s for Kubernetes %s", name, k)
		}
		return def, nil
	}
	if !slices.Contains(offered, want) {
		return "", fmt.Errorf("version %q of %s is not offered for Kubernetes %s (offered: %s)", want, name, k, strings.Join(offered, ", "))
	}
	return want, nil
}

// existingNetwork checks the VPC and subnets a spec names: they exist, the subnets are in the VPC,
// and they span at least two zones (EKS's rule).
func (s *session) existingNetwork(ctx context.Context, sec Section) []spec.FieldError {
	var errs []spec.FieldError
	_, err := s.EC2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{sec.VPCID}})
	if err != nil {
		if strings.Contains(awsnet.APICode(err), "NotFound") {
			return []spec.FieldError{spec.Errorf("spec.eks.vpcId", "%s does not exist in %s", sec.VPCID, s.Config.Region)}
		}
		return []spec.FieldError{spec.Errorf("spec.eks.vpcId", "ec2:DescribeVpcs: %s", awsnet.APIMessage(err))}
	}
	zones := map[string]bool{}
	for i, id := range sec.SubnetIDs {
		out, err := s.EC2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{id}})
		path := fmt.Sprintf("spec.eks.subnetIds[%d]", i)
		switch {
		case err != nil && strings.Contains(awsnet.APICode(err), "NotFound"):
			errs = append(errs, spec.Errorf(path, "%s does not exist in %s", id, s.Config.Region))
		case err != nil:
			errs = append(errs, spec.Errorf(path, "ec2:DescribeSubnets: %s", awsnet.APIMessage(err)))
		case len(out.Subnets) == 1 && aws.ToString(out.Subnets[0].VpcId) != sec.VPCID:
			errs = append(errs, spec.Errorf(path, "%s is in %s, not in the spec's VPC %s", id, aws.ToString(out.Subnets[0].VpcId), sec.VPCID))
		case len(out.Subnets) == 1:
			zones[aws.ToString(out.Subnets[0].AvailabilityZone)] = true
		}
	}
	if len(errs) == 0 && len(zones) < 2 {
		errs = append(errs, spec.Errorf("spec.eks.subnetIds", "the subnets are all in one zone; EKS needs two"))
	}
	return errs
}
