package envtestsuite

import (
	"context"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
)

// RunOperator runs m's tests beside one manager running as the operator's
// ServiceAccount (leader-elected, as the operator is) with the
// ServiceContract reconciler pulling from loopback registries, plus what
// setup adds to it (nil: nothing); wh, when not nil, is the manager's
// webhook server. It stops the manager after the tests; a manager that
// fails fails the run.
func (s *Suite) RunOperator(ctx context.Context, m *testing.M, wh webhook.Server, setup func(ctrl.Manager) error) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cacheDir, err := os.MkdirTemp("", "kubepact-controllers-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cache dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(cacheDir)
	mgr, err := ctrl.NewManager(s.OperatorConfig, ctrl.Options{
		Scheme:                  s.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		LeaderElection:          true,
		LeaderElectionID:        "kubepact-operator",
		LeaderElectionNamespace: OperatorNamespace,
		WebhookServer:           wh,
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
	if setup != nil {
		if err := setup(mgr); err != nil {
			fmt.Fprintf(os.Stderr, "setup: %v\n", err)
			return 1
		}
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
