package kube

import (
	"strings"
	"testing"
)

func TestOverrideOrder(t *testing.T) {
	proj := threeClusters(t)
	cs, _ := ListEnv(proj, envMap(t))
	if err := Remember(proj, "a", cs[0].Path, TypeLocal); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	writeFile(t, home, "config.json", `{"detect": {"force": "aks"}}`)

	cases := []struct {
		name     string
		typeFile string
		env      []string
		want     string
		err      string
	}{
		{name: "remembered", want: TypeLocal},
		{name: "config detect.force", env: []string{"NUV_HOME", home}, want: TypeAKS},
		{name: "DETECT_FORCE beats config", env: []string{"NUV_HOME", home, "DETECT_FORCE", "k3s"}, want: TypeK3s},
		{name: "type file beats everything", typeFile: "osh\n", env: []string{"NUV_HOME", home, "DETECT_FORCE", "k3s"}, want: TypeOSH},
		{name: "bad type file", typeFile: "openshift", err: "a.type: unknown cluster type \"openshift\""},
		{name: "bad DETECT_FORCE", env: []string{"DETECT_FORCE", "kube"}, err: "DETECT_FORCE: unknown cluster type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := OverridePath(proj, "a")
			if c.typeFile != "" {
				writeFile(t, proj, "clusters/a.type", c.typeFile)
				defer removeFile(t, p)
			}
			got, err := KnownType(proj, "a", envMap(t, c.env...))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("KnownType = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestRememberRejectsUnknown(t *testing.T) {
	if err := Remember(t.TempDir(), "x", "/nonexistent", "openshift"); err == nil {
		t.Fatal("unknown type remembered")
	}
}
