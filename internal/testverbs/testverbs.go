// Package testverbs implements nuv's test verbs on the selected cluster:
//
//	utest  the operator's Go unit tests (go test ./operator/...); T=prefix becomes -run '^prefix'
//	itest  the declarative integration tests of tests/itest and tests/<type>/itest (internal/itest)
//	dtest  the deployment test: operator, instance, assertions, destroy, and nothing leaked
//	test   clean, utest, operator, itest, dtest, stopping at the first failure
//
// Exit codes tell the truth: any failure is non-zero. Under `nuv all-kubes` the verbs also report
// their steps, failing step and failure artifacts through the files all-kubes names in the
// environment (see internal/report).
//
// The cluster and its type are kube.Resolve's (NUV_CLUSTER, which is how all-kubes points each
// child at its cluster, then the project's selection, then KUBECONFIG; the type from KUBE, an
// override, the remembered detection, else detected), the same as every other nuv command's.
package testverbs

import (
	"context"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/kube"
	"github.com/nuv-dev/nuv/internal/paths"
	"github.com/nuv-dev/nuv/internal/report"
)

// target is the cluster a verb runs against.
type target struct {
	Project    string
	Name       string
	Kubeconfig string
	Type       string
	Config     *rest.Config
	Home       string
}

// resolve finds the selected cluster, its client configuration and its type.
func resolve(ctx context.Context, env *cli.Env) (*target, error) { return resolveAt(ctx, env, "", "") }

// resolveAt is resolve with an explicit kubeconfig and type ("": resolved as usual).
func resolveAt(ctx context.Context, env *cli.Env, kubeconfig, kubeType string) (*target, error) {
	project := paths.Project(env.Getenv, env.Dir)
	home, err := paths.Home(env.Getenv)
	if err != nil {
		return nil, err
	}
	r, err := kube.Resolve(project, kubeconfig, env.Getenv)
	if err != nil {
		return nil, err
	}
	if kubeType != "" {
		r.Type, r.TypeFrom = kubeType, "caller"
	}
	t := &target{Project: project, Home: home, Name: r.Name, Kubeconfig: r.Kubeconfig}
	if t.Config, err = r.Config(); err != nil {
		return nil, err
	}
	if err := r.Detect(ctx, t.Config); err != nil {
		return nil, err
	}
	t.Type = r.Type
	return t, nil
}

// prefixArg takes T=prefix out of args (the ancestor's `task itest T=prefix`); $T is the default.
func prefixArg(env *cli.Env, args []string) (string, []string) {
	prefix := env.Getenv("T")
	var rest []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "T="); ok {
			prefix = v
			continue
		}
		rest = append(rest, a)
	}
	return prefix, rest
}

// steps accumulates a verb's steps for all-kubes' report.
type steps struct {
	getenv func(string) string
	res    report.ChildResult
}

// run times fn as the step name and records its outcome.
func (s *steps) run(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	st := report.Step{Name: name, Status: report.Passed, Seconds: report.Seconds(time.Since(start))}
	if err != nil {
		st.Status, st.Message = report.Failed, err.Error()
		if s.res.FailingStep == "" {
			s.res.FailingStep, s.res.Message = name, err.Error()
		}
	}
	s.res.Steps = append(s.res.Steps, st)
	return err
}

// write saves the result for all-kubes (nothing outside all-kubes).
func (s *steps) write() error { return report.WriteChildResult(s.getenv, s.res) }

// NewCommands returns the test verbs as nuv commands: utest, itest, dtest and test.
func NewCommands() []cli.Command {
	return []cli.Command{UtestCommand(), ItestCommand(), DtestCommand(), TestCommand()}
}
