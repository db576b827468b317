package itest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/report"
)

// FieldManager is the server-side apply field manager of itest's apply steps.
const FieldManager = "nuv-itest"

// LabelTest marks the namespaces itest creates (value: the test name).
const LabelTest = "itest.nuv.dev/test"

// DefaultTimeout bounds assert, error and delete steps that do not set their own timeout.
const DefaultTimeout = 30 * time.Second

// Config configures one itest run against one cluster.
type Config struct {
	Project    string
	KubeType   string
	Cluster    string
	Kubeconfig string
	REST       *rest.Config
	// Prefix keeps only the tests whose name starts with it (T=prefix).
	Prefix string
	// Dirs overrides the suite directories (default SuiteDirs(Project, KubeType)).
	Dirs []string
	// Timeout is the default step timeout (DefaultTimeout when 0).
	Timeout time.Duration
	Out     io.Writer
	Getenv  func(string) string
	// Keep leaves the test namespaces in place (for debugging).
	Keep bool
	// Artifacts is a directory for failure artifacts of failed tests ("" = none).
	Artifacts string
	// Touched is a file every touched object is appended to, one JSON line each ("" = none).
	Touched string
}

// Result is the outcome of one test.
type Result struct {
	Name        string
	Namespace   string
	Err         error
	FailingStep string
	Duration    time.Duration
}

// ErrNoTests is returned when no test matches: running nothing is not a pass.
var ErrNoTests = errors.New("no integration tests found")

// Run discovers and runs the tests one after another. The error is non-nil when a test failed or
// none was found; the results say which.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	dirs := cfg.Dirs
	if dirs == nil {
		dirs = SuiteDirs(cfg.Project, cfg.KubeType)
	}
	tests, err := Discover(dirs, cfg.Prefix)
	if err != nil {
		return nil, err
	}
	if len(tests) == 0 {
		filter := ""
		if cfg.Prefix != "" {
			filter = fmt.Sprintf(" matching T=%s", cfg.Prefix)
		}
		return nil, fmt.Errorf("%w%s in %s", ErrNoTests, filter, strings.Join(dirs, ", "))
	}
	cl, err := newClient(cfg.REST)
	if err != nil {
		return nil, err
	}
	var results []Result
	failed := 0
	for _, t := range tests {
		if ctx.Err() != nil {
			break
		}
		r := runTest(ctx, cl, cfg, t)
		results = append(results, r)
		if r.Err != nil {
			failed++
		}
	}
	if ctx.Err() == nil && !cfg.Keep {
		failed += waitNamespacesGone(ctx, cl, cfg, results)
	}
	fmt.Fprintf(cfg.Out, "itest: %d passed, %d failed\n", len(results)-failed, failed)
	if err := ctx.Err(); err != nil {
		return results, fmt.Errorf("itest interrupted: %w", err)
	}
	if failed > 0 {
		return results, fmt.Errorf("itest: %d of %d tests failed", failed, len(results))
	}
	return results, nil
}

// testRun is the state of one running test.
type testRun struct {
	cfg     Config
	cl      *client
	test    Test
	ns      string
	applied []*unstructured.Unstructured // objects outside the test namespace, deleted afterwards
	touched []*unstructured.Unstructured
}

func runTest(ctx context.Context, cl *client, cfg Config, t Test) Result {
	start := time.Now()
	r := Result{Name: t.Name}
	tr := &testRun{cfg: cfg, cl: cl, test: t, ns: namespaceFor(t.Name)}
	r.Namespace = tr.ns
	fmt.Fprintf(cfg.Out, "=== RUN %s (namespace %s)\n", t.Name, tr.ns)
	defer func() {
		r.Duration = time.Since(start)
		if r.Err != nil {
			fmt.Fprintf(cfg.Out, "--- FAIL %s at %s (%.1fs)\n    %s\n", t.Name, r.FailingStep, r.Duration.Seconds(),
				strings.ReplaceAll(r.Err.Error(), "\n", "\n    "))
		} else {
			fmt.Fprintf(cfg.Out, "--- PASS %s (%.1fs)\n", t.Name, r.Duration.Seconds())
		}
	}()
	if err := tr.createNamespace(ctx); err != nil {
		r.Err, r.FailingStep = err, t.Name+"/namespace"
		return r
	}
	for _, sf := range t.Steps {
		st, err := LoadStep(sf, tr.lookup)
		if err == nil {
			s := time.Now()
			err = tr.runStep(ctx, st)
			if err == nil {
				fmt.Fprintf(cfg.Out, "    %s ok (%.1fs)\n", sf.Name, time.Since(s).Seconds())
			}
		}
		if err != nil {
			r.Err, r.FailingStep = err, t.Name+"/"+sf.Name
			break
		}
	}
	if r.Err != nil {
		tr.saveArtifacts(context.WithoutCancel(ctx))
	}
	if err := tr.cleanup(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(cfg.Out, "    warning: cleanup of %s: %v\n", t.Name, err)
	}
	return r
}

func namespaceFor(test string) string {
	b := make([]byte, 3)
	rand.Read(b)
	name := strings.ToLower(test)
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, name)
	if len(name) > 45 {
		name = name[:45]
	}
	return "itest-" + strings.Trim(name, "-") + "-" + hex.EncodeToString(b)
}

// lookup resolves ${VAR} in step files.
func (tr *testRun) lookup(name string) (string, bool) {
	switch name {
	case "NAMESPACE":
		return tr.ns, true
	case "TEST":
		return tr.test.Name, true
	case "KUBE":
		return tr.cfg.KubeType, true
	case "NUV_CLUSTER":
		return tr.cfg.Cluster, true
	}
	v := tr.cfg.Getenv(name)
	return v, v != ""
}

func (tr *testRun) createNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tr.ns, Labels: map[string]string{
		LabelTest: labelValue(tr.test.Name), "app.kubernetes.io/managed-by": "nuv-itest"}}}
	if _, err := tr.cl.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", tr.ns, err)
	}
	return nil
}

func labelValue(s string) string {
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

// touch records an object the test touched, for failure artifacts.
func (tr *testRun) touch(u *unstructured.Unstructured) {
	for _, t := range tr.touched {
		if t.GroupVersionKind() == u.GroupVersionKind() && t.GetNamespace() == u.GetNamespace() && t.GetName() == u.GetName() {
			return
		}
	}
	tr.touched = append(tr.touched, u)
	if tr.cfg.Touched == "" || u.GetName() == "" {
		return
	}
	line, _ := json.Marshal(report.TouchedObject{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()})
	f, err := os.OpenFile(tr.cfg.Touched, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}

// cleanup deletes what the test applied outside its namespace, then the namespace (Run waits for
// the namespaces after the last test).
func (tr *testRun) cleanup(ctx context.Context) error {
	if tr.cfg.Keep {
		fmt.Fprintf(tr.cfg.Out, "    keeping namespace %s\n", tr.ns)
		return nil
	}
	var errs []error
	for i := len(tr.applied) - 1; i >= 0; i-- {
		u := tr.applied[i]
		ri, err := tr.cl.resource(u, tr.ns)
		if err == nil {
			err = ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s: %w", ref(u), err))
		}
	}
	if err := tr.cl.cs.CoreV1().Namespaces().Delete(ctx, tr.ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, fmt.Errorf("delete namespace %s: %w", tr.ns, err))
	}
	return errors.Join(errs...)
}

// NamespaceTimeout bounds the wait, after the last test, for the test namespaces to be gone.
const NamespaceTimeout = 90 * time.Second

// waitNamespacesGone waits (all at once, after the last test, so tests do not wait for each
// other's teardown) until every test namespace is gone. A namespace that stays is a failure of its
// test (say, a finalizer nobody removes) at step <test>/cleanup; it returns how many tests that
// newly failed.
func waitNamespacesGone(ctx context.Context, cl *client, cfg Config, results []Result) int {
	left := map[string]bool{}
	for _, r := range results {
		if r.Namespace != "" {
			left[r.Namespace] = true
		}
	}
	if len(left) == 0 {
		return 0
	}
	fmt.Fprintf(cfg.Out, "waiting for %d test namespaces to be deleted\n", len(left))
	nss := cl.cs.CoreV1().Namespaces()
	poll(ctx, NamespaceTimeout, func(ctx context.Context) error {
		for ns := range left {
			if _, err := nss.Get(ctx, ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				delete(left, ns)
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("%d namespaces still terminating", len(left))
		}
		return nil
	})
	newly := 0
	for i := range results {
		r := &results[i]
		if !left[r.Namespace] {
			continue
		}
		err := fmt.Errorf("namespace %s still terminating after %s", r.Namespace, NamespaceTimeout)
		fmt.Fprintf(cfg.Out, "--- FAIL %s at %s/cleanup: %v\n", r.Name, r.Name, err)
		if r.Err == nil {
			r.Err, r.FailingStep = err, r.Name+"/cleanup"
			newly++
		}
	}
	return newly
}

// poll calls check until it returns nil or the timeout passes; the error is check's last.
func poll(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		rctx, rcancel := context.WithTimeout(pctx, 10*time.Second)
		last = check(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-pctx.Done():
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: %w", last)
			}
			return fmt.Errorf("timed out after %s: %w", timeout, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

var _ = filepath.Join
