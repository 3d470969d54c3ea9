package injection_test

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// The package's control plane: one real kube-apiserver and etcd for all
// tests (test/envtestsuite, with config/webhook installed), and one manager
// running the webhook and the reconciler (which resolves the digests the
// webhook injects) as the operator's ServiceAccount, bound to the
// ClusterRole `make manifests` generated.
var (
	suite *envtestsuite.Suite
	// admin is a client with the test's full authority, for setting up.
	admin client.Client
	// adminConfig is the rest.Config of admin.
	adminConfig *rest.Config
	// operatorConfig is the rest.Config the manager runs with: the
	// operator's ServiceAccount, impersonated.
	operatorConfig *rest.Config
	scheme         *runtime.Scheme
	// injector and rotator are the webhook the manager serves, installed
	// through envtest's webhook options from config/webhook.
	injector *injection.Injector
	rotator  *injection.CertRotator
	// webhookHost and webhookPort are where the installed webhook
	// configuration sends the API server.
	webhookHost string
	webhookPort int
	// webhookCertDir holds envtest's serving certificate for webhookHost
	// (tls.crt, tls.key), which webhookCAData signs: for the tests' other
	// webhook servers.
	webhookCertDir string
	webhookCAData  []byte
)

const (
	operatorNamespace = envtestsuite.OperatorNamespace
	operatorSA        = envtestsuite.OperatorSA
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background()) //nolint:forbidigo // TestMain has no t.Context
	defer cancel()
	var err error
	// The operator's own certificates replace envtest's (see rotator below).
	suite, err = envtestsuite.Start(ctx, envtestsuite.Options{Root: filepath.Join("..", ".."), Webhook: true})
	if err != nil {
		// KUBEBUILDER_ASSETS was set: an unusable control plane is a failure.
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	scheme = suite.Scheme
	if suite.Skipped() {
		return m.Run()
	}
	defer suite.Stop()
	admin, adminConfig, operatorConfig = suite.Admin, suite.AdminConfig, suite.OperatorConfig
	wh := suite.Env.WebhookInstallOptions
	webhookHost, webhookPort = wh.LocalServingHost, wh.LocalServingPort
	webhookCertDir, webhookCAData = wh.LocalServingCertDir, wh.LocalServingCAData
	if envtestsuite.Benchmarking() {
		// The benchmark runs its own manager over its own objects.
		return m.Run()
	}
	cacheDir, err := os.MkdirTemp("", "kubepact-controllers-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cache dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(cacheDir)
	rotator = newRotator()
	mgr, err := ctrl.NewManager(operatorConfig, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        "kubepact-operator",
		LeaderElectionNamespace: operatorNamespace,
		WebhookServer:           webhookServer(rotator),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		return 1
	}
	r := &controllers.ServiceContractReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder(controllers.ControllerName),
		Options:   controllers.ReconcilerOptions{Registry: oci.Options{PlainHTTP: true, CacheDir: cacheDir, AllowedRegistries: []string{"127.0.0.1"}}, MaxConcurrentReconciles: 4},
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		fmt.Fprintf(os.Stderr, "setup: %v\n", err)
		return 1
	}
	injector = &injection.Injector{Options: injection.SidecarOptions{Image: sidecarImage, PlainHTTP: true}}
	if err := injection.SetupInjector(mgr, injector, rotator); err != nil {
		fmt.Fprintf(os.Stderr, "webhook setup: %v\n", err)
		return 1
	}
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-mgrDone; err != nil {
		fmt.Fprintf(os.Stderr, "manager: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func newRotator() *injection.CertRotator {
	return &injection.CertRotator{Options: injection.CertOptions{
		Namespace:   operatorNamespace,
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP(webhookHost)},
		// Short, so that TestCertRotation sees a CA replaced in seconds.
		CAOverlap:     3 * time.Second,
		CheckInterval: 250 * time.Millisecond,
	}}
}

func webhookServer(rot *injection.CertRotator) webhook.Server {
	return webhook.NewServer(webhook.Options{Host: webhookHost, Port: webhookPort, TLSOpts: []func(*tls.Config){rot.TLSConfig}})
}

// roundTripFunc is an http.RoundTripper of one function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
