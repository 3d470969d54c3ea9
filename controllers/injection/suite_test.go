package injection_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// The package's control plane: one real kube-apiserver and etcd for all
// tests (test/envtestsuite, with config/webhook installed), and one manager
// running the webhook and the reconciler (which resolves the digests the
// webhook injects) as the operator's ServiceAccount, bound to the
// ClusterRole `make manifests` generated.
var (
	suite = new(envtestsuite.Suite)
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
	os.Exit(suite.Main(m, envtestsuite.Options{Root: filepath.Join("..", ".."), Webhook: true}, func(ctx context.Context, m *testing.M) int {
		wh := suite.Env.WebhookInstallOptions
		webhookHost, webhookPort = wh.LocalServingHost, wh.LocalServingPort
		webhookCertDir, webhookCAData = wh.LocalServingCertDir, wh.LocalServingCAData
		if envtestsuite.Benchmarking() {
			// The benchmark runs its own manager over its own objects.
			return m.Run()
		}
		// The operator's own certificates replace envtest's.
		rotator = newRotator()
		return suite.RunOperator(ctx, m, webhookServer(rotator), func(mgr ctrl.Manager) error {
			injector = &injection.Injector{Options: injection.SidecarOptions{Image: sidecarImage, PlainHTTP: true}}
			if err := injection.SetupInjector(mgr, injector, rotator); err != nil {
				return fmt.Errorf("webhook: %w", err)
			}
			return nil
		})
	}))
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
