package inittrace

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    Init
		ok      bool
		wantErr string
	}{
		{name: "fractional figures", line: "init github.com/nuv-dev/nuv/internal/proc @79 ms, 0.008 ms clock, 504 bytes, 4 allocs",
			want: Init{Package: "github.com/nuv-dev/nuv/internal/proc", StartMS: 79, ClockMS: 0.008, Bytes: 504, Allocs: 4}, ok: true},
		{name: "early start, whole clock", line: "init github.com/nuv-dev/nuv/internal/dotenv @5.4 ms, 12 ms clock, 9488 bytes, 110 allocs",
			want: Init{Package: "github.com/nuv-dev/nuv/internal/dotenv", StartMS: 5.4, ClockMS: 12, Bytes: 9488, Allocs: 110}, ok: true},
		{name: "nothing allocated", line: "init github.com/nuv-dev/nuv/internal/app @183 ms, 0 ms clock, 0 bytes, 0 allocs",
			want: Init{Package: "github.com/nuv-dev/nuv/internal/app", StartMS: 183}, ok: true},
		{name: "standard library", line: "init unicode @0.11 ms, 0.045 ms clock, 24568 bytes, 30 allocs",
			want: Init{Package: "unicode", StartMS: 0.11, ClockMS: 0.045, Bytes: 24568, Allocs: 30}, ok: true},
		{name: "carriage return", line: "init os @1 ms, 0.002 ms clock, 96 bytes, 3 allocs\r",
			want: Init{Package: "os", StartMS: 1, ClockMS: 0.002, Bytes: 96, Allocs: 3}, ok: true},
		{name: "program output", line: "0.1.0-dev"},
		{name: "empty", line: ""},
		{name: "prose starting with init", line: "init failed: no such file"},
		{name: "missing field", line: "init os @1 ms, 0.002 ms clock, 96 bytes", wantErr: `want "@<start> ms`},
		{name: "clock not a number", line: "init os @1 ms, fast ms clock, 96 bytes, 3 allocs", wantErr: `"fast" is not a number of milliseconds`},
		{name: "wrong unit", line: "init os @1 ms, 0.002 ms clock, 96 kB, 3 allocs", wantErr: `"96 kB" does not end in " bytes"`},
		{name: "negative count", line: "init os @1 ms, 0.002 ms clock, 96 bytes, -3 allocs", wantErr: `"-3" is not a count`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := ParseLine(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), tt.line) {
					t.Fatalf("ParseLine(%q) error = %v, want one naming the line and saying %s", tt.line, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLine(%q): %v", tt.line, err)
			}
			if ok != tt.ok || got != tt.want {
				t.Errorf("ParseLine(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParse(t *testing.T) {
	stderr := "init internal/bytealg @0.002 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"warning: something the program said\n" +
		"init github.com/nuv-dev/nuv/internal/kube @19 ms, 0.033 ms clock, 6088 bytes, 52 allocs\n"
	got, err := Parse(strings.NewReader(stderr))
	if err != nil {
		t.Fatal(err)
	}
	want := []Init{
		{Package: "internal/bytealg", StartMS: 0.002},
		{Package: "github.com/nuv-dev/nuv/internal/kube", StartMS: 19, ClockMS: 0.033, Bytes: 6088, Allocs: 52},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Parse = %+v, want %+v", got, want)
	}

	_, err = Parse(strings.NewReader("0.1.0-dev\ninit os @1 ms, 0.002 ms clock\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("Parse of a malformed second line: error %v, want one naming line 2", err)
	}
}

// module is the import path prefix of the packages nuv owns.
const module = "github.com/nuv-dev/nuv"

// The budget of one nuv package's initialisation. Compiling the smallest regular expression costs
// 28 allocations and 2 KiB, parsing the smallest template 24 and 2.7 KiB, decoding a two-key JSON
// object 9 to 14; a map literal of up to 8 constant entries costs 2 allocations and about 250
// bytes. So a package over 8 allocations or 2 KiB compiles, parses, decodes or builds something at
// init that it should build on first use (package lazy), while a few tiny constant lookup maps
// fit. Allocations and bytes are the same on every run of the same build, unlike time.
const (
	maxAllocs = 8
	maxBytes  = 2048
)

// overBudget returns, sorted, the packages of module whose initialisation allocated more than
// maxAllocs times or maxBytes bytes, each with its figures.
func overBudget(inits []Init, module string) []string {
	var out []string
	for _, in := range inits {
		if in.Package != module && !strings.HasPrefix(in.Package, module+"/") {
			continue
		}
		if in.Allocs > maxAllocs || in.Bytes > maxBytes {
			out = append(out, fmt.Sprintf("%s: %d allocs, %d bytes", in.Package, in.Allocs, in.Bytes))
		}
	}
	slices.Sort(out)
	return out
}

func TestOverBudget(t *testing.T) {
	inits := []Init{
		{Package: "github.com/nuv-dev/nuv/internal/report", Bytes: 44904, Allocs: 934},
		{Package: "github.com/nuv-dev/nuv/internal/proc", Bytes: 504, Allocs: 4},
		{Package: "github.com/nuv-dev/nuv/internal/cluster/kubebin", Bytes: 672, Allocs: maxAllocs},
		{Package: "github.com/nuv-dev/nuv/internal/big", Bytes: maxBytes + 1, Allocs: 1},
		{Package: "github.com/nuv-dev/nuv/internal/many", Bytes: 100, Allocs: maxAllocs + 1},
		{Package: "github.com/nuv-dev/nuvother/x", Bytes: 99999, Allocs: 999},
		{Package: "k8s.io/client-go/kubernetes/scheme", Bytes: 2e6, Allocs: 20000},
	}
	got := overBudget(inits, module)
	want := []string{
		"github.com/nuv-dev/nuv/internal/big: 1 allocs, 2049 bytes",
		"github.com/nuv-dev/nuv/internal/many: 9 allocs, 100 bytes",
		"github.com/nuv-dev/nuv/internal/report: 934 allocs, 44904 bytes",
	}
	if !slices.Equal(got, want) {
		t.Errorf("overBudget = %q, want %q", got, want)
	}
}

// TestNuvPackagesDoNoWorkAtInit builds nuv's front (./nuv), its full program (./cmd/nuv-full),
// its task program (./cmd/nuv-task) and its emulators' program (./cmd/nuv-emulator), runs each as `nuv -version` with GODEBUG=inittrace=1 and
// fails naming every package of nuv whose initialisation is over the budget. It logs, for the record, each program's total init clock and
// its heaviest initialisers; it asserts nothing about time.
func TestNuvPackagesDoNoWorkAtInit(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	bin := t.TempDir()
	for _, prog := range []struct{ name, pkg string }{{"nuv", "./nuv"}, {"nuv-full", "./cmd/nuv-full"}, {"nuv-task", "./cmd/nuv-task"}, {"nuv-emulator", "./cmd/nuv-emulator"}} {
		t.Run(prog.name, func(t *testing.T) {
			exe := filepath.Join(bin, prog.name)
			// -s -w: no symbol table or DWARF, a third less link time for the full program; what
			// runs at init is the same (the trace names packages from the runtime's own tables).
			build := exec.Command("go", "build", "-ldflags=-s -w", "-o", exe, prog.pkg)
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build -ldflags='-s -w' -o %s %s: %v\n%s", exe, prog.pkg, err, out)
			}

			home := t.TempDir()
			run := exec.Command(exe, "-version")
			run.Args[0] = "nuv" // as the front names every program it hands over to
			run.Dir = home
			run.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
				"NUV_HOME="+filepath.Join(home, ".nuv"), "GODEBUG=inittrace=1")
			var stdout, stderr bytes.Buffer
			run.Stdout, run.Stderr = &stdout, &stderr
			if err := run.Run(); err != nil {
				t.Fatalf("%s -version: %v\n%s%s", prog.name, err, stdout.String(), stderr.String())
			}
			if strings.TrimSpace(stdout.String()) == "" {
				t.Fatalf("%s -version printed no version (stderr: %s)", prog.name, stderr.String())
			}
			inits, err := Parse(&stderr)
			if err != nil {
				t.Fatalf("%s -version: %v", prog.name, err)
			}
			if len(inits) == 0 {
				t.Fatalf("%s -version printed no init trace with GODEBUG=inittrace=1", prog.name)
			}
			logInits(t, prog.name, inits)

			for _, p := range overBudget(inits, module) {
				t.Errorf("%s: %s at init (budget %d allocs, %d bytes): build it on first use (package lazy)",
					prog.name, p, maxAllocs, maxBytes)
			}
		})
	}
}

// logInits records a program's total init clock, its nuv packages that run code at init and its
// heaviest other initialisers.
func logInits(t *testing.T, prog string, inits []Init) {
	t.Helper()
	var total, own float64
	var ownPkgs []string
	var others []Init
	for _, in := range inits {
		total += in.ClockMS
		if in.Package == module || strings.HasPrefix(in.Package, module+"/") {
			own += in.ClockMS
			ownPkgs = append(ownPkgs, fmt.Sprintf("%s (%d allocs, %d B)", strings.TrimPrefix(in.Package, module+"/"), in.Allocs, in.Bytes))
			continue
		}
		others = append(others, in)
	}
	t.Logf("%s: %d packages run code at init, %.1f ms of init clock in all, %.3f ms in nuv's own", prog, len(inits), total, own)
	t.Logf("%s: nuv packages with an init: %s", prog, strings.Join(ownPkgs, ", "))
	slices.SortFunc(others, func(a, b Init) int { return cmp.Compare(b.ClockMS, a.ClockMS) })
	var top []string
	for _, in := range others[:min(10, len(others))] {
		top = append(top, fmt.Sprintf("%s %.2f ms (%d allocs)", in.Package, in.ClockMS, in.Allocs))
	}
	t.Logf("%s: heaviest other initialisers: %s", prog, strings.Join(top, ", "))
}
