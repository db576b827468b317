package dotenv

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	cases := []struct {
		name    string
		content string // "-" for no file
		want    []string
		errHas  string
	}{
		{name: "missing", content: "-", want: nil},
		{name: "pairs", content: "# comment\nB=2\nexport A=one\nQUOTED=\"a b\"\nEMPTY=\n", want: []string{"A=one", "B=2", "EMPTY=", "QUOTED=a b"}},
		{name: "malformed", content: "A=1\nnot a pair\n", errHas: ".env:2: "},
		{name: "malformed later", content: "# c\nA=1\n\nB=2\nC D\nAPI_TOKEN=do-not-print\n", errHas: ".env:5: "},
		{name: "unterminated quote", content: "A=1\nAPI_TOKEN=\"do-not-print\nC=3\n", errHas: ".env:2: API_TOKEN: the quoted value is never closed"},
		{name: "unterminated after a multi-line value", content: "A=\"one\ntwo\"\nB='do-not-print\n", errHas: ".env:3: B: the quoted value is never closed"},
		{name: "space in a name", content: "A=1\nMY KEY=do-not-print\n", errHas: `.env:2: variable name "MY KEY": want letters, digits and _`},
		{name: "name starting with a digit", content: "A=1\nexport 1X=do-not-print\n", errHas: `.env:2: variable name "1X"`},
		{name: "empty name", content: "A=1\n=do-not-print\n", errHas: `.env:2: variable name ""`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.content != "-" {
				if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Dir(dir)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("err %v, want one naming %q", err, tc.errHas)
				}
				if strings.Contains(err.Error(), "do-not-print") {
					t.Errorf("the error shows the file's content: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	got := Merge([]string{"A=folder", "B=folder"}, []string{"A=project", "C=project"})
	want := []string{"A=folder", "B=folder", "C=project"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
