package localkube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nuv-dev/nuv/internal/proc"
)

// startOnFreePorts allocates ports, writes the configuration and state and starts the components.
func (p Clusters) startOnFreePorts(ctx context.Context, dir string, s *state, base int) error {
	_, ports, err := allocatePorts(portRoles(s), base, nil)
	if err != nil {
		return err
	}
	s.Ports = ports
	s.APIURL = apiURL(s)
	if err := writeConfigs(dir, s); err != nil {
		return fmt.Errorf("write configuration: %w", err)
	}
	if err := saveState(dir, s); err != nil {
		return err
	}
	return p.startComponents(ctx, dir, s, false)
}

// startComponents starts the components group by group, waiting for each group to be healthy.
// With repair, running components are left alone, and one that runs but does not become healthy (a
// process hung in shutdown, say) is stopped and started again once.
func (p Clusters) startComponents(ctx context.Context, dir string, s *state, repair bool) error {
	comps := plan(dir, s)
	for g := 0; g <= 1; g++ {
		var group []component
		for _, c := range comps {
			if c.Group != g {
				continue
			}
			group = append(group, c)
			if repair && p.running(dir, c) {
				continue
			}
			if err := p.launch(dir, s, c, repair); err != nil {
				return err
			}
		}
		timeout := 90 * time.Second
		if repair {
			timeout = 30 * time.Second
		}
		t0 := time.Now()
		errs := waitHealthy(ctx, dir, group, timeout)
		p.log().V(1).Infof("  group %d (%s) healthy after %.2fs", g, groupNames(group), time.Since(t0).Seconds())
		if repair && ctx.Err() == nil {
			var again []component
			for i, c := range group {
				if errs[i] != nil {
					p.log().Infof("  %s is not healthy (%v): restarting it", c.Name, firstLine(errs[i]))
					if r, err := proc.ReadRecord(pidPath(dir, c)); err == nil {
						_, _ = r.Stop(context.Background(), 5*time.Second)
					}
					if err := p.launch(dir, s, c, false); err != nil {
						return err
					}
					again = append(again, c)
				}
			}
			errs = waitHealthy(ctx, dir, again, 90*time.Second)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

func groupNames(cs []component) string {
	var n []string
	for _, c := range cs {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}

func pidPath(dir string, c component) string { return filepath.Join(dir, "pids", c.Name+".pid") }

func (p Clusters) running(dir string, c component) bool {
	r, err := proc.ReadRecord(pidPath(dir, c))
	return err == nil && r.Alive()
}

func (p Clusters) launch(dir string, s *state, c component, say bool) error {
	if say {
		p.log().Infof("  starting %s", c.Name)
	}
	env := append([]string{"GOGC=" + p.gogc()}, c.Env...)
	bin, args, err := componentCommand(s.Binary, c.Args)
	if err != nil {
		return err
	}
	_, err = launch(bin, args, env, dir, filepath.Join(dir, "logs", c.Name+".log"), pidPath(dir, c))
	return err
}

func firstLine(err error) string {
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}

// waitHealthy waits until every component of group answers its health check, failing early for one
// that exits (its log's tail is in the error). It returns one error (or nil) per component.
func waitHealthy(ctx context.Context, dir string, group []component, timeout time.Duration) []error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(group))
	for i, c := range group {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last error
			for {
				if last = healthy(ctx, dir, c); last == nil {
					return
				}
				if r, err := proc.ReadRecord(pidPath(dir, c)); err != nil || !r.Alive() {
					errs[i] = fmt.Errorf("%s exited: %s", c.Name, logTail(dir, c.Name, 15))
					return
				}
				select {
				case <-ctx.Done():
					if errors.Is(ctx.Err(), context.DeadlineExceeded) {
						errs[i] = fmt.Errorf("%s not healthy after %s: %v\n%s", c.Name, timeout, last, logTail(dir, c.Name, 15))
					} else {
						errs[i] = ctx.Err()
					}
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	return errs
}

// logTail returns the last n lines of a component's log.
func logTail(dir, name string, n int) string {
	b, err := os.ReadFile(filepath.Join(dir, "logs", name+".log"))
	if err != nil {
		return "(no log)"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stopAll stops the recorded processes of a cluster: first any process that is not a component (an
// operator run on the host, ...), then the controllers, then the apiservers and balancer, then etcd;
// the processes of one group stop in parallel.
func stopAll(dir string, s *state) {
	files, _ := pidFiles(dir)
	wave := map[string]int{}
	if s != nil && s.Ports != nil {
		for _, c := range plan(dir, s) {
			switch c.kind {
			case "etcd":
				wave[c.Name] = 3
			case "apiserver", "lb":
				wave[c.Name] = 2
			default:
				wave[c.Name] = 1
			}
		}
	}
	waves := make([][]string, 4)
	for n := range files {
		waves[wave[n]] = append(waves[wave[n]], n) // unknown names (wave 0) go first
	}
	for _, wave := range waves {
		var wg sync.WaitGroup
		for _, n := range wave {
			f := files[n]
			r, err := proc.ReadRecord(f)
			if err != nil {
				os.Remove(f)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = r.Stop(context.Background(), 10*time.Second)
				os.Remove(f)
			}()
		}
		wg.Wait()
	}
}

// gogc is the GOGC of the components: $NUV_LOCAL_GOGC, else 25 (the Go default is 100). An idle
// local cluster is mostly Go heap, the kube-apiserver's above all (measured on 1.36: ~157 MB of
// the ~270 MB anonymous memory of an idle 1-node cluster at GOGC=50); at 25 the cluster idles at
// ~234 MB, the apiserver at ~130 MB, for ~0.3% more of a core at idle. A GOMEMLIMIT below the
// apiserver's working set saved more but kept its GC running (15% of a core per idle cluster), and
// --watch-cache=false saved nothing measurable, so neither is used. Measured again on 1.36.3
// (bench/clusters, 10 idle 1-node clusters side by side): 250 MB PSS per cluster, of which the
// apiserver's anonymous memory is 130 MB; its live heap is ~85 MB, and ~35-40 MB of that are the
// OpenAPI v2 and v3 specs it builds at start (no flag turns them off); GOGC=10 takes 15 MB off
// the apiserver for ~40% more of its idle CPU.
func (p Clusters) gogc() string {
	if v := p.getenv()("NUV_LOCAL_GOGC"); v != "" {
		return v
	}
	return "25"
}
