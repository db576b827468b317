package tfgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/tfgen"
	"github.com/nuv-dev/nuv/internal/cluster/tfgen/tfgentest"
	"github.com/zclconf/go-cty/cty"
)

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"node-group/workers": "node-group_workers",
		"subnet/private-a":   "subnet_private-a",
		"1st":                "_1st",
		"-x":                 "_-x",
		"":                   "_",
		"a.b c":              "a_b_c",
	} {
		if got := tfgen.Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}

// sample builds a small module the way a provider does.
func sample() map[string][]byte {
	m := tfgen.NewModule()
	m.Variables("eu-west-1", map[string]string{"nuv.dev/cluster": "dev", "team": "platform"})
	b := m.File("main.tf")
	vpc := b.AppendNewBlock("resource", []string{"aws_vpc", "main"}).Body()
	vpc.SetAttributeValue("cidr_block", cty.StringVal("10.0.0.0/16"))
	vpc.SetAttributeRaw("tags", tfgen.Ref("var", "tags"))
	b.AppendNewline()
	sn := b.AppendNewBlock("resource", []string{"aws_subnet", tfgen.Name("subnet/a")}).Body()
	sn.SetAttributeRaw("vpc_id", tfgen.Ref("aws_vpc", "main", "id"))
	sn.SetAttributeValue("availability_zones", tfgen.Strings("eu-west-1a", "eu-west-1b"))
	sn.SetAttributeRaw("depends_on", tfgen.List(tfgen.Ref("aws_vpc", "main")))
	return m.Bytes()
}

// TestGolden checks the shared variables and references against golden files and terraform fmt.
func TestGolden(t *testing.T) {
	tfgentest.Check(t, filepath.Join("testdata", "sample"), sample())
}

func TestWriteRemovesOnlyItsOwnStaleFiles(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "old.tf")
	theirs := filepath.Join(dir, "backend.tf")
	if err := os.WriteFile(mine, []byte(tfgen.Header+"locals {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte("terraform {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := tfgen.Write(dir, sample())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Errorf("wrote %v", paths)
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("stale nuv file left: %v", err)
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Errorf("a file nuv did not write was removed: %v", err)
	}
}

func TestWriteRefusesHCLThatDoesNotParse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	_, err := tfgen.Write(dir, map[string][]byte{"main.tf": []byte("resource \"x\" {\n")})
	if err == nil || !strings.Contains(err.Error(), "main.tf:") {
		t.Fatalf("err = %v, want a parse error naming main.tf", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a module that does not parse created %s", dir)
	}
}
