package eks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	elbv2 "github.com/aws/aws-sdk-go-v2/service/elasticloadbalancingv2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/nuv-dev/nuv/internal/cluster/spec"
)

// session is one AWS configuration (region, endpoint, profile) with its clients and the account
// its credentials belong to, checked once.
type session struct {
	cfg      aws.Config
	endpoint string
	ec2      *ec2.Client
	eks      *eks.Client
	iam      *iam.Client
	elb      *elbv2.Client
	account  string
	arn      string
	poll     time.Duration // 0: the SDK waiters' defaults
}

// chainDescription names the places the SDK's default chain looks for credentials.
func chainDescription(profile string) string {
	if profile == "" {
		profile = "default"
	}
	return "the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), the shared credentials and config files " +
		"(AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE; profile " + profile + "), SSO, web identity, the container and the EC2 instance metadata"
}

// session returns the clients for a spec, loading the configuration from the SDK's default chain
// and checking the credentials with STS GetCallerIdentity before anything else is asked.
func (p *Provider) session(ctx context.Context, c *spec.Cluster, sec Section) (*session, error) {
	region := c.Spec.Region
	if region == "" {
		region = p.getenv("AWS_REGION")
	}
	if region == "" {
		region = p.getenv("AWS_DEFAULT_REGION")
	}
	endpoint := sec.Endpoint
	if endpoint == "" {
		endpoint = p.getenv("AWS_ENDPOINT_URL")
	}
	profile := sec.Profile
	if profile == "" {
		profile = p.getenv("AWS_PROFILE")
	}
	key := region + "|" + endpoint + "|" + profile
	p.mu.Lock()
	if s, ok := p.sessions[key]; ok {
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()

	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			// Throttling is retried with backoff; the client-side retry budget is off so a burst of
			// throttled calls during a long create never turns into a failure of its own.
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 10
				o.MaxBackoff = 20 * time.Second
				o.RateLimiter = ratelimit.None
			})
		}),
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	if endpoint != "" {
		opts = append(opts, config.WithBaseEndpoint(endpoint))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration (profile %q): %w", profile, err)
	}
	if cfg.Region == "" {
		return nil, errors.New("no AWS region: set spec.region, AWS_REGION or the profile's region")
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("no AWS credentials: tried %s: %v", chainDescription(profile), err)
	}
	// Two attempts only: an endpoint that does not answer is said at once, not after every retry.
	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.Options) { o.RetryMaxAttempts = 2 })
	if err != nil {
		where := "AWS"
		if endpoint != "" {
			where = endpoint
		}
		var ae smithy.APIError
		if !errors.As(err, &ae) {
			hint := ""
			if loopback(endpoint) {
				hint = " (is nuv's emulator up? `nuv emulator status`)"
			}
			return nil, fmt.Errorf("cannot reach %s to check the AWS credentials (sts:GetCallerIdentity in %s): %v%s", where, cfg.Region, err, hint)
		}
		return nil, fmt.Errorf("the AWS credentials from %s were refused by %s (sts:GetCallerIdentity): %s (the SDK's chain tried %s)",
			creds.Source, where, apiMessage(err), chainDescription(profile))
	}
	s := &session{cfg: cfg, endpoint: endpoint, ec2: ec2.NewFromConfig(cfg), eks: eks.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg), elb: elbv2.NewFromConfig(cfg),
		account: aws.ToString(id.Account), arn: aws.ToString(id.Arn), poll: p.Poll}
	if s.poll == 0 && endpoint != "" && loopback(endpoint) {
		s.poll = 100 * time.Millisecond
	}
	p.mu.Lock()
	if p.sessions == nil {
		p.sessions = map[string]*session{}
	}
	p.sessions[key] = s
	p.mu.Unlock()
	return s, nil
}

// apiMessage is an AWS error as "Code: message", else the error's text.
func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return err.Error()
}

// apiCode is an AWS error's code ("" if err is not one).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// clusterVersions returns the Kubernetes versions EKS offers and its default.
func (s *session) clusterVersions(ctx context.Context) ([]string, string, error) {
	var out []string
	def := ""
	pg := eks.NewDescribeClusterVersionsPaginator(s.eks, &eks.DescribeClusterVersionsInput{})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("ask EKS which versions it offers (eks:DescribeClusterVersions): %s", apiMessage(err))
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

// zones lists the region's available zones.
func (s *session) zones(ctx context.Context) ([]string, error) {
	out, err := s.ec2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{
		Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"available"}}}})
	if err != nil {
		return nil, fmt.Errorf("list the zones of %s (ec2:DescribeAvailabilityZones): %s", s.cfg.Region, apiMessage(err))
	}
	var zs []string
	for _, z := range out.AvailabilityZones {
		zs = append(zs, aws.ToString(z.ZoneName))
	}
	slices.Sort(zs)
	return zs, nil
}

// instanceType checks that EC2 offers an instance type.
func (s *session) instanceType(ctx context.Context, t string) error {
	_, err := s.ec2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{ec2types.InstanceType(t)}})
	if apiCode(err) == "InvalidInstanceType" {
		return fmt.Errorf("%q is not an EC2 instance type in %s", t, s.cfg.Region)
	}
	if err != nil {
		return fmt.Errorf("check instance type %q (ec2:DescribeInstanceTypes): %s", t, apiMessage(err))
	}
	return nil
}

// addonVersion returns the version of add-on name to run on Kubernetes k: want if EKS offers it
// for k, else (want empty) the version EKS reports as the default.
func (s *session) addonVersion(ctx context.Context, name, want, k string) (string, error) {
	var offered []string
	def := ""
	pg := eks.NewDescribeAddonVersionsPaginator(s.eks, &eks.DescribeAddonVersionsInput{AddonName: aws.String(name), KubernetesVersion: aws.String(k)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if apiCode(err) == "ResourceNotFoundException" {
			return "", fmt.Errorf("EKS has no add-on %q", name)
		}
		if err != nil {
			return "", fmt.Errorf("ask EKS for %s versions (eks:DescribeAddonVersions): %s", name, apiMessage(err))
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
	_, err := s.ec2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{sec.VPCID}})
	if err != nil {
		if strings.Contains(apiCode(err), "NotFound") {
			return []spec.FieldError{spec.Errorf("spec.eks.vpcId", "%s does not exist in %s", sec.VPCID, s.cfg.Region)}
		}
		return []spec.FieldError{spec.Errorf("spec.eks.vpcId", "ec2:DescribeVpcs: %s", apiMessage(err))}
	}
	zones := map[string]bool{}
	for i, id := range sec.SubnetIDs {
		out, err := s.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{id}})
		path := fmt.Sprintf("spec.eks.subnetIds[%d]", i)
		switch {
		case err != nil && strings.Contains(apiCode(err), "NotFound"):
			errs = append(errs, spec.Errorf(path, "%s does not exist in %s", id, s.cfg.Region))
		case err != nil:
			errs = append(errs, spec.Errorf(path, "ec2:DescribeSubnets: %s", apiMessage(err)))
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
