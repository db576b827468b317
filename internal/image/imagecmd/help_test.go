package imagecmd

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/image/publish"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestHelpGolden pins the help of every `nuv image` command (testdata/*.golden; go test -update).
func TestHelpGolden(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"tag", "-h"}, {"build", "-h"}, {"push", "-h"}, {"load", "-h"}, {"login", "-h"}, {"workload", "-h"}} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			var out bytes.Buffer
			vars := map[string]string{"NUV_PROJECT": t.TempDir()} // defaults only: no BASETAG, PLATFORMS, ...
			env := &cli.Env{Streams: cli.Streams{Out: &out, Err: &out}, Log: cli.Quiet(),
				Getenv: func(k string) string { return vars[k] }, Dir: t.TempDir()}
			if err := Run(context.Background(), env, args); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			got := out.String()
			if args[0] == "load" { // the default platform is the host's
				got = strings.ReplaceAll(got, hostPlatform(), "linux/<host arch>")
			}
			golden := filepath.Join("testdata", "help_"+args[0]+".golden")
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("help of %v changed:\n%s", args, got)
			}
		})
	}
}

func hostPlatform() string { return publish.HostPlatform().String() }
