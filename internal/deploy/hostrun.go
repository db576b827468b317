package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/nuv-dev/nuv/internal/cluster/controlplane"
	"github.com/nuv-dev/nuv/internal/companion"
	"github.com/nuv-dev/nuv/internal/deploy/rendercache"
	"github.com/nuv-dev/nuv/internal/deploy/statusview"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/proc"
	"github.com/nuv-dev/nuv/internal/runner"
)

// hostProcessName is the name the host-run operator is registered under in the local cluster's
// pids/ directory (so `nuv cluster stop/delete` end it).
const hostProcessName = statusview.HostOperatorName

// tokenLifetime is how long the host-run operator's ServiceAccount token is valid; `nuv operator`
// issues a new one whenever it (re)starts the process.
const tokenLifetime = 7 * 24 * time.Hour

// hostRun is the operator run on the host for a local cluster.
type hostRun struct {
	home     string
	cluster  string
	stateDir string // the local cluster's state directory
}

// newHostRun is the host operator of local cluster cluster: one of home's, else the control plane
// of a cluster of one of nuv's cloud emulators (EKS, AKS or GKE), wherever the locator finds it.
func newHostRun(home, cluster string) hostRun {
	m, _ := controlplane.Find(home, cluster)
	return hostRun{home: m.Home, cluster: cluster, stateDir: m.Dir(cluster)}
}

func (h hostRun) controlPlane() controlplane.Manager { return controlplane.Manager{Home: h.home} }

func (h hostRun) dir() string        { return filepath.Join(h.stateDir, "operator") }
func (h hostRun) kubeconfig() string { return filepath.Join(h.dir(), "kubeconfig") }
func (h hostRun) logFile() string    { return filepath.Join(h.stateDir, "logs", "operator.log") }
func (h hostRun) pidFile() string {
	return h.controlPlane().ProcessFile(h.cluster, hostProcessName)
}

// mainPackage is the operator's main package, relative to the source module: $NUV_OPERATOR_MAIN, else
// ./operator/cmd/whisk-operator.
func mainPackage(o Options) string {
	return rendercache.OperatorMain(o.source(), o.Getenv)
}

// sourceHash hashes what the operator binary is built from (rendercache.OperatorSourceHash).
func sourceHash(o Options) (string, error) {
	return rendercache.OperatorSourceHash(o.source(), o.Getenv)
}

// buildBinary returns the operator binary for the current sources, building it with `go build`
// into nuv's cache (companion.CacheDir: $NUV_CACHE_DIR, else ~/.cache/nuv) under operator/, unless a
// binary of the same source hash is already there.
func buildBinary(ctx context.Context, o Options) (string, error) {
	sum, err := sourceHash(o)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(companion.CacheDir(o.Getenv), "operator", "whisk-operator-"+sum)
	if st, err := os.Stat(bin); err == nil && st.Mode().IsRegular() {
		o.Log.V(1).Infof("operator binary cached: %s", bin)
		return bin, nil
	}
	if rel, err := releasedOperator(ctx, o, sum); err != nil || rel != "" {
		return rel, err
	}
	goBin, err := runner.FindGo(o.Getenv)
	if err != nil {
		return "", fmt.Errorf("building the operator for the host: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(o.Out, "building the operator (%s) for the host...\n", mainPackage(o))
	f, err := os.CreateTemp(filepath.Dir(bin), filepath.Base(bin)+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	if err := runner.Run(ctx, runner.Cmd{Path: goBin, Args: []string{"build", "-o", tmp, mainPackage(o)}, Dir: o.source()}); err != nil {
		os.Remove(tmp)
		return "", err // names the command and carries go's messages
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	return bin, nil
}

// serviceAccountOf returns the namespace and ServiceAccount of the operator Deployment in objs.
func serviceAccountOf(objs []*unstructured.Unstructured) (ns, sa string, err error) {
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		sa, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
		if sa == "" {
			sa = "default"
		}
		return o.GetNamespace(), sa, nil
	}
	return "", "", errors.New("the operator manifests hold no Deployment")
}

// writeKubeconfig issues a token for the ServiceAccount and writes a kubeconfig (0600) that uses
// it against the cluster's API server.
func (h hostRun) writeKubeconfig(ctx context.Context, t *target, ns, sa string) error {
	tr, err := t.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(tokenLifetime.Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token for serviceaccount %s/%s: %w", ns, sa, err)
	}
	ca := t.cfg.CAData
	if len(ca) == 0 && t.cfg.CAFile != "" {
		if ca, err = os.ReadFile(t.cfg.CAFile); err != nil {
			return fmt.Errorf("cluster CA: %w", err)
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters[t.name] = &clientcmdapi.Cluster{Server: t.cfg.Host, CertificateAuthorityData: ca, TLSServerName: t.cfg.ServerName, InsecureSkipTLSVerify: t.cfg.Insecure}
	user := "system:serviceaccount:" + ns + ":" + sa
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts[t.name] = &clientcmdapi.Context{Cluster: t.name, AuthInfo: user, Namespace: ns}
	kc.CurrentContext = t.name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(h.kubeconfig(), data, 0o600)
}

// running returns the pid of the registered host operator if it is alive, and its binary.
// HostOperator reports the operator process `nuv operator` runs on the host for the local cluster
// of home: its pid, and whether it runs.
func HostOperator(home, cluster string) (pid int, ok bool) {
	pid, _, ok = newHostRun(home, cluster).running()
	return pid, ok
}

func (h hostRun) running() (pid int, bin string, ok bool) {
	r, err := proc.ReadRecord(h.pidFile())
	if err != nil || !r.Alive() {
		return 0, "", false
	}
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", r.PID))
	return r.PID, strings.TrimSuffix(exe, " (deleted)"), true
}

// start launches bin detached (own session, log file) with the ServiceAccount kubeconfig and
// registers it with the local cluster; it waits until the operator's workers start.
func (h hostRun) start(ctx context.Context, bin string) (int, error) {
	var offset int64
	if st, err := os.Stat(h.logFile()); err == nil {
		offset = st.Size()
	}
	p, err := proc.Launch(proc.Command{Path: bin, Args: []string{"--kubeconfig", h.kubeconfig(), "--leader-elect=false"},
		Dir: h.dir(), Log: h.logFile()})
	if err != nil {
		return 0, err
	}
	pid := p.PID
	if err := h.controlPlane().Register(h.cluster, hostProcessName, pid); err != nil {
		_ = p.Kill()
		return 0, err
	}
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-p.Exited:
			return 0, fmt.Errorf("the host operator exited at start (%v); log %s:\n%s", err, h.logFile(), tail(h.logFile(), offset))
		case <-deadline.C:
			return pid, fmt.Errorf("the host operator (pid %d) did not start its workers within 30s; log %s:\n%s", pid, h.logFile(), tail(h.logFile(), offset))
		case <-ctx.Done():
			return pid, ctx.Err()
		case <-tick.C:
			if strings.Contains(tail(h.logFile(), offset), "Starting workers") {
				return pid, nil
			}
		}
	}
}

// tail returns the log written since offset (at most its last 4 KiB).
func tail(path string, offset int64) string {
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) < offset {
		return ""
	}
	data = data[offset:]
	if len(data) > 4096 {
		data = data[len(data)-4096:]
	}
	return string(data)
}

// stop ends the registered host operator (SIGTERM, then SIGKILL after grace) and unregisters it.
// It reports whether a process was stopped.
func (h hostRun) stop(grace time.Duration) bool {
	defer os.Remove(h.pidFile())
	r, err := proc.ReadRecord(h.pidFile())
	if err != nil {
		return false
	}
	stopped, _ := r.Stop(context.Background(), grace)
	return stopped
}
