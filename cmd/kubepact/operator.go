//go:build !sidecaronly

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/fleetgraph/traces"
	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/kubeauth"
	"github.com/kubepact/kubepact/mcp/oauth"
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
	// reg is the registry and cache option group of every command
	// (--plain-http, --cache-dir, --no-cache, the bundle limits); the
	// reconciler refuses its credential flags (see reconcilerOptions).
	reg                     registryOptions
	maxConcurrentReconciles int
	gracefulShutdown        time.Duration
	// serveMCP turns /mcp on; mcp holds its HTTP options (the flags
	// `kubepact mcp -t http` has).
	serveMCP bool
	mcp      *mcp.Options
	webhook  webhookOptions
	// mcpAuth is how /mcp callers are authenticated: kubernetes, oauth,
	// token or none ("" picks token with --auth-token-file, else
	// kubernetes); oauth configures oauth.
	mcpAuth string
	// traceIntake serves /v1/traces beside /mcp (--trace-intake).
	traceIntake bool
	oauth       oauthFlags
}

// operatorMaxRequestBytes is the operator's default --max-request-bytes
// for /mcp: a request body (a tools/call naming a service, say) of at
// most 64 KiB. Every byte of a request costs the server about twenty
// while it is answered (a name not found is repeated in the answer), so
// `kubepact mcp`'s 4 MiB would let a handful of requests hold more than
// the chart's memory limit.
const operatorMaxRequestBytes = 64 << 10

func (o *operatorOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, the in-cluster config, then ~/.kube/config)")
	fs.StringSliceVar(&o.namespaces, "namespace", nil, "watch only these namespaces (repeatable or comma-separated; default: all)")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of /metrics; \"0\" turns it off")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "elect a leader (a Lease) before reconciling, for more than one replica")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "kubepact-operator", "name of the leader-election Lease")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease (default: the pod's own namespace)")
	// ServiceContracts name the registries: by default any, as long as it
	// is at a public address (a registry on loopback, a private network or
	// a metadata address must be listed itself).
	o.reg.AllowedRegistries = []string{oci.AnyRegistry}
	o.reg.BindFlags(fs)
	// Credentials come from each ServiceContract's pull Secret only; the
	// flags stay bound so that giving one is refused with the reason.
	for _, name := range []string{"registry-config", "registry-secret-file"} {
		_ = fs.MarkHidden(name)
	}
	fs.IntVar(&o.maxConcurrentReconciles, "max-concurrent-reconciles", 4, "ServiceContracts reconciled in parallel")
	fs.DurationVar(&o.gracefulShutdown, "graceful-shutdown-timeout", 30*time.Second, "how long in-flight reconciles get to finish on SIGTERM")
	fs.BoolVar(&o.serveMCP, "mcp", true, "serve the fleet tools at /mcp (Streamable HTTP on --listen:--port) on every replica")
	o.mcp = mcp.DefaultOptions()
	// /mcp's tools take names, versions, digests, snapshot ids and
	// cursors: no request needs more than a few KiB, and every Pod's
	// ServiceAccount may send one, so the largest is small here.
	o.mcp.MaxRequestBytes = operatorMaxRequestBytes
	o.mcp.BindHTTPFlags(fs)
	o.mcp.Budget.BindFlags(fs)
	fs.BoolVar(&o.mcp.AllowUnauthenticatedRemote, "allow-unauthenticated-remote", false, "allow /mcp beyond loopback without --auth-token-file (logged as a warning)")
	fs.StringVar(&o.mcpAuth, "mcp-auth", "", "how /mcp callers are authenticated: kubernetes (the default: a Kubernetes bearer token checked with TokenReview; answers show only the namespaces where the caller may list ServiceContracts), token (--auth-token-file: one caller who sees everything) or none (no authentication; everyone sees everything); oauth: a JWT access token of --oauth-issuer for this resource, with the scope "+oauth.DefaultReadScope+", whose claims name a user and groups; answers show only the namespaces where they may list ServiceContracts")
	o.oauth.o.BindFlags(fs)
	fs.BoolVar(&o.traceIntake, "trace-intake", false, "accept OTLP/HTTP trace exports at /v1/traces beside /mcp, authenticated like it (with --mcp-auth kubernetes the caller needs create on servicecontracts/traces cluster-wide), for the fleet's observed edges; each export at most 4 MiB and 50,000 spans")
	o.webhook.BindFlags(fs)
}

// reconcilerOptions are the reconciler's options from the flags; an error
// names the flag.
func (o *operatorOptions) reconcilerOptions() (controllers.ReconcilerOptions, error) {
	lim, err := o.reg.limits.limits()
	if err != nil {
		return controllers.ReconcilerOptions{}, err
	}
	ro := controllers.ReconcilerOptions{Registry: o.reg.Options, MaxConcurrentReconciles: o.maxConcurrentReconciles, Namespaces: o.namespaces}
	ro.Registry.Limits = lim
	if err := ro.Validate(); err != nil {
		return ro, fieldsToFlags(err, prefixed("Registry.", oci.FlagNames))
	}
	return ro, nil
}

// prefixed returns names with prefix before every field: the flags of a
// group nested in another options struct.
func prefixed(prefix string, names map[string]string) map[string]string {
	out := make(map[string]string, len(names))
	for field, flag := range names {
		out[prefix+field] = flag
	}
	return out
}

func (o *operatorOptions) validate(ctx context.Context) error {
	if _, err := o.reconcilerOptions(); err != nil {
		return err
	}
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
	mode, err := kubeauth.ChooseMode(o.mcpAuth, o.mcp.AuthTokenFile)
	if err != nil {
		return err
	}
	o.mcpAuth = string(mode)
	if o.traceIntake && !o.serveMCP {
		return errors.New("--trace-intake is served beside /mcp, which --mcp=false turns off: keep /mcp or drop --trace-intake")
	}
	if mode == kubeauth.ModeOAuth {
		if err := o.oauth.apply(&o.mcp.HTTPOptions); err != nil {
			return err
		}
	}
	if o.serveMCP {
		// /mcp's options are checked here, before anything connects to a
		// cluster, by the same validation the server runs.
		if err := kubeauth.Check(ctx, o.mcpOptions(fleetgraph.NewBuilder(nil), nil), mode); err != nil {
			return fieldsToFlags(err, mcp.FlagNames, oci.FlagNames)
		}
	}
	return o.webhook.validate()
}

func newOperatorCommand() *cobra.Command {
	o := &operatorOptions{}
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the in-cluster operator: the ServiceContract reconciler and the live fleet at /mcp",
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
With --leader-elect only the elected replica reconciles.

Every replica also keeps the live fleet: informers on ServiceContracts,
Deployments, StatefulSets, DaemonSets, Services and (when installed)
Pacto's pacto.trianalab.io CRs feed versioned snapshots that the fleet
tools (pacto_fleet_search/get/graph/status/explain, pacto_impact) answer
from at http://127.0.0.1:8585/mcp, with no API-server call per query.
Reach it with kubectl port-forward. Every request carries a Kubernetes
bearer token (kubectl create token NAME), checked with TokenReview; the
answers show only the namespaces where that identity may list
ServiceContracts (SubjectAccessReview), or everything when it may list
them cluster-wide (--mcp-auth; token and none are for single-user setups).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd.Context()); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if err := refuseInapplicable(cmd.Flags(), []flagRule{oauthRule(func() string { return o.mcpAuth })}); err != nil {
				return err
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
	o.reg.Logger = log.WithName("registry")
	ro, err := o.reconcilerOptions()
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
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
		Options:   ro,
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return fmt.Errorf("setting up the ServiceContract reconciler: %w", err)
	}
	if err := addFleet(ctx, mgr, cfg, o); err != nil {
		return err
	}
	if err := o.webhook.setup(mgr, rot, o.reg.PlainHTTP, o.namespaces); err != nil {
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

// addFleet adds the live fleet's Runnables to the manager: the informer
// feed, the Builder it drives and, with --mcp, the MCP server's fleet
// family on that Builder. Bundles of ServiceContract revisions and
// pacto_impact's digest-pinned refs are read through the reconciler's
// digest cache (--cache-dir), so a bundle the reconciler pulled is not
// pulled again.
func addFleet(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, o *operatorOptions) error {
	log := logr.FromContextOrDiscard(ctx)
	ro, err := o.reconcilerOptions()
	if err != nil {
		return err
	}
	// The fleet reads only bundles the reconciler already resolved, through
	// the same registry group and cache; it holds no credentials of its own.
	reg, err := ro.Registry.ClientWithCredentials([]byte(`{"auths":{}}`))
	if err != nil {
		return fmt.Errorf("the fleet's registry client: %w", err)
	}
	b := fleetgraph.NewBuilder(nil)
	// One loader for the feed and /mcp's pacto_impact: a revision is held
	// once, within what /mcp's budget keeps between calls.
	bundles := source.NewRefLoader(&source.RefLoaderOptions{Client: reg, CacheBytes: o.mcp.Budget.KeptBytes()})
	feed, err := kube.NewFeed(cfg, b, &kube.Options{Namespaces: o.namespaces, Registerer: metrics.Registry, Log: log.WithName("fleet"),
		Bundles: bundles})
	if err != nil {
		return err
	}
	if err := mgr.Add(feed); err != nil {
		return err
	}
	if err := mgr.Add(everyReplica(b.Run)); err != nil {
		return err
	}
	if !o.serveMCP {
		return nil
	}
	opts := o.mcpOptions(b, reg)
	opts.Fleet.Bundles = bundles
	opts.Logger = log.WithName("mcp")
	if kubeauth.Mode(o.mcpAuth) == kubeauth.ModeKubernetes {
		// The operator's own identity sends the reviews: its ClusterRole
		// may create tokenreviews and subjectaccessreviews.
		ident, err := kubeauth.NewKubeIdentity(cfg, nil)
		if err != nil {
			return fmt.Errorf("/mcp authentication: %w", err)
		}
		opts.Authenticator, opts.Scoper = ident, ident
	}
	if kubeauth.Mode(o.mcpAuth) == kubeauth.ModeOAuth {
		// The token's claims name the user and groups; the same
		// SubjectAccessReviews scope what they see.
		ident, err := kubeauth.NewKubeIdentity(cfg, nil)
		if err != nil {
			return fmt.Errorf("/mcp authorization: %w", err)
		}
		opts.Scoper = ident
	}
	if o.traceIntake {
		opts.TraceIntake = &mcp.TraceIntake{Builder: b,
			Accumulator: traces.NewAccumulator(traces.Limits{MaxExportBytes: intakeMaxExportBytes, MaxSpans: intakeMaxSpans})}
		// The identity that scopes /mcp's answers (kubernetes or oauth)
		// authorizes an export too.
		if ident, ok := opts.Scoper.(*kubeauth.KubeIdentity); ok {
			opts.TraceIntake.Authorizer = ident
		}
		// An empty set: answers say observed edges are configured, and
		// none has been seen yet, rather than that there is no source.
		b.SetObserved(opts.TraceIntake.Accumulator.Observed())
		log.Info("Trace intake enabled", "endpoint", mcp.TraceIntakeEndpoint, "auth", o.mcpAuth)
	}
	s, err := mcp.NewServer(ctx, opts)
	if err != nil {
		return &exitError{code: 2, msg: fieldsToFlags(err, mcp.FlagNames, oci.FlagNames).Error()}
	}
	addr := net.JoinHostPort(cmp.Or(opts.Listen, "127.0.0.1"), strconv.Itoa(opts.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("/mcp: %w", err)
	}
	// /mcp drains on stop (mcp.Server.Serve).
	return mgr.Add(everyReplica(func(ctx context.Context) error { return s.Serve(ctx, ln) }))
}

// The trace intake's bounds per export: a collector batches far below
// them (its default batch is 8,192 spans).
const (
	intakeMaxExportBytes = 4 << 20
	intakeMaxSpans       = 50_000
)

// everyReplica is a Runnable of the manager that runs on every replica,
// not only the leader: the fleet's publisher and /mcp, so that each
// replica keeps its own snapshots and answers queries.
type everyReplica func(context.Context) error

// Start runs r until ctx is done.
func (r everyReplica) Start(ctx context.Context) error { return r(ctx) }

// NeedLeaderElection is false: every replica runs it.
func (everyReplica) NeedLeaderElection() bool { return false }

// mcpOptions are /mcp's server options: the HTTP flags, the fleet family
// alone, on b. A tool argument naming a bundle names a revision the
// reconciler resolved and the caller may see, never a registry or a path
// (FleetRefsOnly): nothing a caller writes makes the operator dial out.
func (o *operatorOptions) mcpOptions(b *fleetgraph.Builder, reg *oci.Client) *mcp.Options {
	opts := *o.mcp
	opts.Transport = mcp.TransportHTTP
	opts.Families = []mcp.Family{mcp.FamilyFleet}
	opts.Fleet = mcp.FleetOptions{Enabled: true, Builder: b}
	opts.FleetRefsOnly = true
	opts.Registry = reg
	opts.ReadOnly = true
	opts.Version = version
	// The per-tool series join the manager's, on --metrics-bind-address.
	opts.Registerer = metrics.Registry
	return &opts
}

// stopMargin is how long past --graceful-shutdown-timeout the manager gets
// to return after a signal, for the shutdown steps that bound does not cover.
const stopMargin = 5 * time.Second

func (o *operatorOptions) restConfig() (*rest.Config, error) { return kubeRESTConfig(o.kubeconfig) }

// kubeRESTConfig is the configuration of the cluster to talk to: the
// kubeconfig file given, else ctrl.GetConfig's order ($KUBECONFIG, the
// in-cluster config, ~/.kube/config).
func kubeRESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return nil, kubeconfigError("--kubeconfig "+kubeconfig, kubeconfig, err)
		}
		if cfg.QPS == 0 {
			// As ctrl.GetConfig does: leave rate limiting to the API
			// server's priority and fairness, not client-go's 5 QPS.
			cfg.QPS = -1
		}
		return cfg, nil
	}
	home := clientcmd.RecommendedHomeFile
	var err error
	if _, serr := os.Stat(home); serr != nil && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		// Nowhere to look: said below, without controller-runtime's
		// error log about the in-cluster configuration first.
		err = clientcmd.ErrEmptyConfig
	} else {
		var cfg *rest.Config
		if cfg, err = ctrl.GetConfig(); err == nil {
			return cfg, nil
		}
	}
	switch {
	case errors.Is(err, clientcmd.ErrEmptyConfig):
		// client-go's words name KUBERNETES_MASTER, which kubepact does
		// not read; say where kubepact looked instead.
		where := "$KUBECONFIG is not set, and " + home + " does not exist"
		if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
			where = "$KUBECONFIG names " + env + ", which holds no cluster"
			for _, f := range filepath.SplitList(env) {
				if _, serr := os.Stat(f); serr != nil {
					where = "$KUBECONFIG names " + f + ", which does not exist"
					break
				}
			}
		} else if _, serr := os.Stat(home); serr == nil {
			where = "$KUBECONFIG is not set, and " + home + " holds no cluster"
		}
		return nil, fmt.Errorf("no Kubernetes configuration found: this is not a Pod in a cluster, %s: pass --kubeconfig FILE, or set KUBECONFIG", where)
	default:
		return nil, kubeconfigError("the Kubernetes configuration ($KUBECONFIG, or "+clientcmd.RecommendedHomeFile+")", "", err)
	}
}

// loadingPrefix is client-go's wrapping of a kubeconfig file it could not
// read: error loading config file "F": …
var loadingPrefix = regexp.MustCompile(`^error loading config file "[^"]*": `)

// kubeconfigError says why the kubeconfig named what (a flag and its
// file, or the files searched) could not be used, without client-go's
// wrapping; a file that does not exist is said so (inWords).
func kubeconfigError(what, file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", what, err)
	}
	detail := loadingPrefix.ReplaceAllString(err.Error(), "")
	check := "kubectl config view"
	if file != "" {
		check = "kubectl --kubeconfig " + file + " config view"
	}
	return fmt.Errorf("%s is not a kubeconfig file kubepact can read (%s): check it with %s", what, detail, check)
}
