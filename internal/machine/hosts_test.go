package machine

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The machines file round-trips (0600), refuses what it cannot hold, and a damaged line is an
// error naming the file and the line.
func TestHosts(t *testing.T) {
	k1, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "aws", "sm", HostsFile)
	hosts := []Host{{Name: "sm-control-plane-0", Address: "10.0.1.4", Endpoint: "10.0.1.4:22", HostKey: k1.AuthorizedKey("")},
		{Name: "sm-workers-0", Address: "10.0.1.5", Endpoint: "203.0.113.9:22", HostKey: k2.AuthorizedKey("host")}}
	if err := WriteHosts(path, hosts); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v, want 0600", st, err)
	}
	got, err := ReadHosts(path)
	if err != nil {
		t.Fatal(err)
	}
	hosts[1].HostKey = k2.AuthorizedKey("") // the comment is not kept
	if !reflect.DeepEqual(got, hosts) {
		t.Errorf("read %+v, want %+v", got, hosts)
	}
	for _, bad := range []Host{{Name: "a b", Address: "10.0.0.1", Endpoint: "10.0.0.1:22", HostKey: k1.AuthorizedKey("")},
		{Name: "a", Address: "nope", Endpoint: "x:22", HostKey: k1.AuthorizedKey("")}, {Name: "a", Address: "10.0.0.1", Endpoint: "10.0.0.1:22", HostKey: "junk"}} {
		if err := WriteHosts(path, []Host{bad}); err == nil {
			t.Errorf("WriteHosts(%+v) succeeded", bad)
		}
	}
	for _, tc := range []struct{ line, want string }{
		{"a 10.0.0.1 10.0.0.1:22", ":1: want NAME ADDRESS ENDPOINT KEY-TYPE KEY, got 3 fields"},
		{"a 10.0.0.1 10.0.0.1:22 ssh-ed25519 AAAAjunk", ":1: host key of a"},
		{"a ten 10.0.0.1:22 " + k1.AuthorizedKey(""), `:1: address of a: "ten" is no IP address`},
		{"a 10.0.0.1 nope " + k1.AuthorizedKey(""), ":1: endpoint of a"},
	} {
		p := filepath.Join(t.TempDir(), "m")
		if err := os.WriteFile(p, []byte(tc.line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadHosts(p); err == nil || !strings.Contains(err.Error(), p+tc.want) {
			t.Errorf("ReadHosts(%q) = %v, want %q", tc.line, err, tc.want)
		}
	}
}
