package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/nuv-dev/nuv/internal/cli"
	"github.com/nuv-dev/nuv/internal/cluster/providers"
	"github.com/nuv-dev/nuv/internal/companion"
)

// emulatorName is the emulators' program, beside this one (cmd/nuv-emulator).
const emulatorName = "nuv-emulator"

// emulatorVerbs are `nuv emulator`'s verbs as nuv-emulator answers them (a test compares): help
// lists the command, completion its verbs; running any of them hands the command line over.
var emulatorVerbs = []cli.Verb{
	{Name: "up", Short: "start them (detached) unless they run; prints the AWS endpoint (status shows all three)"},
	{Name: "down", Short: "stop them (state stays; the control planes of their clusters keep running)"},
	{Name: "status", Short: "print each one's endpoint and what it emulates (exit 1 when any of them does not run)"},
	{Name: "env", Short: `print the shell lines that point AWS and Google clients at them: eval "$(nuv emulator env)"`},
	{Name: "faults", Short: "list, add (JSON) or clear the injected faults of an emulator"},
	{Name: "serve", Hidden: true, Short: "serve the AWS emulator in the foreground"},
	{Name: "serve-azure", Hidden: true, Short: "serve the Azure emulator in the foreground"},
	{Name: "serve-gcp", Hidden: true, Short: "serve the GKE emulator in the foreground"},
}

// emulatorCommands: `nuv emulator ...`, the loopback AWS, Azure and GKE emulators the cloud
// providers are tested against. They are a program of their own (cmd/nuv-emulator, beside this
// one), which this program hands the command line to, so that it links none of them.
func emulatorCommands() []cli.Command {
	g := &cli.Group{Name: "nuv emulator", Short: "the loopback cloud emulators: AWS, Azure, GKE (up|down|status|env|faults)"}
	for _, v := range emulatorVerbs {
		v.Run = handToEmulator(v.Name)
		g.Verbs = append(g.Verbs, v)
	}
	return []cli.Command{{Name: "emulator", Short: g.Short, Run: handToEmulator(""), Group: g}}
}

// emulatorTools: -eks-token and -gke-token, the exec credential plugins of EKS and GKE kubeconfigs.
func emulatorTools() []cli.Command { return providers.Tools() }

// emulatorProgram locates nuv-emulator and says what more its environment needs (tests run
// themselves as it).
var emulatorProgram = func() (string, []string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("locate nuv's full program: %w", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	p, err := companion.Sibling(self, emulatorName, companion.CacheDir(os.Getenv), "install nuv, nuv-full and nuv-emulator from one archive")
	if err != nil {
		return "", nil, err
	}
	if p == "" {
		return "", nil, fmt.Errorf("nuv's emulators are a program of their own, %s, and there is none beside nuv's full program %s: run `nuv emulator` through nuv (which builds them beside its full program), install nuv's programs from one archive, or build ./cmd/%s into %s",
			emulatorName, self, emulatorName, filepath.Dir(self))
	}
	return p, nil, nil
}

// emulatorEnv are the variables nuv-emulator and the local control planes of its clusters read:
// an environment whose Getenv is not the process's (tests) passes them on as it answers them.
var emulatorEnv = []string{"NUV_HOME", "NUV_PROJECT", "HOME", "PATH", "XDG_CACHE_HOME", "NUV_CACHE_DIR", "NUV_VERBOSE", "DOCKER_HOST",
	"NUV_EMULATOR_PORT", "NUV_EMULATOR_DELAY", "NUV_EMULATOR_REGION", "NUV_AZURE_EMULATOR_PORT", "NUV_EMULATOR_GCP_PORT", "NUV_EMULATOR_GCP_PROJECT",
	"NUV_KUBE_BIN", "NUV_LOCAL_PORT_BASE", "NUV_LOCAL_GOGC", "NUV_DOWNLOAD_CA_FILE", "NUV_DOWNLOAD_TIMEOUT"}

// handToEmulator runs `nuv emulator [verb] ARGS` in nuv-emulator: by exec(2) when this process's
// own streams are the command's (same process, arguments, streams, signals and exit code, as the
// slim nuv hands over); else (completion asking a verb's help, tests) as a child whose output
// and exit code are the command's.
func handToEmulator(verb string) func(context.Context, *cli.Env, []string) error {
	return func(ctx context.Context, env *cli.Env, args []string) error {
		p, extra, err := emulatorProgram()
		if err != nil {
			return err
		}
		argv := []string{"nuv", "emulator"}
		if verb != "" {
			argv = append(argv, verb)
		}
		argv = append(argv, args...)
		if env.In == os.Stdin && env.Out == os.Stdout && env.Err == os.Stderr {
			if err := syscall.Exec(p, argv, append(os.Environ(), extra...)); err != nil {
				return fmt.Errorf("run nuv's emulators' program %s: %w", p, err)
			}
			return nil
		}
		cmd := exec.CommandContext(ctx, p, argv[1:]...)
		cmd.Args[0] = argv[0]
		cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Dir, env.In, env.Out, env.Err
		cmd.Env = childEnv(env.Getenv, extra)
		err = cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return cli.Exit(ee.ExitCode(), nil) // the program printed its error
		}
		if err != nil {
			return fmt.Errorf("run nuv's emulators' program %s: %w", p, err)
		}
		return nil
	}
}

// childEnv is the process's environment with the variables nuv-emulator reads as getenv answers
// them, and extra.
func childEnv(getenv func(string) string, extra []string) []string {
	if getenv == nil {
		return append(os.Environ(), extra...)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(emulatorEnv, k) {
			env = append(env, kv)
		}
	}
	for _, k := range emulatorEnv {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, extra...)
}
