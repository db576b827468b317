package main

import (
	"os"

	"github.com/spf13/pflag"
	"sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	"sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

// runKwok runs the kwok controller exactly as kwok's own main does: its config flags (--config with
// the stages nuv ships) are parsed first, then the command.
func runKwok(args []string) int {
	// The Kubernetes packages linked into nuv-kube register flags (a non-bool --version among them)
	// on pflag.CommandLine, which cobra merges into every command: kwok must not see them.
	pflag.CommandLine = pflag.NewFlagSet("kwok", pflag.ExitOnError)
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}

	ctx := signals.SetupSignalContext()
	ctx, logger := log.InitFlags(ctx, flagset)
	ctx, err := config.InitFlags(ctx, flagset)
	if err != nil {
		logger.Error("Init config flags", "err", err)
		return 1
	}
	command := kwokcmd.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(flagset)
	command.SetArgs(args)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}
