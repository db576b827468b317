package testverbs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/deploy"
	"github.com/nuv-dev/nuv/internal/fsutil"
	"github.com/nuv-dev/nuv/internal/image/imagecmd"
	"github.com/nuv-dev/nuv/internal/image/load"
	"github.com/nuv-dev/nuv/internal/kube/kubeclient"
	"github.com/nuv-dev/nuv/internal/report"
	"github.com/nuv-dev/nuv/internal/upgrade"
)

// upgradePath is dtest's upgrade path, run before its usual phases when --upgrade-from is given:
//
//	install-from  the operator of the older version (built from a checkout of the git ref and
//	              loaded as build-and-load does, or the image given), then the instance, Ready
//	seed          the instance's UID and workloads recorded; an action written to its controller
//	              (kept in its CouchDB) where its pods really run
//	upgrade       the working tree's operator built and loaded, applied, Available
//	converged     the instance Ready again, the same object (UID kept), the action read back
//
// It fills up as it goes (what it knows is reported even when a phase fails).
func upgradePath(ctx context.Context, env *cli.Env, t *target, o deploy.Options, dyn dynamic.Interface, from string,
	phase func(string, func() error) error, up *report.Upgrade) error {
	up.From = from
	cs, err := kubernetes.NewForConfig(t.Config)
	if err != nil {
		return err
	}
	u := &upgradeRun{ctx: ctx, env: env, t: t, o: o, dyn: dyn, from: from, cs: cs, up: up,
		op: operatorObjects[0]} // the operator's Deployment
	if err := phase("install-from", u.installFrom); err != nil {
		return err
	}
	up.Instance = u.whisk[0] + "/" + u.whisk[1]
	if err := phase("seed", u.seed); err != nil {
		return err
	}
	if err := phase("upgrade", u.upgrade); err != nil {
		return err
	}
	return phase("converged", u.converged)
}

// upgradeRun is one upgrade path: where it runs, what it fills in, and what each phase learns for
// the next.
type upgradeRun struct {
	ctx  context.Context
	env  *cli.Env
	t    *target
	o    deploy.Options
	dyn  dynamic.Interface
	from string
	cs   kubernetes.Interface
	up   *report.Upgrade
	op   report.TouchedObject // the operator's Deployment

	whisk   [2]string         // the instance: namespace, name (install-from)
	before  *upgrade.Snapshot // the instance before the upgrade (seed)
	probe   *upgrade.Probe    // the action written before the upgrade, nil when not checkable (seed)
	leaders map[string]string // the older operator's leases (seed)
}

// installFrom deploys the operator of the older version — built from a checkout of the git ref
// and loaded, or the image given — then the instance, and finds the instance's Whisk.
func (u *upgradeRun) installFrom() error {
	ctx, env, t, o, up, from := u.ctx, u.env, u.t, u.o, u.up, u.from
	src, err := upgrade.Resolve(ctx, t.Project, from)
	if err != nil {
		return err
	}
	up.Commit = src.Commit
	old := o
	if src.Commit != "" {
		dir, err := os.MkdirTemp("", "nuv-upgrade-from-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if err := upgrade.Checkout(ctx, t.Project, src.Commit, dir); err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "upgrade path: %s is commit %s, checked out in %s\n", from, src.Commit, dir)
		if up.FromImage, err = loadOperator(ctx, env, t, dir, "upgrade-from-"+src.Commit[:12]); err != nil {
			return fmt.Errorf("build-and-load of the operator at %s: %w", from, err)
		}
		old.Source = dir
		old.Getenv = overlay(o.Getenv, map[string]string{"MY_OPERATOR_IMAGE": up.FromImage, "TAG": "", "NUV_OPERATOR_DIR": ""})
	} else {
		if local, err := kubeclient.LocalClusterName(ctx, u.cs); err != nil {
			return err
		} else if local != "" {
			return fmt.Errorf("--upgrade-from %s: on nuv's local cluster %s the operator runs on the host, built from sources, so an image cannot be the older version: give a git tag or commit", from, local)
		}
		up.FromImage = src.Image
		fmt.Fprintf(env.Out, "upgrade path: from the operator image %s (with the working tree's manifests)\n", src.Image)
		old.Getenv = overlay(o.Getenv, map[string]string{"MY_OPERATOR_IMAGE": up.FromImage, "TAG": ""})
	}
	if err := deploy.Operator(ctx, old); err != nil {
		return fmt.Errorf("operator at %s: %w", from, err)
	}
	if err := deploy.Instance(ctx, o); err != nil {
		return fmt.Errorf("instance on the operator at %s: %w", from, err)
	}
	u.whisk, err = firstWhisk(env, t)
	return err
}

// seed records the instance's UID and workloads and the operator's leaders, and writes an action
// to the instance's controller where its pods really run.
func (u *upgradeRun) seed() error {
	var err error
	if u.before, err = upgrade.Take(u.ctx, u.dyn, u.whisk[0], u.whisk[1]); err != nil {
		return err
	}
	if u.leaders, err = upgrade.Leaders(u.ctx, u.cs, u.op.Namespace); err != nil {
		return err
	}
	u.up.UID = u.before.UID
	u.probe, err = upgrade.Seed(u.ctx, u.t.Config, u.dyn, u.whisk[0], u.whisk[1], u.o.Timeout)
	if errors.Is(err, upgrade.ErrNotCheckable) {
		u.up.Data = "not checked: " + strings.TrimPrefix(err.Error(), upgrade.ErrNotCheckable.Error()+": ")
		fmt.Fprintf(u.env.Out, "    data %s\n", u.up.Data)
		return nil
	}
	if err == nil {
		fmt.Fprintf(u.env.Out, "    Whisk %s uid %s; action %s written through its controller\n", u.up.Instance, u.up.UID, upgrade.ProbeAction)
	}
	return err
}

// upgrade builds, loads and applies the working tree's operator and waits for it to take over.
func (u *upgradeRun) upgrade() error {
	ref, err := loadOperator(u.ctx, u.env, u.t, "", "")
	if err != nil {
		return fmt.Errorf("build-and-load of the working tree's operator: %w", err)
	}
	u.up.ToImage = ref
	if v := u.o.Getenv("MY_OPERATOR_IMAGE"); v != "" {
		u.up.ToImage = v // the user's choice wins over the recorded build, as nuv operator does
	}
	if err := deploy.Operator(u.ctx, u.o); err != nil {
		return err
	}
	if u.up.ToImage == u.up.FromImage {
		fmt.Fprintf(u.env.Out, "    the working tree's operator is the same image as %s's: nothing to take over\n", u.from)
		u.leaders = nil
	}
	return upgrade.WaitNewOperator(u.ctx, u.cs, u.op.Namespace, u.op.Name, u.leaders, u.o.Timeout, u.env.Out)
}

// converged waits for the instance to settle and be Ready again, then checks it is the same object
// and the action written before the upgrade reads back.
func (u *upgradeRun) converged() error {
	ctx, up := u.ctx, u.up
	if err := upgrade.WaitQuiet(ctx, u.dyn, u.whisk[0], u.whisk[1], settleQuiet, u.o.Timeout, u.env.Out); err != nil {
		return err
	}
	if err := deploy.Instance(ctx, u.o); err != nil {
		return fmt.Errorf("after the upgrade: %w", err)
	}
	after, err := upgrade.Take(ctx, u.dyn, u.whisk[0], u.whisk[1])
	if err != nil {
		return fmt.Errorf("after the upgrade: %w", err)
	}
	up.UIDKept, up.Changed = u.before.Compare(after)
	for _, c := range up.Changed {
		fmt.Fprintf(u.env.Out, "    changed by the upgrade: %s\n", c)
	}
	var problems []string
	if !up.UIDKept {
		problems = append(problems, fmt.Sprintf("Whisk %s was recreated by the upgrade: UID %s before, %s after", up.Instance, u.before.UID, after.UID))
	}
	if u.probe != nil {
		problems = append(problems, u.checkProbe(ctx)...)
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	fmt.Fprintf(u.env.Out, "    upgrade %s\n", up.Verdict())
	return nil
}

// checkProbe reads back the action written before the upgrade, records whether its data was kept,
// and returns the problem found, if any.
func (u *upgradeRun) checkProbe(ctx context.Context) []string {
	kept, err := u.probe.Check(ctx, u.t.Config, u.o.Timeout)
	switch {
	case err != nil:
		u.up.Data = "not checked: " + err.Error()
		return []string{"the action written before the upgrade could not be read: " + err.Error()}
	case kept:
		u.up.Data = report.DataKept
	default:
		u.up.Data = report.DataLost
		return []string{fmt.Sprintf("the action %s written to Whisk %s before the upgrade is gone (its CouchDB lost it)", upgrade.ProbeAction, u.up.Instance)}
	}
	return nil
}

// settleQuiet is how long the instance and its workloads must stay unchanged, Ready and rolled
// out, before the upgrade counts as converged.
const settleQuiet = 10 * time.Second

// loadOperator builds the operator of the module in dir ("" the project) and delivers it to the
// cluster as `nuv image load` (build-and-load) does, returning the reference the cluster pulls. A
// build of another directory leaves the project's recorded reference (.nuv/images/<cluster>.ref)
// as it was: only the working tree's build is what `nuv operator` deploys afterwards.
func loadOperator(ctx context.Context, env *cli.Env, t *target, dir, tag string) (string, error) {
	args := []string{"load"}
	refFile := load.RefFile(t.Project, t.Name)
	var saved []byte
	if dir != "" {
		args = append(args, "--dir", dir)
		b, err := os.ReadFile(refFile)
		if err != nil && !os.IsNotExist(err) {
			return "", err
		}
		saved = b
		defer func() {
			if saved != nil {
				fsutil.WriteFileAtomic(refFile, saved, 0o644)
			} else {
				os.Remove(refFile)
			}
			fmt.Fprintf(env.Out, "(%s is left as it was: it records the working tree's build)\n", refFile)
		}()
	}
	if tag != "" {
		args = append(args, "--tag", tag)
	}
	var out bytes.Buffer
	e := *env
	e.Out = io.MultiWriter(env.Out, &out)
	e.Dir = t.Project
	e.Getenv = overlay(env.Getenv, map[string]string{"NUV_PROJECT": t.Project, "NUV_CLUSTER": t.Name})
	if err := imagecmd.Run(ctx, &e, args); err != nil {
		return "", err
	}
	lines := strings.Fields(out.String())
	if len(lines) == 0 {
		return "", errors.New("nuv image load printed no image reference")
	}
	return lines[len(lines)-1], nil
}

// overlay returns getenv with vars set over it (an empty value unsets).
func overlay(getenv func(string) string, vars map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// firstWhisk is the namespace and name of the first Whisk of the instance file.
func firstWhisk(env *cli.Env, t *target) ([2]string, error) {
	file, items, err := instanceWhisks(env, t)
	if err != nil {
		return [2]string{}, err
	}
	if len(items) == 0 {
		return [2]string{}, fmt.Errorf("no Whisk in %s: the upgrade path checks a Whisk", filepath.Base(file))
	}
	return [2]string{items[0].GetNamespace(), items[0].GetName()}, nil
}
