package deploy

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/registry"
)

func nodeWithImages(names ...string) corev1.Node {
	return corev1.Node{Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: names}}}}
}

// TestCheckImage asks nuv's real loopback registry (and a closed port) about the operator image,
// with and without a node that already holds it.
func TestCheckImage(t *testing.T) {
	regDir := t.TempDir()
	h, err := registry.NewHandler(regDir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	pushed := host + "/nuv-dev/whisk-operator:v1"
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference(pushed)
	push, err := registry.PushAuth(regDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithAuth(push)); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	cases := []struct {
		name                                string
		ref                                 string
		nodes                               []corev1.Node
		onNodes, pullable, missing, unknown bool
	}{
		{name: "pushed to its registry", ref: pushed, pullable: true},
		{name: "tag never pushed", ref: host + "/nuv-dev/whisk-operator:latest", missing: true},
		{name: "repository never pushed", ref: host + "/other/op:latest", missing: true},
		{name: "registry unreachable", ref: closed + "/nuv-dev/whisk-operator:latest", unknown: true},
		{name: "loaded into the nodes (kind load)", ref: closed + "/nuv-dev/whisk-operator:latest",
			nodes: []corev1.Node{nodeWithImages("registry.k8s.io/pause:3.10"), nodeWithImages(closed + "/nuv-dev/whisk-operator:latest")}, onNodes: true},
		{name: "docker hub short name on a node", ref: "whisk-operator:dev",
			nodes: []corev1.Node{nodeWithImages("docker.io/library/whisk-operator:dev")}, onNodes: true},
		{name: "another tag on the node does not count", ref: closed + "/nuv-dev/whisk-operator:latest",
			nodes: []corev1.Node{nodeWithImages(closed + "/nuv-dev/whisk-operator:v0")}, unknown: true},
		{name: "invalid reference", ref: "UPPER/case:ref", missing: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := checkImage(context.Background(), tc.nodes, tc.ref, authn.DefaultKeychain, nil)
			got := fmt.Sprint(v.onNodes, v.pullable, v.missing != nil, v.unknown != nil)
			want := fmt.Sprint(tc.onNodes, tc.pullable, tc.missing, tc.unknown)
			if got != want {
				t.Fatalf("verdict %+v (onNodes pullable missing unknown = %s), want %s", v, got, want)
			}
		})
	}
}

// TestCheckDefaultImageMessage: on a kind cluster with nothing built, loaded or pushed the operator
// verb stops before applying and names the commands that fix it; a dry run only warns; a local
// cluster and an image the user chose are not checked.
func TestCheckDefaultImageMessage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	def := imageChoice{Ref: closed + "/nuv-dev/whisk-operator:latest", Source: "default"}
	cases := []struct {
		name    string
		tg      target
		img     imageChoice
		dryRun  bool
		errHas  string
		warning bool
	}{
		{name: "kind, nothing loaded", tg: target{name: "k1", kubeType: "kind"}, img: def,
			errHas: "nothing was built, loaded or pushed for kind cluster k1"},
		{name: "kind dry run warns", tg: target{name: "k1", kubeType: "kind"}, img: def, dryRun: true, warning: true},
		{name: "cloud cluster, registry unreachable from here: a warning", tg: target{name: "e1", kubeType: "eks"}, img: def, warning: true},
		{name: "local cluster runs the operator on the host", tg: target{name: "dev", kubeType: "local", localName: "dev"}, img: def},
		{name: "an image the user chose", tg: target{name: "k1", kubeType: "kind"}, img: imageChoice{Ref: def.Ref, Source: "MY_OPERATOR_IMAGE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var warnings strings.Builder
			o := Options{DryRun: tc.dryRun, Getenv: func(string) string { return "" }, Log: cli.NewLogger(&warnings, 0)}
			tg := tc.tg
			noNodes := func(context.Context) []corev1.Node { return nil }
			err := checkDefaultImage(context.Background(), o, &tg, tc.img, noNodes)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) || !strings.Contains(err.Error(), "task build-and-load") ||
					!strings.Contains(err.Error(), "MY_OPERATOR_IMAGE") {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.warning != strings.Contains(warnings.String(), "build-and-load") {
				t.Fatalf("warning = %q", warnings.String())
			}
		})
	}
}
