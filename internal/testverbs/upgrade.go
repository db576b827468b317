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
	var (
		src     upgrade.Source
		before  *upgrade.Snapshot
		probe   *upgrade.Probe
		whisk   [2]string // namespace, name
		leaders map[string]string
	)
	op := operatorObjects[0] // the operator's Deployment
	cs, err := kubernetes.NewForConfig(t.Config)
	if err != nil {
		return err
	}
	if err := phase("install-from", func() error {
		var err error
		if src, err = upgrade.Resolve(ctx, t.Project, from); err != nil {
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
			if local, err := kubeclient.LocalClusterName(ctx, cs); err != nil {
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
		whisk, err = firstWhisk(env, t)
		return err
	}); err != nil {
		return err
	}
	up.Instance = whisk[0] + "/" + whisk[1]
	if err := phase("seed", func() error {
		var err error
		if before, err = upgrade.Take(ctx, dyn, whisk[0], whisk[1]); err != nil {
			return err
		}
		if leaders, err = upgrade.Leaders(ctx, cs, op.Namespace); err != nil {
			return err
		}
		up.UID = before.UID
		probe, err = upgrade.Seed(ctx, t.Config, dyn, whisk[0], whisk[1], o.Timeout)
		if errors.Is(err, upgrade.ErrNotCheckable) {
			up.Data = "not checked: " + strings.TrimPrefix(err.Error(), upgrade.ErrNotCheckable.Error()+": ")
			fmt.Fprintf(env.Out, "    data %s\n", up.Data)
			return nil
		}
		if err == nil {
			fmt.Fprintf(env.Out, "    Whisk %s uid %s; action %s written through its controller\n", up.Instance, up.UID, upgrade.ProbeAction)
		}
		return err
	}); err != nil {
		return err
	}
	if err := phase("upgrade", func() error {
		ref, err := loadOperator(ctx, env, t, "", "")
		if err != nil {
			return fmt.Errorf("build-and-load of the working tree's operator: %w", err)
		}
		up.ToImage = ref
		if v := o.Getenv("MY_OPERATOR_IMAGE"); v != "" {
			up.ToImage = v // the user's choice wins over the recorded build, as nuv operator does
		}
		if err := deploy.Operator(ctx, o); err != nil {
			return err
		}
		if up.ToImage == up.FromImage {
			fmt.Fprintf(env.Out, "    the working tree's operator is the same image as %s's: nothing to take over\n", from)
			leaders = nil
		}
		return upgrade.WaitNewOperator(ctx, cs, op.Namespace, op.Name, leaders, o.Timeout, env.Out)
	}); err != nil {
		return err
	}
	return phase("converged", func() error {
		if err := upgrade.WaitQuiet(ctx, dyn, whisk[0], whisk[1], settleQuiet, o.Timeout, env.Out); err != nil {
			return err
		}
		if err := deploy.Instance(ctx, o); err != nil {
			return fmt.Errorf("after the upgrade: %w", err)
		}
		after, err := upgrade.Take(ctx, dyn, whisk[0], whisk[1])
		if err != nil {
			return fmt.Errorf("after the upgrade: %w", err)
		}
		up.UIDKept, up.Changed = before.Compare(after)
		for _, c := range up.Changed {
			fmt.Fprintf(env.Out, "    changed by the upgrade: %s\n", c)
		}
		var problems []string
		if !up.UIDKept {
			problems = append(problems, fmt.Sprintf("Whisk %s was recreated by the upgrade: UID %s before, %s after", up.Instance, before.UID, after.UID))
		}
		if probe != nil {
			kept, err := probe.Check(ctx, t.Config, o.Timeout)
			switch {
			case err != nil:
				up.Data = "not checked: " + err.Error()
				problems = append(problems, "the action written before the upgrade could not be read: "+err.Error())
			case kept:
				up.Data = report.DataKept
			default:
				up.Data = report.DataLost
				problems = append(problems, fmt.Sprintf("the action %s written to Whisk %s before the upgrade is gone (its CouchDB lost it)", upgrade.ProbeAction, up.Instance))
			}
		}
		if len(problems) > 0 {
			return errors.New(strings.Join(problems, "; "))
		}
		fmt.Fprintf(env.Out, "    upgrade %s\n", up.Verdict())
		return nil
	})
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
