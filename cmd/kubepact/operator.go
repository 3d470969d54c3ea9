package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
)

// operatorOptions is the operator's option group.
type operatorOptions struct {
	kubeconfig              string
	namespaces              []string
	metricsAddr             string
	probeAddr               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	plainHTTP               bool
	cacheDir                string
	maxConcurrentReconciles int
	gracefulShutdown        time.Duration
	webhook                 webhookOptions
}

func (o *operatorOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, the in-cluster config, then ~/.kube/config)")
	fs.StringSliceVar(&o.namespaces, "namespace", nil, "watch only these namespaces (repeatable or comma-separated; default: all)")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of /metrics; \"0\" turns it off")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "elect a leader (a Lease) before reconciling, for more than one replica")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "kubepact-operator", "name of the leader-election Lease")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the pod's own namespace)")
	fs.BoolVar(&o.plainHTTP, "plain-http", false, "talk to registries over plain HTTP (never the default; for local test registries)")
	fs.StringVar(&o.cacheDir, "cache-dir", oci.DefaultCacheDir(), "content cache for pulled bundles, keyed by digest (\"\" for none)")
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "ServiceContracts reconciled in parallel")
	fs.DurationVar(&o.gracefulShutdown, "graceful-shutdown-timeout", 30*time.Second, "how long in-flight reconciles get to finish on SIGTERM")
	o.webhook.BindFlags(fs)
}

func (o *operatorOptions) validate() error {
	if o.maxConcurrentReconciles < 1 || o.maxConcurrentReconciles > 64 {
		return fmt.Errorf("--max-concurrent-reconciles %d is not accepted; use 1 to 64", o.maxConcurrentReconciles)
	}
	if o.gracefulShutdown < 0 {
		return fmt.Errorf("--graceful-shutdown-timeout %s is negative", o.gracefulShutdown)
	}
	for _, ns := range o.namespaces {
		if ns == "" {
			return errors.New("--namespace: an empty namespace name is not accepted")
		}
	}
	return o.webhook.validate()
}

func newOperatorCommand() *cobra.Command {
	o := &operatorOptions{}
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the in-cluster operator: the ServiceContract reconciler",
		Long: `operator runs a controller-runtime manager in the cluster. Its reconciler
resolves each ServiceContract's bundle to a digest (following moved tags),
validates it with policy references followed (failing closed), checks that
its target workload exists, and reports it all in status conditions
(Ready, Reconciling, Stalled, BundleResolved, ContractValid, TargetBound).

With --webhook-port it also serves, on every replica, the sidecar injection
webhook: Pods in namespaces labelled kubepact.dev/injection=enabled that name
a ServiceContract (annotation kubepact.dev/contract) get a native sidecar
serving that contract's bundle, pinned to its digest.

/healthz and /readyz (ready once the informer caches have synced) are served
on --health-probe-bind-address, Prometheus metrics on --metrics-bind-address.
With --leader-elect only the elected replica reconciles.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			return runOperator(cmd.Context(), o)
		},
	}
	o.BindFlags(cmd.Flags())
	return cmd
}

func runOperator(ctx context.Context, o *operatorOptions) error {
	log := logr.FromContextOrDiscard(ctx)
	ctrl.SetLogger(log)
	klog.SetLogger(log)
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	cacheOpts := cache.Options{}
	if len(o.namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	gs := o.gracefulShutdown
	rot := o.webhook.rotator()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Cache:                         cacheOpts,
		Metrics:                       metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect,
		LeaderElectionID:              o.leaderElectionID,
		LeaderElectionNamespace:       o.leaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       &gs,
		BaseContext:                   func() context.Context { return ctx },
		WebhookServer:                 o.webhook.server(rot),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	r := &controllers.ServiceContractReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("kubepact-operator"),
		Options: controllers.ReconcilerOptions{
			PlainHTTP:               o.plainHTTP,
			CacheDir:                o.cacheDir,
			MaxConcurrentReconciles: o.maxConcurrentReconciles,
		},
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the ServiceContract reconciler: %w", err)
	}
	if err := o.webhook.setup(mgr, rot, o.plainHTTP); err != nil {
		return fmt.Errorf("setting up the injection webhook: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("informers", controllers.InformersSynced(mgr.GetCache())); err != nil {
		return err
	}
	log.Info("starting the operator", "version", version, "namespaces", o.namespaces, "leaderElection", o.leaderElect)
	// A stop is bounded even when the manager does not return: a signal
	// that lands while controller-runtime v0.25 waits for its caches to
	// start leaves manager.Start spinning forever (seen in
	// TestOperatorProcess). Past the graceful-shutdown bound the process
	// gives up and says so, rather than burning a core until SIGKILL.
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		bound := gs + stopMargin
		t := time.NewTimer(bound)
		defer t.Stop()
		select {
		case err = <-done:
		case <-t.C:
			return fmt.Errorf("operator: the manager did not stop within %s of the signal (stopped while starting?); exiting without it", bound)
		}
	}
	if err != nil {
		return fmt.Errorf("operator: %w", err)
	}
	log.Info("operator stopped")
	return nil
}

// stopMargin is how long past --graceful-shutdown-timeout the manager gets
// to return after a signal, for the shutdown steps that bound does not cover.
const stopMargin = 5 * time.Second

func (o *operatorOptions) restConfig() (*rest.Config, error) {
	if o.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig %s: %w", o.kubeconfig, err)
		}
		if cfg.QPS == 0 {
			// As ctrl.GetConfig does: leave rate limiting to the API
			// server's priority and fairness, not client-go's 5 QPS.
			cfg.QPS = -1
		}
		return cfg, nil
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("no Kubernetes configuration found (in cluster, $KUBECONFIG or ~/.kube/config); pass --kubeconfig: %w", err)
	}
	return cfg, nil
}
