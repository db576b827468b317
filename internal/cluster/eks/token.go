package eks

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/eksauth"
)

// tokenUsage is the help of `nuv -eks-token`.
var tokenUsage = cli.Usage{Line: "nuv -eks-token --cluster NAME [--region REGION] [--profile PROFILE]", Short: "print an EKS token as an ExecCredential",
	Long: `Prints an ExecCredential (client.authentication.k8s.io/v1) holding an EKS token for cluster NAME:
a presigned STS GetCallerIdentity request, as aws-iam-authenticator makes it. A kubeconfig uses it
as its exec credential plugin; the token is never written to disk. Credentials come from the AWS
SDK's default chain (environment, shared config and credentials files, profiles); AWS_ENDPOINT_URL
points it at the emulator.`,
	Examples: "nuv -eks-token --cluster dev --region eu-west-1\nAWS_PROFILE=ci nuv -eks-token --cluster dev"}

// NewTokenTool is `nuv -eks-token`, the exec credential plugin of the EKS kubeconfigs nuv writes
// (kubeconfig.go): for real clusters and for the AWS emulator's alike.
func NewTokenTool() cli.Command {
	return cli.Command{Name: "eks-token", Short: "print an EKS token as an ExecCredential (the exec plugin of EKS kubeconfigs)", Run: runToken}
}

func runToken(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("nuv -eks-token")
	clusterName := fs.String("cluster", "", "EKS cluster name (required)")
	region := fs.String("region", "", "AWS region (default: AWS_REGION or the profile's)")
	profile := fs.String("profile", "", "shared config profile (default: AWS_PROFILE or default)")
	if done, err := cli.Parse(env, fs, tokenUsage, args); done || err != nil {
		return err
	}
	if *clusterName == "" {
		return cli.Usagef("nuv -eks-token: --cluster is required")
	}
	var opts []func(*config.LoadOptions) error
	if *region != "" {
		opts = append(opts, config.WithRegion(*region))
	}
	if *profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(*profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return fmt.Errorf("eks token: AWS configuration: %w", err)
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("eks token: no AWS credentials (tried the environment, the shared credentials and config files, SSO, the container and instance metadata): %w", err)
	}
	tok, err := eksauth.NewToken(ctx, cfg, *clusterName)
	if err != nil {
		return err
	}
	b, err := eksauth.ExecCredential(tok)
	if err != nil {
		return err
	}
	_, err = env.Out.Write(b)
	return err
}
