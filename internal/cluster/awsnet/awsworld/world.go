// Package awsworld is the world of the AWS providers' integration tests (packages eks and
// awsmachines): nuv's AWS emulator on loopback, a NUV_HOME and a project, nuv's commands run as
// processes of the test binary, and the SDK clients a test checks the emulator's state with. It
// is apart from package awstest, which the providers' own (internal) tests import: this one
// builds on nuv's whole program (package clustertest).
package awsworld

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"github.com/nuv-dev/nuv/internal/cluster/clustertest"
	"github.com/nuv-dev/nuv/internal/cluster/local"
	"github.com/nuv-dev/nuv/internal/cluster/state"
	emulator "github.com/nuv-dev/nuv/internal/emulator/aws"
	"github.com/nuv-dev/nuv/internal/emulator/emucore"
)

// The world of the integration tests that run nuv's commands against the emulator.

// World is one emulator on loopback (its EKS clusters real local control planes), a NUV_HOME and
// a project, and the SDK clients a test checks the emulator's state with.
type World struct {
	T *testing.T
	// Emu is the emulator and URL its endpoint.
	Emu *emulator.Server
	URL string
	// Home is NUV_HOME, Project NUV_PROJECT.
	Home, Project string
	// Env is the environment of nuv's commands (the emulator's, NUV_HOME, NUV_PROJECT).
	Env []string
	// EC2, EKS and IAM are the emulator's clients.
	EC2 *ec2.Client
	EKS *eks.Client
	IAM *iam.Client
	// asNuv is the variable that makes the test binary act as nuv.
	asNuv string
}

// NewWorld starts a world for a test whose binary acts as nuv when the environment variable
// asNuv is set (clustertest.ActAsNuv), its emulator serving region ("": the emulator's default).
func NewWorld(t *testing.T, asNuv, region string) *World {
	t.Helper()
	home, project := t.TempDir(), t.TempDir()
	dir := filepath.Join(home, "emulator")
	// The emulator's log is shown when the test fails: the machines' side of a failure is
	// otherwise lost with the test's directories.
	s, err := emulator.New(emulator.Options{Dir: dir, Delay: 300 * time.Millisecond, Region: region, Log: awstest.EmulatorLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	addr := clustertest.Serve(t, func(ctx context.Context, ln net.Listener) error { return emulator.Serve(ctx, ln, s) })
	t.Cleanup(func() {
		// Control planes an unfinished test left behind (before the emulator stops).
		p := local.Provider{Home: dir, Project: dir}
		names, err := p.Names()
		if err != nil {
			t.Errorf("clean-up: list control planes: %v", err)
		}
		for _, n := range names {
			t.Logf("removing leftover control plane %s", n)
			if err := p.Delete(context.Background(), n); err != nil {
				t.Errorf("clean-up: delete control plane %s: %v", n, err)
			}
		}
	})
	key, secret, _, region := s.Credentials()
	url := "http://" + addr
	w := &World{T: t, Emu: s, URL: url, Home: home, Project: project, asNuv: asNuv}
	vars := map[string]string{
		"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": region,
		"AWS_CONFIG_FILE": filepath.Join(home, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "no-aws-credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "",
		"NUV_HOME": home, "NUV_PROJECT": project, asNuv: "1",
	}
	for k, v := range vars {
		t.Setenv(k, v) // the kubeconfig's exec credential (this binary) reads them too
		w.Env = append(w.Env, k+"="+v)
	}
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), BaseEndpoint: aws.String(url)}
	w.EC2, w.EKS, w.IAM = ec2.NewFromConfig(cfg), eks.NewFromConfig(cfg), iam.NewFromConfig(cfg)
	return w
}

// Nuv runs one nuv command line as its own process; extra are more environment variables.
func (w *World) Nuv(extra []string, args ...string) (stdout, stderr string, code int) {
	w.T.Helper()
	cmd := clustertest.Command(w.asNuv, append(w.Env, extra...), args...)
	cmd.Dir = w.Project
	return clustertest.Output(w.T, cmd)
}

// Spec writes the spec of cluster name into the project's clusters/specs and returns its path.
func (w *World) Spec(name, body string) string {
	w.T.Helper()
	p := filepath.Join(w.Project, "clusters", "specs", name+".yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.T.Fatal(err)
	}
	return p
}

// Faults replaces the emulator's injected faults (none: clear them) and returns what fired.
func (w *World) Faults(fs ...map[string]any) []map[string]any {
	w.T.Helper()
	method, body := http.MethodPut, []byte("[]")
	if len(fs) == 0 {
		method = http.MethodGet
	} else {
		body, _ = json.Marshal(fs)
	}
	req := w.adminRequest(method, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		w.T.Fatalf("faults: %d %v", resp.StatusCode, err)
	}
	return out
}

// adminRequest is a request to the emulator's /_nuv/faults with its admin token.
func (w *World) adminRequest(method string, body io.Reader) *http.Request {
	w.T.Helper()
	tok, err := emucore.ReadAdminToken(filepath.Join(w.Home, "emulator"))
	if err != nil {
		w.T.Fatal(err)
	}
	req, err := emucore.NewAdminRequest(context.Background(), method, w.URL+"/_nuv/faults", tok, body)
	if err != nil {
		w.T.Fatal(err)
	}
	return req
}

// ClearFaults removes the emulator's injected faults.
func (w *World) ClearFaults() {
	w.T.Helper()
	req := w.adminRequest(http.MethodDelete, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.T.Fatal(err)
	}
	resp.Body.Close()
}

// Tagged lists everything in the emulator that carries nuv.dev/cluster=name: EC2 resources (by
// type and id), IAM roles and EKS clusters.
func (w *World) Tagged(name string) []string {
	w.T.Helper()
	ctx := context.Background()
	var out []string
	tags, err := w.EC2.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{
		{Name: aws.String("key"), Values: []string{"nuv.dev/cluster"}}, {Name: aws.String("value"), Values: []string{name}}}})
	if err != nil {
		w.T.Fatal(err)
	}
	for _, tg := range tags.Tags {
		out = append(out, string(tg.ResourceType)+" "+aws.ToString(tg.ResourceId))
	}
	roles, err := w.IAM.ListRoles(ctx, &iam.ListRolesInput{})
	if err != nil {
		w.T.Fatal(err)
	}
	for _, r := range roles.Roles {
		tr, err := w.IAM.ListRoleTags(ctx, &iam.ListRoleTagsInput{RoleName: r.RoleName})
		if err != nil {
			w.T.Fatal(err)
		}
		for _, tg := range tr.Tags {
			if aws.ToString(tg.Key) == "nuv.dev/cluster" && aws.ToString(tg.Value) == name {
				out = append(out, "role "+aws.ToString(r.RoleName))
			}
		}
	}
	cls, err := w.EKS.ListClusters(ctx, &eks.ListClustersInput{})
	if err != nil {
		w.T.Fatal(err)
	}
	for _, c := range cls.Clusters {
		d, err := w.EKS.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(c)})
		if err == nil && d.Cluster.Tags["nuv.dev/cluster"] == name {
			out = append(out, "eks-cluster "+c)
		}
	}
	sort.Strings(out)
	return out
}

// Count counts the tagged resources by type ("vpc", "subnet", "role", ...).
func Count(tagged []string) map[string]int {
	m := map[string]int{}
	for _, s := range tagged {
		typ, _, _ := strings.Cut(s, " ")
		m[typ]++
	}
	return m
}

// ReadRecord reads cluster name's state record in NUV_HOME home.
func ReadRecord(t *testing.T, home, name string) state.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "state", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r state.Record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}
