package quickread_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cluster/localkube"
	"github.com/nuv-dev/nuv/internal/cluster/quickread"
	"github.com/nuv-dev/nuv/internal/cluster/state"
)

// jsonFields maps each JSON field name of struct type t to its Go kind and element type's name.
func jsonFields(t reflect.Type) map[string]string {
	out := map[string]string{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		typ := f.Type.Kind().String()
		if f.Type.Kind() != reflect.String {
			typ = f.Type.String()
		}
		out[name+" "+f.Tag.Get("json")] = typ
	}
	return out
}

// TestMirrorsTheProviders: the records and the local section decode here as in the packages
// that write them (same JSON fields, same types): a field one of them adds fails this test. (The
// local provider's record data has one definition, LocalData, which package localkube uses.)
func TestMirrorsTheProviders(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ours, want reflect.Type
	}{
		{"state record", reflect.TypeFor[quickread.Record](), reflect.TypeFor[state.Record]()},
		{"local section", reflect.TypeFor[quickread.LocalSection](), reflect.TypeFor[localkube.Section]()},
	} {
		if got, want := jsonFields(tc.ours), jsonFields(tc.want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ours %v, the provider's %v", tc.name, got, want)
		}
	}
	if got, want := reflect.TypeFor[quickread.LocalSection]().Field(0).Tag, reflect.TypeFor[localkube.Section]().Field(0).Tag; got != want {
		t.Errorf("local section tags %q, want %q", got, want)
	}
}
