package userdata

import (
	"crypto/ed25519"
	"encoding/pem"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/nuv-dev/nuv/internal/golden"
	"github.com/nuv-dev/nuv/internal/machine"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// pemRE finds the private key in a script (its encoding carries random check bytes, so the golden
// files show a placeholder where it was, after the test checked it is the host key).
var pemRE = regexp.MustCompile(`(?s)-----BEGIN OPENSSH PRIVATE KEY-----\n.*?-----END OPENSSH PRIVATE KEY-----`)

func seededKey(t *testing.T, b byte) *machine.Key {
	t.Helper()
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = b
	}
	blk, err := ssh.MarshalPrivateKey(ed25519.NewKeyFromSeed(seed), "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := machine.ParseKey(pem.EncodeToMemory(blk))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestScript pins the user data of a machine with and without a hostname and a caller's fragment;
// the private host key is in it once, and is the machine's.
func TestScript(t *testing.T) {
	host, client := seededKey(t, 1), seededKey(t, 2)
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{HostKey: host, AuthorizedKeys: []string{client.AuthorizedKey("nuv")}}},
		{"hostname-then", Config{Hostname: "cp-0.demo", HostKey: host, AuthorizedKeys: []string{client.AuthorizedKey("nuv"), seededKey(t, 3).AuthorizedKey("")},
			Then: "systemctl enable --now haproxy.service\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Script(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			keys := pemRE.FindAllString(string(b), -1)
			if len(keys) != 1 {
				t.Fatalf("%d private keys in the script, want 1", len(keys))
			}
			k, err := machine.ParseKey([]byte(keys[0]))
			if err != nil {
				t.Fatal(err)
			}
			if k.Fingerprint() != host.Fingerprint() {
				t.Errorf("the script's host key is %s, want %s", k.Fingerprint(), host.Fingerprint())
			}
			got := pemRE.ReplaceAllString(string(b), "<the machine's private host key>")
			golden.Check(t, filepath.Join("testdata", tc.name+".sh"), got, *update)
		})
	}
}

// TestScriptRefuses names what is wrong.
func TestScriptRefuses(t *testing.T) {
	host, client := seededKey(t, 1), seededKey(t, 2)
	auth := []string{client.AuthorizedKey("nuv")}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no host key", Config{AuthorizedKeys: auth}, "host key is required"},
		{"no authorized key", Config{HostKey: host}, "at least one authorized key"},
		{"bad authorized key", Config{HostKey: host, AuthorizedKeys: []string{"ssh-ed25519 nope"}}, "authorized key 1 is not one authorized_keys line"},
		{"two lines", Config{HostKey: host, AuthorizedKeys: []string{auth[0] + "\n" + auth[0]}}, "authorized key 1"},
		{"hostname", Config{Hostname: "Bad_Host", HostKey: host, AuthorizedKeys: auth}, `hostname "Bad_Host" is not a valid hostname`},
		{"hostname quote", Config{Hostname: "a'b", HostKey: host, AuthorizedKeys: auth}, "is not a valid hostname"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Script(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestTemplateFilledIsScript fills Template's holes with the keys Script was given: the two
// scripts are the same bytes, so a machine made from the template (by Terraform) is set up as the
// machines nuv makes are. Literal text goes through the caller's escape and the holes do not.
func TestTemplateFilledIsScript(t *testing.T) {
	host, client := seededKey(t, 3), seededKey(t, 4)
	for _, tc := range []struct{ name, hostname, then string }{
		{"plain", "", ""},
		{"hostname and steps", "ha-control-plane-0", "echo ${HOME} %{x}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Script(Config{Hostname: tc.hostname, HostKey: host, AuthorizedKeys: []string{client.AuthorizedKey("")}, Then: tc.then})
			if err != nil {
				t.Fatal(err)
			}
			pemBytes, err := host.PrivatePEM("")
			if err != nil {
				t.Fatal(err)
			}
			// escape marks the literal parts so the test can undo it: holes must not be marked
			escape := func(s string) string { return strings.ReplaceAll(s, "$", "$$") }
			tmpl, err := Template(tc.hostname, tc.then, Holes{HostKey: "<HK>", HostPub: "<HP>", Authorized: "<AK>"}, escape)
			if err != nil {
				t.Fatal(err)
			}
			if tc.then != "" && !strings.Contains(tmpl, "echo $${HOME}") {
				t.Errorf("literal text was not escaped:\n%s", tmpl)
			}
			got := strings.ReplaceAll(tmpl, "$$", "$")
			got = strings.NewReplacer("<HK>", strings.TrimRight(string(pemBytes), "\n"), "<HP>", host.AuthorizedKey(""), "<AK>", client.AuthorizedKey("")).Replace(got)
			// the key's encoding carries random check bytes: compare around it
			got, wantS := pemRE.ReplaceAllString(got, "KEY"), pemRE.ReplaceAllString(string(want), "KEY")
			if got != wantS {
				t.Errorf("filled template differs from Script's output:\n%s\nwant\n%s", got, wantS)
			}
		})
	}
	if _, err := Template("Not A Host", "", Holes{}, func(s string) string { return s }); err == nil || !strings.Contains(err.Error(), `"Not A Host"`) {
		t.Errorf("bad hostname: %v", err)
	}
}
