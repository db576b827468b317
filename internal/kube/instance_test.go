package kube

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestInstanceFile(t *testing.T) {
	proj := t.TempDir()
	writeFile(t, proj, "tests/generic/whisk.yaml", "generic")
	writeFile(t, proj, "tests/eks/whisk.yaml", "eks")
	writeFile(t, proj, "tests/generic/small.yml", "small")
	cases := []struct {
		typ, name, want, err string
	}{
		{TypeEKS, "", "tests/eks/whisk.yaml", ""},
		{TypeEKS, "whisk", "tests/eks/whisk.yaml", ""},
		{TypeAKS, "", "tests/generic/whisk.yaml", ""},
		{"", "", "tests/generic/whisk.yaml", ""},
		{TypeLocal, "small", "tests/generic/small.yml", ""},
		{TypeLocal, "small.yaml", "tests/generic/small.yml", ""},
		{TypeLocal, "missing", "", "tried " + filepath.Join(proj, "tests/local/missing.yaml") + ", " + filepath.Join(proj, "tests/generic/missing.yaml")},
		{TypeLocal, "../etc/passwd", "", "want a plain name"},
		{"nonsense", "", "", `cluster type "nonsense": unknown`},
	}
	for _, c := range cases {
		got, err := InstanceFile(proj, c.typ, c.name)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("InstanceFile(%q,%q) err = %v, want %q", c.typ, c.name, err, c.err)
			}
			continue
		}
		if err != nil || got != filepath.Join(proj, c.want) {
			t.Errorf("InstanceFile(%q,%q) = %q, %v; want %q", c.typ, c.name, got, err, c.want)
		}
	}
}

func TestRenderInstance(t *testing.T) {
	proj := t.TempDir()
	writeFile(t, proj, ".env", "FROM_DOTENV=dot\nBOTH=from-dotenv\nEMPTY_IN_DOTENV=\n")
	cases := []struct {
		name, in, want, err string
		env                 []string
	}{
		{name: "env and dotenv", in: "a: ${FROM_ENV}\nb: ${FROM_DOTENV}\n", env: []string{"FROM_ENV", "e"}, want: "a: e\nb: dot\n"},
		{name: "environment wins over .env", in: "x: ${BOTH}", env: []string{"BOTH", "from-env"}, want: "x: from-env"},
		{name: "empty in .env is set", in: "x: '${EMPTY_IN_DOTENV}'\n", want: "x: ''\n"},
		{name: "default", in: "r: ${REPLICAS:-3}\n", want: "r: 3\n"},
		{name: "default not used when set", in: "r: ${REPLICAS:-3}\n", env: []string{"REPLICAS", "5"}, want: "r: 5\n"},
		{name: "empty default", in: "r: '${NOPE:-}'\n", want: "r: ''\n"},
		{name: "escape", in: "cmd: $${HOME} $HOME\n", want: "cmd: ${HOME} $HOME\n"},
		{name: "no variables", in: "plain: yes\n", want: "plain: yes\n"},
		{name: "comments untouched", in: "# set ${UNSET_DOC} to change it\n  # ${ALSO}\nx: ${FROM_DOTENV} # ${TRAILING:-t}\n", want: "# set ${UNSET_DOC} to change it\n  # ${ALSO}\nx: dot # t\n"},
		{name: "unset is an error", in: "a: 1\nb: ${MISSING_ONE}\nc: ${MISSING_TWO} ${FROM_DOTENV}\n", err: "line 2: ${MISSING_ONE}; line 3: ${MISSING_TWO}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, proj, "tests/generic/"+strings.ReplaceAll(c.name, " ", "_")+".yaml", c.in)
			got, err := RenderInstance(p, envMap(t, c.env...))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), filepath.Join(proj, ".env")) {
					t.Fatalf("err = %v, want it to name %q, the file and .env", err, c.err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestRenderInstanceBadDotenv(t *testing.T) {
	proj := t.TempDir()
	writeFile(t, proj, ".env", "A='unterminated\n")
	p := writeFile(t, proj, "tests/generic/whisk.yaml", "a: ${A}\n")
	if _, err := RenderInstance(p, envMap(t)); err == nil || !strings.Contains(err.Error(), filepath.Join(proj, ".env")) {
		t.Fatalf("malformed .env: %v", err)
	}
	if _, err := RenderInstance(filepath.Join(proj, "tests/none.yaml"), envMap(t)); err == nil {
		t.Fatal("missing instance file should fail")
	}
}
