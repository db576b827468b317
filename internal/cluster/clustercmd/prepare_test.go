package clustercmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster"
)

func TestPrepareBadInput(t *testing.T) {
	other := t.TempDir()
	for _, c := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		os.WriteFile(filepath.Join(other, c), []byte("#!/bin/sh\necho Kubernetes v1.34.0\n"), 0o755)
	}
	tests := []struct {
		name string
		args []string
		vars map[string]string
		code int
		want string
	}{
		{"offline download", []string{"prepare", "--offline", "--source", "download"}, nil, 2, "--source download needs the network: drop --offline"},
		{"unknown version", []string{"prepare", "--version", "1.35.0"}, nil, 1, `no download entry (versions and checksums) for Kubernetes "1.35.0": it has them for 1.36.3`},
		{"stray argument", []string{"prepare", "now"}, nil, 2, `unexpected argument "now"`},
		{"directory of another version", []string{"prepare", "--source", other}, nil, 1, other + " is Kubernetes v1.34.0, but this nuv runs Kubernetes v1.36.3"},
		{"NUV_KUBE_BIN of another version", []string{"prepare"}, map[string]string{"NUV_KUBE_BIN": other}, 1, "NUV_KUBE_BIN=" + other + " is Kubernetes v1.34.0"},
		{"bad mirror", []string{"prepare", "--source", "download"}, map[string]string{"NUV_KUBE_MIRROR": "http://mirror.corp"}, 1, `NUV_KUBE_MIRROR="http://mirror.corp": want an https:// base URL`},
		{"bad timeout", []string{"prepare", "--source", "download"}, map[string]string{"NUV_DOWNLOAD_TIMEOUT": "soon"}, 1, `NUV_DOWNLOAD_TIMEOUT="soon": want a duration`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"NUV_CACHE_DIR": t.TempDir(), "NUV_KUBE_BIN": ""}
			for k, v := range tt.vars {
				vars[k] = v
			}
			env, out, _ := testEnv(t, vars)
			err := Run(context.Background(), env, tt.args)
			if got := cli.ExitCode(err); got != tt.code || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("exit %d (want %d), error %v, want it to contain %q", got, tt.code, err, tt.want)
			}
			if out.Len() != 0 {
				t.Fatalf("stdout on failure: %q", out)
			}
		})
	}
}

func TestStatusGolden(t *testing.T) {
	info := cluster.Info{Name: "dev", Provider: "local", Status: cluster.Running, APIURL: "https://127.0.0.1:40001", Nodes: 1, NodesReady: 1,
		Created:    time.Now().Add(-90 * time.Second),
		Binaries:   "downloaded from https://dl.k8s.io, https://github.com on 2026-11-30, SHA-256 verified against the release checksum files",
		Durability: "safe (etcd fsyncs every write)",
		Components: []cluster.Component{{Name: "etcd", PID: 10, Running: true, Port: 40000}, {Name: "kube-apiserver", PID: 11, Running: true, Port: 40001}}}
	var b bytes.Buffer
	writeStatus(&b, info)
	golden := filepath.Join("testdata", "status.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Fatalf("status differs from %s:\n--- got\n%s--- want\n%s", golden, b.String(), want)
	}
}
