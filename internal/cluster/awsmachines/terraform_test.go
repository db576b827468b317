package awsmachines

import (
	"github.com/nuv-dev/nuv/internal/cluster/awsnet/awstest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"go.yaml.in/yaml/v3"

	"github.com/nuv-dev/nuv/internal/machine"
	"github.com/nuv-dev/nuv/internal/machine/userdata"
)

// privateKeyRE is an OpenSSH private key: its encoding carries random check bytes, so two
// encodings of one key differ there and nowhere else.
var privateKeyRE = regexp.MustCompile(`(?s)-----BEGIN OPENSSH PRIVATE KEY-----\n.*?-----END OPENSSH PRIVATE KEY-----`)

// TestMachinesTerraformUserData evaluates the module's expressions as Terraform does, with real
// keys standing in for what tls_private_key makes: every machine's user_data is the script nuv
// gives the machines it launches itself (userdata.Script), so a machine Terraform made is set up
// the same way; its host key's public half is its nuv.dev/host-key tag, which nuv pins; the
// bootstrap step hands nuv the key pair's private key in its environment; and the spec kept beside
// the module decodes to the cluster planned.
func TestMachinesTerraformUserData(t *testing.T) {
	c, desired := machinesPlan(t, externalHAProxy)
	files, err := (&Provider{}).machinesTerraform(c, desired)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclsyntax.ParseConfig(files["main.tf"], "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	body := f.Body.(*hclsyntax.Body)
	keys := map[string]*machine.Key{}
	pems := map[string]string{}
	objs := map[string]cty.Value{}
	for _, b := range body.Blocks {
		if b.Type != "resource" || b.Labels[0] != "tls_private_key" {
			continue
		}
		k, err := machine.NewKey()
		if err != nil {
			t.Fatal(err)
		}
		pem, err := k.PrivatePEM("")
		if err != nil {
			t.Fatal(err)
		}
		keys[b.Labels[1]], pems[b.Labels[1]] = k, string(pem)
		// as the tls provider writes them: each with a trailing newline
		objs[b.Labels[1]] = cty.ObjectVal(map[string]cty.Value{
			"private_key_openssh": cty.StringVal(string(pem)),
			"public_key_openssh":  cty.StringVal(k.AuthorizedKey("") + "\n"),
		})
	}
	client := keys["nuv-tier"]
	if client == nil {
		t.Fatalf("no tls_private_key for the key pair nuv-tier; keys: %v", objs)
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"tls_private_key": cty.ObjectVal(objs)},
		Functions: map[string]function.Function{"trimspace": stdlib.TrimSpaceFunc},
	}
	eval := func(b *hclsyntax.Block, attr string) cty.Value {
		t.Helper()
		a, ok := b.Body.Attributes[attr]
		if !ok {
			t.Fatalf("%s %v has no %s", b.Type, b.Labels, attr)
		}
		v, diags := a.Expr.Value(ctx)
		if diags.HasErrors() {
			t.Fatalf("%s %v: %s: %v", b.Type, b.Labels, attr, diags)
		}
		return v
	}
	machines := 0
	for _, b := range body.Blocks {
		switch {
		case b.Type == "resource" && b.Labels[0] == "aws_instance":
			machines++
			name := b.Labels[1]
			host := keys["host-"+name]
			if host == nil {
				t.Fatalf("machine %s has no host key of its own", name)
			}
			want, err := userdata.Script(userdata.Config{Hostname: "tier-" + name, HostKey: host, AuthorizedKeys: []string{client.AuthorizedKey("")}})
			if err != nil {
				t.Fatal(err)
			}
			got := eval(b, "user_data").AsString()
			if !privateKeyRE.MatchString(got) || privateKeyRE.FindString(got)+"\n" != pems["host-"+name] {
				t.Errorf("machine %s: the user data does not carry its host key", name)
			}
			if privateKeyRE.ReplaceAllString(got, "KEY") != privateKeyRE.ReplaceAllString(string(want), "KEY") {
				t.Errorf("machine %s: the user data Terraform gives it differs from nuv's:\n%s\nwant\n%s", name, got, want)
			}
			if tag := eval(b, "tags").GetAttr(TagHostKey).AsString(); tag != host.AuthorizedKey("") {
				t.Errorf("machine %s: tag %s = %q, want its host key %q", name, TagHostKey, tag, host.AuthorizedKey(""))
			}
		case b.Type == "resource" && b.Labels[0] == "terraform_data" && b.Labels[1] == "bootstrap":
			var env cty.Value
			for _, p := range b.Body.Blocks {
				if p.Type == "provisioner" {
					env = eval(p, "environment")
				}
			}
			if env.IsNull() || env.GetAttr(EnvSSHKey).AsString() != pems["nuv-tier"] {
				t.Errorf("the bootstrap step does not pass the key pair's private key in $%s", EnvSSHKey)
			}
		}
	}
	if machines != 6 {
		t.Errorf("%d machines in the module, want 6 (a control plane, 3 etcd, a worker, the HAProxy machine)", machines)
	}
	beside, ok := files["tier.yaml"]
	if !ok {
		t.Fatalf("no spec beside the module; files: %d", len(files))
	}
	again := awstest.Parse(t, string(beside))
	a, _ := yaml.Marshal(again)
	w, _ := yaml.Marshal(c)
	if string(a) != string(w) {
		t.Errorf("the spec beside the module decodes to\n%s\nwant\n%s", a, w)
	}
}

// TestClientKeyFromEnvironment: the key the Terraform module's bootstrap step passes in
// NUV_AWS_SSH_KEY is the one nuv connects with (nothing written to nuv's home); a value that is
// not a key is refused naming the variable, never echoing the value.
func TestClientKeyFromEnvironment(t *testing.T) {
	k, err := machine.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	pem, err := k.PrivatePEM("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, value, wantErr string }{
		{"key", string(pem), ""},
		{"not a key", "secret-looking-value", "$" + EnvSSHKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			p := &Provider{Home: home, Getenv: func(n string) string {
				if n == EnvSSHKey {
					return tc.value
				}
				return ""
			}}
			got, err := p.clientKey("tier", true)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), tc.value) {
					t.Fatalf("error %v: want one naming %s and not showing the value", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Fingerprint() != k.Fingerprint() {
				t.Errorf("key %s, want the environment's %s", got.Fingerprint(), k.Fingerprint())
			}
			if _, err := os.Stat(p.sshKeyPath("tier")); !os.IsNotExist(err) {
				t.Errorf("a key was written to nuv's home (%v): the environment's is used as it is", err)
			}
		})
	}
}
