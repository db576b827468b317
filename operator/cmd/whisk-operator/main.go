// Command whisk-operator is nuv's reference operator: it reconciles Whisk resources (nuv.dev/v1alpha1).
//
// In a cluster it runs as the whisk-operator Deployment with its ServiceAccount; on nuv's local
// clusters `nuv operator` runs it on the host with a kubeconfig holding that ServiceAccount's
// token (--kubeconfig), so its permissions are the same. `nuv run` runs it from source with the
// selected cluster's kubeconfig.
package main

import (
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	whiskv1 "github.com/nuv-dev/nuv/operator/api/v1alpha1"
	"github.com/nuv-dev/nuv/operator/controller"
)

// version is stamped at build time (-ldflags "-X main.version=...") by `nuv image`.
var version = "dev"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "whisk-operator:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("whisk-operator", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: in-cluster config, else $KUBECONFIG)")
	leaderElect := fs.Bool("leader-elect", false, "elect a leader through a Lease in --leader-election-namespace")
	leNamespace := fs.String("leader-election-namespace", "nuv-system", "namespace of the leader-election Lease")
	metricsAddr := fs.String("metrics-bind-address", "0", `metrics address (":8080"; "0" disables)`)
	probeAddr := fs.String("health-probe-bind-address", "0", `health probe address (":8081"; "0" disables)`)
	opts := zap.Options{Development: true}
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	cfg, err := config(*kubeconfig)
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := whiskv1.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// Secrets (the controller's API key) are read from the API server, not cached: the
		// operator needs no list or watch on every Secret of the cluster.
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Metrics:                 metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress:  *probeAddr,
		LeaderElection:          *leaderElect,
		LeaderElectionID:        "whisk-operator.nuv.dev",
		LeaderElectionNamespace: *leNamespace,
		// Release the Lease on a clean stop so a restarted operator takes over at once.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	r := &controller.WhiskReconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorder("whisk-operator")}
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the Whisk controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	ctrl.Log.Info("starting whisk-operator", "version", version, "host", cfg.Host)
	return mgr.Start(ctrl.SetupSignalHandler())
}

func config(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}
