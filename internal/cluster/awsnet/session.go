package awsnet

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// Session is one AWS configuration (region, endpoint, profile) with its EC2 client and the account
// its credentials belong to, checked once. A provider builds the clients of its other services
// from Config.
type Session struct {
	// Config is the SDK configuration the clients are built from (its Region is the session's).
	Config aws.Config
	// Endpoint is the API endpoint the session talks to ("" for AWS itself).
	Endpoint string
	// EC2 is the EC2 client.
	EC2 *ec2.Client
	// Account and ARN are the account and the identity of the credentials (sts:GetCallerIdentity).
	Account, ARN string
	// Poll is the waiters' polling interval; 0 is the SDK waiters' defaults.
	Poll time.Duration
}

// Sessions opens sessions and keeps them by region, endpoint and profile; its zero value is ready
// and it is safe for concurrent use.
type Sessions struct {
	mu sync.Mutex
	m  map[string]*Session
}

// ChainDescription names the places the SDK's default chain looks for credentials.
func ChainDescription(profile string) string {
	if profile == "" {
		profile = "default"
	}
	return "the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), the shared credentials and config files " +
		"(AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE; profile " + profile + "), SSO, web identity, the container and the EC2 instance metadata"
}

// Open returns the session of a region, endpoint and profile (each "" for the environment's:
// AWS_REGION or AWS_DEFAULT_REGION, AWS_ENDPOINT_URL, AWS_PROFILE, read with getenv), loading the
// configuration from the SDK's default chain and checking the credentials with STS
// GetCallerIdentity before anything else is asked. poll is the waiters' polling interval (0: 100ms
// against a loopback endpoint, the SDK's defaults otherwise).
func (ss *Sessions) Open(ctx context.Context, getenv func(string) string, poll time.Duration, region, endpoint, profile string) (*Session, error) {
	if region == "" {
		region = getenv("AWS_REGION")
	}
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if endpoint == "" {
		endpoint = getenv("AWS_ENDPOINT_URL")
	}
	if profile == "" {
		profile = getenv("AWS_PROFILE")
	}
	key := region + "|" + endpoint + "|" + profile
	ss.mu.Lock()
	if s, ok := ss.m[key]; ok {
		ss.mu.Unlock()
		return s, nil
	}
	ss.mu.Unlock()

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
		return nil, fmt.Errorf("no AWS credentials: tried %s: %v", ChainDescription(profile), err)
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
			if Loopback(endpoint) {
				hint = " (is nuv's emulator up? `nuv emulator status`)"
			}
			return nil, fmt.Errorf("cannot reach %s to check the AWS credentials (sts:GetCallerIdentity in %s): %v%s", where, cfg.Region, err, hint)
		}
		return nil, fmt.Errorf("the AWS credentials from %s were refused by %s (sts:GetCallerIdentity): %s (the SDK's chain tried %s)",
			creds.Source, where, APIMessage(err), ChainDescription(profile))
	}
	s := &Session{Config: cfg, Endpoint: endpoint, EC2: ec2.NewFromConfig(cfg), Account: aws.ToString(id.Account), ARN: aws.ToString(id.Arn), Poll: poll}
	if s.Poll == 0 && endpoint != "" && Loopback(endpoint) {
		s.Poll = 100 * time.Millisecond
	}
	ss.mu.Lock()
	if ss.m == nil {
		ss.m = map[string]*Session{}
	}
	ss.m[key] = s
	ss.mu.Unlock()
	return s, nil
}

// Loopback reports whether an endpoint URL is on this machine (the emulator).
func Loopback(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1"
}

// APIMessage is an AWS error as "Code: message", else the error's text.
func APIMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	return err.Error()
}

// APICode is an AWS error's code ("" if err is not one).
func APICode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Zones lists the region's available zones.
func (s *Session) Zones(ctx context.Context) ([]string, error) {
	out, err := s.EC2.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{
		Filters: []ec2types.Filter{{Name: aws.String("state"), Values: []string{"available"}}}})
	if err != nil {
		return nil, fmt.Errorf("list the zones of %s (ec2:DescribeAvailabilityZones): %s", s.Config.Region, APIMessage(err))
	}
	var zs []string
	for _, z := range out.AvailabilityZones {
		zs = append(zs, aws.ToString(z.ZoneName))
	}
	slices.Sort(zs)
	return zs, nil
}

// InstanceType checks that EC2 offers an instance type.
func (s *Session) InstanceType(ctx context.Context, t string) error {
	_, err := s.EC2.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{ec2types.InstanceType(t)}})
	if APICode(err) == "InvalidInstanceType" {
		return fmt.Errorf("%q is not an EC2 instance type in %s", t, s.Config.Region)
	}
	if err != nil {
		return fmt.Errorf("check instance type %q (ec2:DescribeInstanceTypes): %s", t, APIMessage(err))
	}
	return nil
}

// Clients keeps a provider's clients of each session (T: the session with the clients of the
// services besides EC2 it uses); its zero value is ready and it is safe for concurrent use.
type Clients[T any] struct {
	mu sync.Mutex
	m  map[*Session]T
}

// Of returns the clients of session s, made with make the first time.
func (cs *Clients[T]) Of(s *Session, make func(*Session) T) T {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.m[s]; ok {
		return c
	}
	if cs.m == nil {
		cs.m = map[*Session]T{}
	}
	c := make(s)
	cs.m[s] = c
	return c
}
