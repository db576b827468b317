package stores

import (
	"errors"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/state"
	"github.com/nuv-dev/nuv/internal/cluster/state/objstore"
)

func TestOpen(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		loc, where, err string
	}{
		{"", home + "/state", ""},
		{"dir:/x/y", "/x/y", ""},
		{"/x/z", "/x/z", ""},
		{"s3://team-state", "s3://team-state", ""},
		{"s3://team-state/nuv/dev/", "s3://team-state/nuv/dev", ""},
		{"s3://", "", "no bucket"},
		{"s3://key:secret@team-state/p", "", "credentials do not belong"},
		{"s3://b/p?region=x", "", "a query or fragment"},
		{"ftp://b/p", "", `unknown kind "ftp://"`},
		{"foo:bar", "", "unknown kind (valid: dir:PATH, kube:NAMESPACE@KUBECONFIG, azblob://CONTAINER[/PREFIX], gs://BUCKET[/PREFIX], mongodb[+srv]://HOST[:PORT]/DB, s3://BUCKET[/PREFIX])"},
		{"mongodb://nuv:s3cret@127.0.0.1:1/nuv", "mongodb://127.0.0.1:1/nuv", ""},
	} {
		t.Run(tc.loc, func(t *testing.T) {
			s, err := Open(tc.loc, home, "")
			if tc.err != "" {
				var le *state.LocationError
				if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Open(%q) = %v, want a location error containing %q", tc.loc, err, tc.err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("the error shows the secret: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Where() != tc.where {
				t.Fatalf("Where = %q, want %q", s.Where(), tc.where)
			}
			if strings.HasPrefix(tc.loc, "s3:") {
				if _, ok := s.(*objstore.Store); !ok {
					t.Fatalf("%q opened a %T", tc.loc, s)
				}
			}
		})
	}
}

func TestRemote(t *testing.T) {
	for loc, want := range map[string]bool{"": false, "dir:/a": false, "/a/b": false, "kube:ns@kc": true, "s3://b": true, "mongodb://h/db": true} {
		if got := Remote(loc); got != want {
			t.Errorf("Remote(%q) = %v", loc, got)
		}
	}
}
