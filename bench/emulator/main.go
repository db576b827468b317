// Command emulator is the benchmark of nuv's AWS emulator. It prints:
//
//   - the median latency of SDK calls answered from the emulator's state (eks:DescribeCluster,
//     ec2:DescribeSubnets, sts:GetCallerIdentity), SigV4 verification included;
//   - emulated EKS create to a usable cluster: CreateCluster, the SDK's ClusterActive waiter, then
//     the first node list through an EKS token (target <= 15 s on 2 cores, most of it the local
//     control plane), and create to ACTIVE alone;
//   - emulated EKS delete: DeleteCluster to the ClusterDeleted waiter's success (target <= 5 s).
//
// No peer runs here (LocalStack's EKS needs Docker and a paid tier; moto cannot be installed), so
// the figures stand alone. The status delay is 0 so the figures are the emulator's and the control
// plane's own time.
//
// Run from the repository root: go run ./bench/emulator [-runs 200] (the nuv-kube companion must be
// built or buildable: `nuv cluster prepare`, or NUV_KUBE_BIN).
package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/bench/internal/benchutil"
	"github.com/nuv-dev/nuv/internal/eksauth"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
)

func main() {
	runs := flag.Int("runs", 200, "calls per API latency figure")
	flag.Parse()
	benchutil.Exit("bench/emulator", run(*runs))
}

func run(runs int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "nuv-bench-emulator-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s, err := emulator.New(emulator.Options{Dir: dir})
	if err != nil {
		return err
	}
	addr, stop, err := benchutil.ServeLoopback(func(ctx context.Context, ln net.Listener) error { return emulator.Serve(ctx, ln, s) })
	if err != nil {
		return err
	}
	defer stop()
	key, secret, _, region := s.Credentials()
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), BaseEndpoint: aws.String("http://" + addr)}
	c := clients{cfg: cfg, ec: ec2.NewFromConfig(cfg), ic: iam.NewFromConfig(cfg), kc: eks.NewFromConfig(cfg), sc: sts.NewFromConfig(cfg)}

	role, subnets, err := c.prerequisites(ctx)
	if err != nil {
		return err
	}
	active, usable, err := c.createCluster(ctx, role, subnets)
	if err != nil {
		return err
	}
	lat, err := c.latencies(ctx, runs)
	if err != nil {
		return err
	}
	deleted, err := c.deleteCluster(ctx)
	if err != nil {
		return err
	}

	fmt.Printf("\nAPI latency (median of %d SDK calls, SigV4 verified)\n", runs)
	fmt.Printf("  eks:DescribeCluster     %7.2f ms\n", benchutil.MS(lat.describe))
	fmt.Printf("  ec2:DescribeSubnets     %7.2f ms\n", benchutil.MS(lat.subnets))
	fmt.Printf("  sts:GetCallerIdentity   %7.2f ms\n", benchutil.MS(lat.caller))
	fmt.Printf("\nemulated EKS cluster (status delay 0)\n")
	fmt.Printf("  create to ACTIVE                      %6.2f s\n", active.Seconds())
	fmt.Printf("  create to nodes listed with a token   %6.2f s   (target <= 15 s)\n", usable.Seconds())
	fmt.Printf("  delete to gone                        %6.2f s   (target <= 5 s)\n", deleted.Seconds())
	return nil
}

// clients are the AWS SDK clients of the services measured, all pointed at the emulator.
type clients struct {
	cfg aws.Config
	ec  *ec2.Client
	ic  *iam.Client
	kc  *eks.Client
	sc  *sts.Client
}

// prerequisites makes what an EKS cluster needs: its IAM role and a VPC with a subnet in each of
// three zones; it returns the role and the subnets' IDs.
func (c clients) prerequisites(ctx context.Context) (*iam.CreateRoleOutput, []string, error) {
	role, err := c.ic.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("bench"), AssumeRolePolicyDocument: aws.String(
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"eks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`)})
	if err != nil {
		return nil, nil, err
	}
	vpc, err := c.ec.CreateVpc(ctx, &ec2.CreateVpcInput{CidrBlock: aws.String("10.0.0.0/16")})
	if err != nil {
		return nil, nil, err
	}
	var subnets []string
	for i, az := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
		sn, err := c.ec.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: vpc.Vpc.VpcId, CidrBlock: aws.String(fmt.Sprintf("10.0.%d.0/24", i)), AvailabilityZone: aws.String(az)})
		if err != nil {
			return nil, nil, err
		}
		subnets = append(subnets, aws.ToString(sn.Subnet.SubnetId))
	}
	return role, subnets, nil
}

// createCluster creates the emulated EKS cluster "bench" and returns the time to ACTIVE and the
// time until its nodes can be listed with an EKS token.
func (c clients) createCluster(ctx context.Context, role *iam.CreateRoleOutput, subnets []string) (active, usable time.Duration, err error) {
	fmt.Println("creating an emulated EKS cluster (a local control plane) ...")
	t0 := time.Now()
	if _, err := c.kc.CreateCluster(ctx, &eks.CreateClusterInput{Name: aws.String("bench"), RoleArn: role.Role.Arn,
		ResourcesVpcConfig: &ekstypes.VpcConfigRequest{SubnetIds: subnets}}); err != nil {
		return 0, 0, err
	}
	out, err := eks.NewClusterActiveWaiter(c.kc, func(o *eks.ClusterActiveWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 200*time.Millisecond
	}).
		WaitForOutput(ctx, &eks.DescribeClusterInput{Name: aws.String("bench")}, 10*time.Minute)
	if err != nil {
		return 0, 0, err
	}
	active = time.Since(t0)
	ca, _ := base64.StdEncoding.DecodeString(aws.ToString(out.Cluster.CertificateAuthority.Data))
	tok, err := eksauth.NewToken(ctx, c.cfg, "bench")
	if err != nil {
		return 0, 0, err
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: aws.ToString(out.Cluster.Endpoint), BearerToken: tok.Token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}})
	if err != nil {
		return 0, 0, err
	}
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		return 0, 0, fmt.Errorf("list nodes through the EKS token: %w", err)
	}
	return active, time.Since(t0), nil
}

// apiLatencies are the median latencies of three API calls.
type apiLatencies struct {
	describe, subnets, caller time.Duration
}

// latencies measures the median of runs calls each of eks:DescribeCluster, ec2:DescribeSubnets
// and sts:GetCallerIdentity.
func (c clients) latencies(ctx context.Context, runs int) (apiLatencies, error) {
	lat := func(call func() error) (time.Duration, error) { return benchutil.MedianOf(runs, call) }
	describe, err := lat(func() error {
		_, err := c.kc.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("bench")})
		return err
	})
	if err != nil {
		return apiLatencies{}, err
	}
	subnetsLat, err := lat(func() error { _, err := c.ec.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{}); return err })
	if err != nil {
		return apiLatencies{}, err
	}
	caller, err := lat(func() error { _, err := c.sc.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{}); return err })
	if err != nil {
		return apiLatencies{}, err
	}
	return apiLatencies{describe: describe, subnets: subnetsLat, caller: caller}, nil
}

// deleteCluster deletes the cluster "bench" and returns the time until it is gone.
func (c clients) deleteCluster(ctx context.Context) (time.Duration, error) {
	t1 := time.Now()
	if _, err := c.kc.DeleteCluster(ctx, &eks.DeleteClusterInput{Name: aws.String("bench")}); err != nil {
		return 0, err
	}
	if err := eks.NewClusterDeletedWaiter(c.kc, func(o *eks.ClusterDeletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 100*time.Millisecond, 200*time.Millisecond
	}).
		Wait(ctx, &eks.DescribeClusterInput{Name: aws.String("bench")}, 5*time.Minute); err != nil {
		return 0, err
	}
	return time.Since(t1), nil
}
