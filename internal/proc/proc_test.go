package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sleeper starts a `sleep 60` child that the test reaps, and kills it at cleanup.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd.Process.Pid
}

func TestRecordStopsOnlyItsProcess(t *testing.T) {
	pid := sleeper(t)
	f := filepath.Join(t.TempDir(), "x.pid")
	if err := WriteRecord(f, pid); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRecord(f)
	if err != nil || r.PID != pid || r.Start == 0 {
		t.Fatalf("ReadRecord = %+v, %v", r, err)
	}
	if !r.Alive() {
		t.Fatal("recorded process not alive")
	}
	// A record whose start time differs is another process (recycled pid): never signalled.
	other := Record{PID: r.PID, Start: r.Start + 1}
	if other.Alive() {
		t.Fatal("start time not checked")
	}
	if stopped, err := other.Stop(context.Background(), time.Second); stopped || err != nil {
		t.Fatalf("stop of a recycled pid = %v, %v", stopped, err)
	}
	if !r.Alive() {
		t.Fatal("stop signalled a process with another start time")
	}
	if stopped, err := r.Stop(context.Background(), 5*time.Second); !stopped || err != nil {
		t.Fatalf("stop = %v, %v", stopped, err)
	}
	if r.Alive() {
		t.Fatal("process survived stop")
	}
	if stopped, _ := r.Stop(context.Background(), time.Second); stopped {
		t.Fatal("stop of an ended process reports it stopped")
	}
}

func TestAlive(t *testing.T) {
	_, start, err := Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	for _, tc := range []struct {
		name string
		r    Record
		want bool
	}{
		{"pid and start time", Record{PID: me, Start: start}, true},
		{"pid only", Record{PID: me}, true},
		{"recycled pid", Record{PID: me, Start: start + 1}, false},
		{"no such pid", Record{PID: 999999999, Start: 1}, false},
		{"zero pid", Record{}, false},
		{"negative pid", Record{PID: -1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Alive(); got != tc.want {
				t.Errorf("%+v.Alive() = %v, want %v", tc.r, got, tc.want)
			}
		})
	}
}

func TestAliveZombie(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	r := Record{PID: cmd.Process.Pid}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, _, err := Stat(r.PID)
		if err != nil {
			t.Fatal(err)
		}
		if st == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child still in state %c", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r.Alive() {
		t.Fatal("a zombie counts as alive")
	}
}

func TestReadRecord(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          Record
		err           string
	}{
		{"pid and start", "42 1234\n", Record{PID: 42, Start: 1234}, ""},
		{"pid only", "42\n", Record{PID: 42}, ""},
		{"no newline", "42 7", Record{PID: 42, Start: 7}, ""},
		{"bad start ignored", "42 x\n", Record{PID: 42}, ""},
		{"empty", "", Record{}, "empty pid file"},
		{"blank", " \n", Record{}, "empty pid file"},
		{"garbage", "garbage\n", Record{}, "bad pid"},
		{"zero pid", "0 1\n", Record{}, "bad pid"},
		{"negative pid", "-3\n", Record{}, "bad pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "x.pid")
			if err := os.WriteFile(f, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := ReadRecord(f)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ReadRecord = %+v, %v; want error %q", r, err, tc.err)
				}
				return
			}
			if err != nil || r != tc.want {
				t.Fatalf("ReadRecord = %+v, %v; want %+v", r, err, tc.want)
			}
		})
	}
	if _, err := ReadRecord(filepath.Join(t.TempDir(), "missing.pid")); !os.IsNotExist(err) {
		t.Fatalf("missing pid file: %v", err)
	}
}

func TestWriteRecordFormat(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pids", "x.pid")
	if err := WriteRecord(f, os.Getpid()); err != nil {
		t.Fatal(err)
	}
	_, start, _ := Stat(os.Getpid())
	b, _ := os.ReadFile(f)
	if want := strconv.Itoa(os.Getpid()) + " " + strconv.FormatUint(start, 10) + "\n"; string(b) != want {
		t.Fatalf("pid file %q, want %q", b, want)
	}
	// An ended pid is written with start time 0.
	if err := WriteRecord(f, 999999999); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "999999999 0\n" {
		t.Fatalf("pid file %q", b)
	}
}

// TestDaemonEnv holds DaemonEnv to its rule: what selects the user's tools and endpoints is kept,
// credentials and everything else are dropped.
func TestDaemonEnv(t *testing.T) {
	for _, tc := range []struct {
		kv   string
		keep bool
	}{
		// the system basics
		{"PATH=/usr/bin:/bin", true}, {"HOME=/root", true}, {"USER=u", true}, {"LANG=C.UTF-8", true},
		{"LC_ALL=C", true}, {"TZ=UTC", true}, {"TMPDIR=/var/tmp", true},
		// the container runtime, its daemon and kind's provider
		{"DOCKER_HOST=unix:///run/nuv-test-docker/docker.sock", true}, {"DOCKER_CONTEXT=rootless", true},
		{"DOCKER_CONFIG=/home/u/.docker", true}, {"DOCKER_CERT_PATH=/certs", true}, {"DOCKER_TLS_VERIFY=1", true},
		{"CONTAINER_HOST=unix:///run/user/1000/podman/podman.sock", true}, {"CONTAINER_CONNECTION=remote", true},
		{"CONTAINERS_CONF=/etc/c.conf", true}, {"CONTAINERS_STORAGE_CONF=/etc/s.conf", true},
		{"KIND_EXPERIMENTAL_PROVIDER=podman", true},
		// proxies in both cases, unless they carry a password
		{"HTTP_PROXY=http://proxy:3128", true}, {"https_proxy=http://proxy:3128", true},
		{"NO_PROXY=127.0.0.1,localhost", true}, {"no_proxy=.internal", true},
		{"HTTPS_PROXY=http://u:p@proxy:3128", false}, {"http_proxy=http://user:pw@proxy", false},
		// nuv's settings (the full program's path among them), Go's and the caches
		{"NUV_FULL=/root/.cache/nuv/nuv-full/x/nuv-full", true}, {"NUV_HOME=/n", true},
		{"GOFLAGS=-mod=mod", true}, {"GOPROXY=https://proxy.golang.org,direct", true}, {"GOMAXPROCS=2", true},
		{"CGO_ENABLED=0", true}, {"XDG_CACHE_HOME=/c", true}, {"XDG_CONFIG_HOME=/cfg", true},
		{"XDG_RUNTIME_DIR=/run/user/1000", true},
		// credentials, also under a kept prefix
		{"AWS_SECRET_ACCESS_KEY=abc", false}, {"AWS_SESSION_TOKEN=abc", false}, {"AWS_ACCESS_KEY_ID=AKIA", false},
		{"AZURE_CLIENT_SECRET=abc", false}, {"GOOGLE_CREDENTIALS={\"private_key\":\"x\"}", false},
		{"GOOGLE_APPLICATION_CREDENTIALS=/k.json", false}, {"GITHUB_TOKEN=ghp", false}, {"API_TOKEN=t0k", false},
		{"NUV_EMULATOR_AWS_ADMIN_TOKEN=t", false}, {"NUV_REGISTRY_PASSWORD=p", false},
		{"NUV_CLIENT_SECRET_FILE=/s", false}, {"GOPROXY=https://u:p@goproxy.corp", false},
		{"DOCKER_AUTH_CONFIG={}", false}, {"XDG_SECRET=s", false},
		// everything else
		{"KUBECONFIG=/k", false}, {"AWS_PROFILE=dev", false}, {"PATHX=1", false}, {"MALFORMED", false},
		{"=x", false},
	} {
		got := DaemonEnv([]string{tc.kv})
		if kept := len(got) == 1 && got[0] == tc.kv; kept != tc.keep {
			t.Errorf("DaemonEnv(%q) = %q, want kept=%v", tc.kv, got, tc.keep)
		}
	}
	// the order of the kept entries is environ's
	in := []string{"NUV_FULL=/f", "AWS_SESSION_TOKEN=x", "DOCKER_HOST=unix:///d.sock", "PATH=/bin"}
	if got, want := strings.Join(DaemonEnv(in), " "), "NUV_FULL=/f DOCKER_HOST=unix:///d.sock PATH=/bin"; got != want {
		t.Errorf("DaemonEnv = %s, want %s", got, want)
	}
}

func TestLaunch(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "logs", "x.log")
	t.Setenv("NUV_TEST_SECRET_TOKEN", "must-not-reach-the-child")
	t.Setenv("DOCKER_HOST", "unix:///run/not-the-default/docker.sock")
	t.Setenv("NUV_FULL", "/opt/nuv-full")
	p, err := Launch(Command{Path: "sh", Args: []string{"-c", `echo "out $FOO$NUV_TEST_SECRET_TOKEN $DOCKER_HOST $NUV_FULL"; pwd; exec sleep 60`}, Env: []string{"FOO=bar"},
		Dir: dir, Log: log, LogMode: 0o600, Header: "--- header"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Start == 0 || !p.Alive() {
		t.Fatalf("launched process %+v not alive", p.Record)
	}
	if st, err := os.Stat(filepath.Dir(log)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("log directory: %v %v", st, err)
	}
	want := "--- header\nout bar unix:///run/not-the-default/docker.sock /opt/nuv-full\n" + dir + "\n"
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if string(b) == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log %q, want %q", b, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if sid, _ := getsid(p.PID); sid != p.PID {
		t.Errorf("session %d, want its own (%d)", sid, p.PID)
	}
	if stopped, err := p.Stop(context.Background(), 5*time.Second); !stopped || err != nil {
		t.Fatalf("stop = %v, %v", stopped, err)
	}
	select {
	case <-p.Exited:
	case <-time.After(5 * time.Second):
		t.Fatal("Exited not signalled")
	}

	if _, err := Launch(Command{Path: filepath.Join(dir, "missing"), Log: log}); err == nil || !strings.Contains(err.Error(), "start ") {
		t.Fatalf("launch of a missing program: %v", err)
	}
}

// getsid reads the session id (field 6 of /proc/PID/stat).
func getsid(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return strconv.Atoi(f[3])
}
