package itest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

func (tr *testRun) runStep(ctx context.Context, st *Step) error {
	timeout := st.Timeout
	if timeout == 0 {
		timeout = tr.cfg.Timeout
	}
	switch st.Op {
	case OpApply:
		return tr.apply(ctx, st)
	case OpReject:
		return tr.reject(ctx, st)
	case OpAssert:
		return tr.each(st, func(u *unstructured.Unstructured) error {
			return poll(ctx, timeout, func(ctx context.Context) error { return tr.assert(ctx, u) })
		})
	case OpError:
		return tr.each(st, func(u *unstructured.Unstructured) error {
			return poll(ctx, timeout, func(ctx context.Context) error { return tr.absent(ctx, u) })
		})
	case OpDelete:
		return tr.each(st, func(u *unstructured.Unstructured) error { return tr.delete(ctx, u, timeout) })
	case OpCommand:
		return tr.command(ctx, st, timeout)
	}
	return fmt.Errorf("unknown step operation %q", st.Op)
}

func (tr *testRun) each(st *Step, fn func(*unstructured.Unstructured) error) error {
	for _, u := range st.Objects {
		if err := fn(u); err != nil {
			return err
		}
	}
	return nil
}

func (tr *testRun) apply(ctx context.Context, st *Step) error {
	for _, u := range st.Objects {
		ri, err := tr.cl.resource(u, tr.ns)
		if err != nil {
			return err
		}
		tr.touch(u)
		if _, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply %s: %w", ref(u), err)
		}
		if u.GetNamespace() != tr.ns { // outside the test namespace: cleanup deletes it
			tr.applied = append(tr.applied, u)
		}
	}
	return nil
}

// reject applies objects that the API server must refuse.
func (tr *testRun) reject(ctx context.Context, st *Step) error {
	for _, u := range st.Objects {
		ri, err := tr.cl.resource(u, tr.ns)
		if err != nil {
			return err
		}
		_, err = ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
		if err == nil {
			tr.touch(u)
			if u.GetNamespace() != tr.ns { // outside the test namespace: cleanup deletes it
				tr.applied = append(tr.applied, u)
			}
			return fmt.Errorf("%s was accepted; the API server should have rejected it", ref(u))
		}
		if want := st.Options.ErrorContains; want != "" && !strings.Contains(err.Error(), want) {
			return fmt.Errorf("%s was rejected, but not with %q: %v", ref(u), want, err)
		}
		fmt.Fprintf(tr.cfg.Out, "    rejected as expected: %s: %v\n", ref(u), firstLine(err.Error()))
	}
	return nil
}

// find returns the live objects an expected object names: the named one, or those with its labels.
func (tr *testRun) find(ctx context.Context, u *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	ri, err := tr.cl.resource(u, tr.ns)
	if err != nil {
		return nil, err
	}
	if u.GetName() != "" {
		got, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{got}, nil
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(u.GetLabels()).String()})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

// expected is the part of an object an assert compares: everything but apiVersion and kind
// (they chose the resource) and the metadata fields used to find it.
func expected(u *unstructured.Unstructured) map[string]any {
	exp := map[string]any{}
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" {
			exp[k] = v
		}
	}
	if md, ok := exp["metadata"].(map[string]any); ok {
		rest := map[string]any{}
		for k, v := range md {
			if k != "name" && k != "namespace" {
				rest[k] = v
			}
		}
		exp["metadata"] = rest
	}
	return exp
}

func (tr *testRun) assert(ctx context.Context, u *unstructured.Unstructured) error {
	objs, err := tr.find(ctx, u)
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return fmt.Errorf("%s: not found", ref(u))
	}
	var first error
	for _, o := range objs {
		tr.touch(o)
		if err := Match(expected(u), o.Object); err == nil {
			return nil
		} else if first == nil {
			first = fmt.Errorf("%s: %w", ref(o), err)
		}
	}
	return first
}

// absent succeeds when no live object matches u.
func (tr *testRun) absent(ctx context.Context, u *unstructured.Unstructured) error {
	objs, err := tr.find(ctx, u)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if Match(expected(u), o.Object) == nil {
			tr.touch(o)
			return fmt.Errorf("%s exists and must not", ref(o))
		}
	}
	return nil
}

func (tr *testRun) delete(ctx context.Context, u *unstructured.Unstructured, timeout time.Duration) error {
	objs, err := tr.find(ctx, u)
	if err != nil {
		return err
	}
	ri, err := tr.cl.resource(u, tr.ns)
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	for _, o := range objs {
		tr.touch(o)
		if err := ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", ref(o), err)
		}
	}
	return poll(ctx, timeout, func(ctx context.Context) error {
		left, err := tr.find(ctx, u)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("%s still exists", ref(left[0]))
		}
		return nil
	})
}

// command runs the step's script in nuv's embedded POSIX shell, in the test's directory, with
// KUBECONFIG, NAMESPACE, KUBE and NUV_CLUSTER set.
func (tr *testRun) command(ctx context.Context, st *Step, timeout time.Duration) error {
	prog, err := syntax.NewParser().Parse(strings.NewReader(st.Options.Script), st.Path)
	if err != nil {
		return fmt.Errorf("script: %w", err)
	}
	env := os.Environ()
	env = append(env, "KUBECONFIG="+tr.cfg.Kubeconfig, "NAMESPACE="+tr.ns, "KUBE="+tr.cfg.KubeType,
		"NUV_CLUSTER="+tr.cfg.Cluster, "TEST="+tr.test.Name)
	out := &indent{w: tr.cfg.Out}
	runner, err := interp.New(interp.Env(expand.ListEnviron(env...)), interp.StdIO(nil, out, out),
		interp.Dir(filepath.Dir(st.Path)))
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = runner.Run(cctx, prog)
	out.flush()
	var status interp.ExitStatus
	switch {
	case cctx.Err() != nil && ctx.Err() == nil:
		return fmt.Errorf("script timed out after %s", timeout)
	case err == nil && st.Options.ExpectFail:
		return fmt.Errorf("script exited 0 but expectFail is set")
	case errors.As(err, &status) && st.Options.ExpectFail:
		return nil
	case err != nil:
		return fmt.Errorf("script failed: %w", err)
	}
	return nil
}

// indent prefixes a script's output lines so they read as part of the step.
type indent struct {
	w   interface{ Write([]byte) (int, error) }
	buf []byte
}

func (i *indent) Write(p []byte) (int, error) {
	i.buf = append(i.buf, p...)
	for {
		n := strings.IndexByte(string(i.buf), '\n')
		if n < 0 {
			break
		}
		fmt.Fprintf(i.w, "      %s\n", i.buf[:n])
		i.buf = i.buf[n+1:]
	}
	return len(p), nil
}

func (i *indent) flush() {
	if len(i.buf) > 0 {
		fmt.Fprintf(i.w, "      %s\n", i.buf)
		i.buf = nil
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
