package load

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	ggcr "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/nuv-dev/nuv/internal/image"
	"github.com/nuv-dev/nuv/internal/image/publish"
)

type recordPublisher struct{ refs []string }

func (r *recordPublisher) Publish(_ context.Context, _ v1.ImageIndex, ref name.Reference) (string, error) {
	r.refs = append(r.refs, ref.String())
	return ref.String(), nil
}

func TestDeliverRoutesByClusterType(t *testing.T) {
	srv := httptest.NewServer(ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	idx, err := random.Index(256, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	kinds := map[string]*recordPublisher{}
	d := Delivery{
		LocalRegistry: func(context.Context) (string, error) { return host, nil },
		Local:         &publish.Remote{},
		NewKind: func(cluster string) image.Publisher {
			kinds[cluster] = &recordPublisher{}
			return kinds[cluster]
		},
		Remote: &publish.Remote{},
	}
	repo, _ := name.NewRepository("ghcr.io/nuv-dev/whisk-operator")
	ctx := context.Background()

	ref, err := d.Deliver(ctx, idx, Target{Name: "dev", Type: "local"}, repo, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if ref != host+"/nuv-dev/whisk-operator:dev@"+want.String() {
		t.Errorf("local ref %s", ref)
	}
	pushed, err := name.ParseReference(host + "/nuv-dev/whisk-operator:dev")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Index(pushed); err != nil {
		t.Errorf("not in the loopback registry: %v", err)
	}

	ref, err = d.Deliver(ctx, idx, Target{Name: "k", Type: "kind", Context: "kind-k"}, repo, "dev")
	if err != nil || ref != "ghcr.io/nuv-dev/whisk-operator:dev" || kinds["k"] == nil {
		t.Errorf("kind: %s %v %v", ref, err, kinds)
	}

	d.KindTagDigest = true
	ref, err = d.Deliver(ctx, idx, Target{Name: "k", Type: "kind", Context: "kind-k"}, repo, "dev")
	if err != nil || ref != "ghcr.io/nuv-dev/whisk-operator:dev-"+want.Hex[:12] {
		t.Errorf("kind with digest tag: %s %v", ref, err)
	}

	other, _ := name.NewRepository(host + "/team/op")
	ref, err = d.Deliver(ctx, idx, Target{Name: "prod", Type: "eks"}, other, "1.0")
	if err != nil || ref != host+"/team/op:1.0@"+want.String() {
		t.Errorf("eks: %s %v", ref, err)
	}
}

func TestRefRecord(t *testing.T) {
	project := t.TempDir()
	if r, err := ReadRef(project, "dev"); err != nil || r != "" {
		t.Fatalf("no record: %q %v", r, err)
	}
	if err := WriteRef(project, "dev", "localhost:5001/op:dev@sha256:abc"); err != nil {
		t.Fatal(err)
	}
	if r, err := ReadRef(project, "dev"); err != nil || r != "localhost:5001/op:dev@sha256:abc" {
		t.Fatalf("record: %q %v", r, err)
	}
	if !strings.HasSuffix(RefFile(project, "dev"), "/.nuv/images/dev.ref") {
		t.Errorf("RefFile %s", RefFile(project, "dev"))
	}
}

func TestHostingDoc(t *testing.T) {
	doc := HostingDoc("localhost:5001")
	for _, want := range []string{`host: "localhost:5001"`, `hostFromContainerRuntime: "localhost:5001"`, "help: "} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc %q lacks %s", doc, want)
		}
	}
}

func TestHostingFields(t *testing.T) {
	for _, tc := range []struct {
		h    Hosting
		want string
	}{
		{Hosting{Host: "localhost:5001"}, "host: \"localhost:5001\"\nhelp: \"" + Help + "\"\n"},
		{Hosting{Host: "localhost:5001", FromContainerRuntime: "localhost:5001", FromClusterNetwork: "nuv-registry-0a1b2c3d:5000"},
			"host: \"localhost:5001\"\nhostFromContainerRuntime: \"localhost:5001\"\nhostFromClusterNetwork: \"nuv-registry-0a1b2c3d:5000\"\nhelp: \"" + Help + "\"\n"},
	} {
		if got := tc.h.Doc(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.h, got, tc.want)
		}
	}
}
