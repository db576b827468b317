package kube

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRenderInstance feeds arbitrary instance files and project .env files to RenderInstance
// (${VAR}, ${VAR:-default} and $${ substitution): it must never panic, every error names the
// instance file, a file without "$" comes back unchanged, and no reference to a variable that is
// set survives.
func FuzzRenderInstance(f *testing.F) {
	f.Add([]byte("apiVersion: nuv.dev/v1\nkind: Whisk\nmetadata:\n  name: ${NAME:-whisk}\nspec:\n  image: ${SET}\n  # ${UNSET} in a comment\n  literal: $${SET}\n"), []byte("NAME=from-env-file\n"))
	f.Add([]byte("a: ${UNSET}\nb: ${FROM_DOTENV}"), []byte("FROM_DOTENV=\"quoted value\"\n"))
	f.Add([]byte("x: ${SET:-}${:-}${1BAD}$${${SET}}\n"), []byte("BROKEN=\"\n"))
	project := f.TempDir()
	dir := filepath.Join(project, "tests", "local")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "SET" {
			return "set-value"
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, instance, dotenv []byte) {
		path := filepath.Join(dir, "whisk.yaml")
		if err := os.WriteFile(path, instance, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, ".env"), dotenv, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := RenderInstance(path, getenv)
		if err != nil {
			if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), filepath.Join(project, ".env")) {
				t.Fatalf("error names neither the instance nor the .env file: %v", err)
			}
			return
		}
		if !bytes.Contains(instance, []byte("$")) && !bytes.Equal(bytes.ReplaceAll(instance, []byte("\r\n"), []byte("\n")), out) && !bytes.Contains(instance, []byte("\r")) {
			t.Fatalf("a file without $ changed:\n%q\n%q", instance, out)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "${SET}") && !strings.HasPrefix(strings.TrimSpace(line), "#") && !bytes.Contains(instance, []byte("$${SET}")) {
				t.Fatalf("${SET} survived in %q", line)
			}
		}
	})
}
