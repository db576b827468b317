package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

const eksTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"eks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

func TestIAMRoles(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	c := iam.NewFromConfig(e.Cfg)
	ctx := context.Background()

	r := must(c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("a-cluster"), AssumeRolePolicyDocument: aws.String(eksTrust),
		Tags: []iamtypes.Tag{{Key: aws.String("nuv.dev/cluster"), Value: aws.String("a")}}})).Role
	_, _, account, _ := e.Credentials()
	if aws.ToString(r.Arn) != "arn:aws:iam::"+account+":role/a-cluster" || !strings.HasPrefix(aws.ToString(r.RoleId), "AROA") || len(r.Tags) != 1 {
		t.Fatalf("role %+v", r)
	}
	_, err := c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("a-cluster"), AssumeRolePolicyDocument: aws.String(eksTrust)})
	var exists *iamtypes.EntityAlreadyExistsException
	if !errors.As(err, &exists) {
		t.Fatalf("duplicate role: %v, want EntityAlreadyExistsException", err)
	}
	_, err = c.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("bad"), AssumeRolePolicyDocument: aws.String("{not json")})
	var malformed *iamtypes.MalformedPolicyDocumentException
	if !errors.As(err, &malformed) {
		t.Fatalf("bad policy: %v", err)
	}
	got := must(c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("a-cluster")})).Role
	if doc := aws.ToString(got.AssumeRolePolicyDocument); !strings.Contains(doc, "eks.amazonaws.com") {
		t.Fatalf("trust policy %q", doc)
	}
	must(c.UpdateAssumeRolePolicy(ctx, &iam.UpdateAssumeRolePolicyInput{RoleName: aws.String("a-cluster"), PolicyDocument: aws.String(strings.Replace(eksTrust, "eks.amazonaws.com", "ec2.amazonaws.com", 1))}))
	if doc := aws.ToString(must(c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("a-cluster")})).Role.AssumeRolePolicyDocument); !strings.Contains(doc, "ec2.amazonaws.com") {
		t.Fatalf("trust policy after the update: %s", doc)
	}
	for _, p := range []string{"AmazonEKSClusterPolicy", "AmazonEKSVPCResourceController"} {
		must(c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("a-cluster"), PolicyArn: aws.String("arn:aws:iam::aws:policy/" + p)}))
	}
	_, err = c.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("a-cluster"), PolicyArn: aws.String("arn:aws:iam::aws:policy/NoSuchPolicy")})
	var noEntity *iamtypes.NoSuchEntityException
	if !errors.As(err, &noEntity) {
		t.Fatalf("unknown policy: %v", err)
	}
	att := must(c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("a-cluster")}))
	if len(att.AttachedPolicies) != 2 || aws.ToString(att.AttachedPolicies[0].PolicyName) != "AmazonEKSClusterPolicy" {
		t.Fatalf("attached: %+v", att.AttachedPolicies)
	}
	_, err = c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String("a-cluster")})
	var conflict *iamtypes.DeleteConflictException
	if !errors.As(err, &conflict) {
		t.Fatalf("delete with policies attached: %v, want DeleteConflictException", err)
	}
	must(c.TagRole(ctx, &iam.TagRoleInput{RoleName: aws.String("a-cluster"), Tags: []iamtypes.Tag{{Key: aws.String("team"), Value: aws.String("x")}}}))
	must(c.UntagRole(ctx, &iam.UntagRoleInput{RoleName: aws.String("a-cluster"), TagKeys: []string{"nuv.dev/cluster"}}))
	if tags := must(c.ListRoleTags(ctx, &iam.ListRoleTagsInput{RoleName: aws.String("a-cluster")})).Tags; len(tags) != 1 || aws.ToString(tags[0].Key) != "team" {
		t.Fatalf("tags %+v", tags)
	}
	if roles := must(c.ListRoles(ctx, &iam.ListRolesInput{})).Roles; len(roles) != 1 {
		t.Fatalf("roles %+v", roles)
	}
	for _, p := range att.AttachedPolicies {
		must(c.DetachRolePolicy(ctx, &iam.DetachRolePolicyInput{RoleName: aws.String("a-cluster"), PolicyArn: p.PolicyArn}))
	}
	must(c.DeleteRole(ctx, &iam.DeleteRoleInput{RoleName: aws.String("a-cluster")}))
	_, err = c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("a-cluster")})
	if !errors.As(err, &noEntity) || !strings.Contains(err.Error(), "The role with name a-cluster cannot be found") {
		t.Fatalf("deleted role: %v", err)
	}
}

func TestSTSCallerIdentity(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	c := sts.NewFromConfig(e.Cfg)
	ctx := context.Background()
	id := must(c.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}))
	_, _, account, _ := e.Credentials()
	if aws.ToString(id.Account) != account || aws.ToString(id.Arn) != "arn:aws:iam::"+account+":user/nuv" {
		t.Fatalf("identity %+v", id)
	}
	// The presigned form: a GET anyone holding the URL can send within its expiry.
	req := must(sts.NewPresignClient(c).PresignGetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}, func(o *sts.PresignOptions) {
		o.ClientOptions = append(o.ClientOptions, func(so *sts.Options) {
			so.APIOptions = append(so.APIOptions, smithyhttp.SetHeaderValue("X-Amz-Expires", "60"))
		})
	}))
	hreq := must(http.NewRequest(req.Method, req.URL, nil))
	for k, v := range req.SignedHeader {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Accept", "application/json")
	resp := must(http.DefaultClient.Do(hreq))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var doc struct {
		GetCallerIdentityResponse struct {
			GetCallerIdentityResult callerIdentity
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &doc) != nil || doc.GetCallerIdentityResponse.GetCallerIdentityResult.Account != account {
		t.Fatalf("presigned GetCallerIdentity: %d %s", resp.StatusCode, body)
	}
	// Tampering with the URL breaks the signature.
	hreq.URL.RawQuery = strings.Replace(hreq.URL.RawQuery, "Version=2011-06-15", "Version=2011-06-16", 1)
	resp = must(http.DefaultClient.Do(hreq))
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !strings.Contains(string(body), "SignatureDoesNotMatch") {
		t.Fatalf("tampered presigned URL: %d %s", resp.StatusCode, body)
	}
}

// TestAuthentication: requests without a signature, with another key or a wrong secret get the
// service's own authentication error.
func TestAuthentication(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	key, secret, _, region := e.Credentials()

	resp := must(http.Post(e.URL+"/", "application/x-www-form-urlencoded", strings.NewReader("Action=DescribeVpcs&Version=2016-11-15")))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || !strings.Contains(string(body), "<Code>MissingAuthenticationToken</Code>") {
		t.Fatalf("unsigned EC2 call: %d %s", resp.StatusCode, body)
	}
	resp = must(http.Get(e.URL + "/clusters"))
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("X-Amzn-ErrorType") != "MissingAuthenticationTokenException" {
		t.Fatalf("unsigned EKS call: %d %v", resp.StatusCode, resp.Header)
	}

	for _, tc := range []struct {
		name, key, secret, region string
		sts, ec2, eks             string
	}{
		{"unknown key", "AKIAAAAAAAAAAAAAAAAA", secret, region, "InvalidClientTokenId", "AuthFailure", "UnrecognizedClientException"},
		{"wrong secret", key, secret + "x", region, "SignatureDoesNotMatch", "SignatureDoesNotMatch", "InvalidSignatureException"},
		{"other region", key, secret, "eu-west-1", "", "SignatureDoesNotMatch", "InvalidSignatureException"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.Cfg.Copy()
			cfg.Region = tc.region
			cfg.Credentials = credentials.NewStaticCredentialsProvider(tc.key, tc.secret, "")
			cfg.RetryMaxAttempts = 1
			_, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
			if tc.sts == "" {
				if err != nil {
					t.Fatalf("sts in another region: %v", err)
				}
			} else {
				wantCode(t, err, tc.sts)
			}
			_, err = ec2.NewFromConfig(cfg).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
			wantCode(t, err, tc.ec2)
			_, err = eks.NewFromConfig(cfg).ListClusters(ctx, &eks.ListClustersInput{})
			wantCode(t, err, tc.eks)
		})
	}
}

// TestFaults: throttling every third call is absorbed by the SDK's retryer; without retries it
// surfaces with the service's throttling code; an AccessDenied names the permission and resource.
func TestFaults(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	post := func(body string) {
		t.Helper()
		resp := must(e.admin(http.MethodPost, body))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("set fault: %d %s", resp.StatusCode, b)
		}
	}
	post(`{"operation":"ec2:DescribeVpcs","kind":"throttle","every":3}`)
	c := ec2.NewFromConfig(e.Cfg, func(o *ec2.Options) {
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxBackoff = 50 * time.Millisecond
			so.RateLimiter = noRateLimit{}
		})
	})
	for i := 0; i < 9; i++ {
		must(c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{}))
	}
	e.Mu.Lock()
	fired, calls := e.Faults[0].Fired, e.Calls["ec2:DescribeVpcs"]
	e.Mu.Unlock()
	if fired < 4 || calls != 9+fired {
		t.Fatalf("throttle fired %d times over %d calls; want every third call throttled and retried", fired, calls)
	}
	_, err := ec2.NewFromConfig(e.Cfg, func(o *ec2.Options) { o.RetryMaxAttempts = 1 }).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	_, err2 := ec2.NewFromConfig(e.Cfg, func(o *ec2.Options) { o.RetryMaxAttempts = 1 }).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	_, err3 := ec2.NewFromConfig(e.Cfg, func(o *ec2.Options) { o.RetryMaxAttempts = 1 }).DescribeVpcs(ctx, &ec2.DescribeVpcsInput{})
	if codes := apiCode(err) + apiCode(err2) + apiCode(err3); codes != "RequestLimitExceeded" {
		t.Fatalf("three calls without retries: errors %v %v %v; want one RequestLimitExceeded", err, err2, err3)
	}

	post(`[{"operation":"iam:CreateRole","kind":"access-denied","resource":"a-nodes"},{"operation":"eks:ListClusters","kind":"error","code":"ServerException","status":500,"count":1}]`)
	ic := iam.NewFromConfig(e.Cfg)
	must(ic.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("a-cluster"), AssumeRolePolicyDocument: aws.String(eksTrust)}))
	_, err = ic.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("a-nodes"), AssumeRolePolicyDocument: aws.String(eksTrust)})
	if msg := wantCode(t, err, "AccessDenied"); !strings.Contains(msg, "iam:CreateRole") || !strings.Contains(msg, "a-nodes") {
		t.Fatalf("AccessDenied does not name the permission and resource: %s", msg)
	}
	_, err = eks.NewFromConfig(e.Cfg, func(o *eks.Options) { o.RetryMaxAttempts = 1 }).ListClusters(ctx, &eks.ListClustersInput{})
	var se *ekstypes.ServerException
	if !errors.As(err, &se) {
		t.Fatalf("forced EKS error: %v", err)
	}
	must(eks.NewFromConfig(e.Cfg).ListClusters(ctx, &eks.ListClustersInput{})) // count 1: spent

	resp := must(e.admin(http.MethodPost, `{"operation":"s3:PutObject","kind":"throttle"}`))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "s3:PutObject") {
		t.Fatalf("invalid fault accepted: %d %s", resp.StatusCode, b)
	}
}

type noRateLimit struct{}

func (noRateLimit) AddTokens(uint) error { return nil }
func (noRateLimit) GetToken(context.Context, uint) (func() error, error) {
	return func() error { return nil }, nil
}

// TestPersistence: a restarted emulator has the same credentials and resources, and carries on
// with transitions that were under way.
func TestPersistence(t *testing.T) {
	defer catch(t)
	dir := t.TempDir()
	ctx := context.Background()
	e := startEmulator(t, dir, time.Hour)
	c := ec2.NewFromConfig(e.Cfg)
	vpc := must(c.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})).Vpc
	must(iam.NewFromConfig(e.Cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("r"), AssumeRolePolicyDocument: aws.String(eksTrust)}))
	if fi, err := os.Stat(filepath.Join(dir, stateFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v (want 0600: it holds the secret)", fi.Mode(), err)
	}
	key, secret, account, _ := e.Credentials()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e2 := startEmulator(t, dir, 0)
	k2, s2, a2, _ := e2.Credentials()
	if k2 != key || s2 != secret || a2 != account {
		t.Fatal("credentials changed across a restart")
	}
	c2 := ec2.NewFromConfig(e2.Cfg)
	if v := must(c2.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{aws.ToString(vpc.VpcId)}})).Vpcs; len(v) != 1 || aws.ToString(v[0].CidrBlock) != "10.0.0.0/16" {
		t.Fatalf("vpc after restart: %+v", v)
	}
	must(iam.NewFromConfig(e2.Cfg).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("r")}))

	if err := os.WriteFile(filepath.Join(t.TempDir(), "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, stateFileName), []byte("{"), 0o600)
	if _, err := New(Options{Dir: bad}); err == nil || !strings.Contains(err.Error(), filepath.Join(bad, stateFileName)) {
		t.Fatalf("corrupt state: %v, want an error naming the file", err)
	}
	os.WriteFile(filepath.Join(bad, stateFileName), must(json.Marshal(newState("us-east-1"))), 0o600)
	os.WriteFile(filepath.Join(bad, "faults.json"), []byte(`[{"operation":"ec2:CreateVpc","kind":"sometimes"}]`), 0o600)
	if _, err := New(Options{Dir: bad}); err == nil || !strings.Contains(err.Error(), "faults.json") || !strings.Contains(err.Error(), "sometimes") {
		t.Fatalf("bad faults.json: %v", err)
	}
}

// TestUnimplemented: an operation the emulator does not serve is answered in the protocol's error
// shape with a message naming it.
func TestUnimplemented(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	_, err := ec2.NewFromConfig(e.Cfg).DescribeVolumes(ctx, &ec2.DescribeVolumesInput{})
	if msg := wantCode(t, err, "InvalidAction"); !strings.Contains(msg, "DescribeVolumes") || !strings.Contains(msg, "nuv emulator does not implement") {
		t.Fatalf("message %q", msg)
	}
	_, err = iam.NewFromConfig(e.Cfg).CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{InstanceProfileName: aws.String("p")})
	if msg := wantCode(t, err, "InvalidAction"); !strings.Contains(msg, "CreateInstanceProfile") {
		t.Fatalf("message %q", msg)
	}
	_, err = eks.NewFromConfig(e.Cfg).ListFargateProfiles(ctx, &eks.ListFargateProfilesInput{ClusterName: aws.String("a")})
	if msg := wantCode(t, err, "UnknownOperationException"); !strings.Contains(msg, "/clusters/a/fargate-profiles") || !strings.Contains(msg, "Fargate") {
		t.Fatalf("message %q", msg)
	}
}

// TestEKSRefusals: EKS's error shapes, as the SDK's typed errors, for what needs no control plane.
func TestEKSRefusals(t *testing.T) {
	defer catch(t)
	e := startEmulator(t, "", 0)
	ctx := context.Background()
	c := eks.NewFromConfig(e.Cfg)
	_, err := c.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("nope")})
	var nf *ekstypes.ResourceNotFoundException
	if !errors.As(err, &nf) || aws.ToString(nf.ClusterName) != "nope" || aws.ToString(nf.Message) != "No cluster found for name: nope." {
		t.Fatalf("DescribeCluster of a missing cluster: %v", err)
	}
	_, err = c.DeleteNodegroup(ctx, &eks.DeleteNodegroupInput{ClusterName: aws.String("nope"), NodegroupName: aws.String("ng")})
	if !errors.As(err, &nf) {
		t.Fatalf("DeleteNodegroup of a missing cluster: %v", err)
	}

	role := must(iam.NewFromConfig(e.Cfg).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("c"), AssumeRolePolicyDocument: aws.String(eksTrust)})).Role
	ec := ec2.NewFromConfig(e.Cfg)
	vpc := must(ec.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})).Vpc
	var subnets []string
	for i, az := range []string{"us-east-1a", "us-east-1a", "us-east-1b"} {
		sn := must(ec.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.VpcId, CidrBlock: aws.String([]string{"10.0.0.0/24", "10.0.1.0/24", "10.0.2.0/24"}[i]), AvailabilityZone: aws.String(az)}))
		subnets = append(subnets, aws.ToString(sn.Subnet.SubnetId))
	}
	var inval *ekstypes.InvalidParameterException
	for _, tc := range []struct {
		name string
		in   eks.CreateClusterInput
		want string
	}{
		{"unknown version", eks.CreateClusterInput{Name: aws.String("a"), Version: aws.String("1.99"), RoleArn: role.Arn, ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets[1:]}}, "unsupported Kubernetes version 1.99"},
		{"one zone", eks.CreateClusterInput{Name: aws.String("a"), RoleArn: role.Arn, ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets[:2]}}, "at least two different AZs"},
		{"missing role", eks.CreateClusterInput{Name: aws.String("a"), RoleArn: aws.String("arn:aws:iam::123456789012:role/none"), ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets[1:]}}, "does not exist"},
		{"missing subnet", eks.CreateClusterInput{Name: aws.String("a"), RoleArn: role.Arn, ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: []string{"subnet-0123456789abcdef0", subnets[2]}}}, "subnet-0123456789abcdef0"},
		{"bad name", eks.CreateClusterInput{Name: aws.String("-a"), RoleArn: role.Arn, ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets[1:]}}, "cluster name"},
	} {
		_, err := c.CreateCluster(ctx, &tc.in)
		if !errors.As(err, &inval) || !strings.Contains(aws.ToString(inval.Message), tc.want) {
			t.Errorf("%s: %v, want InvalidParameterException with %q", tc.name, err, tc.want)
		}
	}

	av := must(c.DescribeAddonVersions(ctx, &eks.DescribeAddonVersionsInput{KubernetesVersion: aws.String("1.34"), AddonName: aws.String("kube-proxy")}))
	if len(av.Addons) != 1 || len(av.Addons[0].AddonVersions) != 1 || aws.ToString(av.Addons[0].AddonVersions[0].AddonVersion) != "v1.34.1-eksbuild.2" ||
		!av.Addons[0].AddonVersions[0].Compatibilities[0].DefaultVersion {
		t.Fatalf("kube-proxy versions for 1.34: %+v", av.Addons)
	}
	all := must(c.DescribeAddonVersions(ctx, &eks.DescribeAddonVersionsInput{KubernetesVersion: aws.String("1.36")}))
	defaults := map[string]string{}
	for _, a := range all.Addons {
		for _, v := range a.AddonVersions {
			for _, cp := range v.Compatibilities {
				if cp.DefaultVersion {
					defaults[aws.ToString(a.AddonName)] = aws.ToString(v.AddonVersion)
				}
			}
		}
	}
	if len(defaults) != len(addonCatalog.Get()) || defaults["vpc-cni"] != "v1.20.4-eksbuild.2" || defaults["coredns"] != "v1.12.4-eksbuild.1" {
		t.Fatalf("defaults for 1.36: %v", defaults)
	}
	_, err = c.DescribeAddonVersions(ctx, &eks.DescribeAddonVersionsInput{KubernetesVersion: aws.String("1.20")})
	if !errors.As(err, &inval) {
		t.Fatalf("addon versions of an unknown Kubernetes version: %v", err)
	}
}

// TestAWSCLI drives the emulator with the aws CLI (v1 or v2), which signs and parses on its own.
func TestAWSCLI(t *testing.T) {
	e := startEmulator(t, "", 0)
	key, secret, account, region := e.Credentials()
	run := func(args ...string) (string, error) {
		cmd := exec.Command("aws", append(args, "--endpoint-url", e.URL, "--output", "json")...)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_DEFAULT_REGION="+region, "AWS_REGION="+region,
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err != nil {
			return errb.String(), err
		}
		return out.String(), nil
	}
	out, err := run("sts", "get-caller-identity")
	if err != nil || !strings.Contains(out, `"Account": "`+account+`"`) {
		t.Fatalf("aws sts get-caller-identity: %v\n%s", err, out)
	}
	out, err = run("ec2", "create-vpc", "--cidr-block", "10.1.0.0/16")
	if err != nil || !strings.Contains(out, `"CidrBlock": "10.1.0.0/16"`) {
		t.Fatalf("aws ec2 create-vpc: %v\n%s", err, out)
	}
	out, err = run("iam", "create-role", "--role-name", "cli", "--assume-role-policy-document", eksTrust)
	if err != nil || !strings.Contains(out, `"RoleName": "cli"`) {
		t.Fatalf("aws iam create-role: %v\n%s", err, out)
	}
	out, err = run("eks", "describe-cluster", "--name", "nope")
	if err == nil || !strings.Contains(out, "ResourceNotFoundException") || !strings.Contains(out, "No cluster found for name: nope.") {
		t.Fatalf("aws eks describe-cluster of a missing cluster: %v\n%s", err, out)
	}
	out, err = run("ec2", "describe-volumes")
	if err == nil || !strings.Contains(out, "InvalidAction") || !strings.Contains(out, "DescribeVolumes") {
		t.Fatalf("aws ec2 describe-volumes: %v\n%s", err, out)
	}
	out, err = run("eks", "describe-addon-versions", "--kubernetes-version", "1.35", "--addon-name", "coredns")
	if err != nil || !strings.Contains(out, "v1.12.4-eksbuild.1") {
		t.Fatalf("aws eks describe-addon-versions: %v\n%s", err, out)
	}
}
