package controllers_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

// BenchmarkReconcile2000 creates 2,000 ServiceContracts naming one tag on one
// registry on loopback, then starts the manager (as the operator's
// ServiceAccount) and measures the time until all are Ready, the reconciles
// per second, and the process's peak RSS (the test process: manager, the
// in-process registry and the polling client). Run it alone:
//
//	KUBEBUILDER_ASSETS=… go test ./controllers -run '^$' -bench Reconcile2000 -benchtime 1x
func BenchmarkReconcile2000(b *testing.B) {
	suite.NeedControlPlane(b)
	const n = 2000
	for range b.N {
		runFleet(b, n)
	}
}

func runFleet(b *testing.B, n int) {
	b.StopTimer()
	ctx := b.Context()
	ns := suite.NewNamespace(b)
	reg := testregistry.New(b, nil).Host
	envtestsuite.Push(b, envtestsuite.PlainClient(b, nil), "../examples/bundles/catalog", reg+"/bundles/catalog:1.4.0")
	createDeployment(b, ns, "catalog")
	for i := range n {
		sc := envtestsuite.NewContract(ns, fmt.Sprintf("catalog-%04d", i), "oci://"+reg+"/bundles/catalog:1.4.0", "catalog")
		if err := suite.Admin.Create(ctx, sc); err != nil {
			b.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(suite.OperatorConfig, ctrl.Options{Scheme: suite.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		b.Fatal(err)
	}
	r := &controllers.ServiceContractReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(controllers.ControllerName),
		Options: controllers.ReconcilerOptions{Registry: oci.Options{PlainHTTP: true, CacheDir: b.TempDir(), AllowedRegistries: []string{"127.0.0.1"}}, MaxConcurrentReconciles: 4},
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		b.Fatal(err)
	}
	before := reconcileCount(b)
	start := time.Now()
	b.StartTimer()
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	for {
		var list v1alpha1.ServiceContractList
		if err := suite.Admin.List(ctx, &list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		ready := 0
		for i := range list.Items {
			if envtestsuite.IsReady(&list.Items[i]) {
				ready++
			}
		}
		if ready == n {
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d Ready after 10 minutes", ready, n)
		}
		time.Sleep(250 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reconciles := reconcileCount(b) - before
	cancel()
	if err := <-done; err != nil {
		b.Error(err)
	}
	b.ReportMetric(elapsed.Seconds(), "s-to-all-ready")
	b.ReportMetric(reconciles/elapsed.Seconds(), "reconciles/s")
	b.ReportMetric(peakRSSMiB(b), "peak-RSS-MiB")
}

// reconcileCount sums controller-runtime's reconcile counter for our
// controller.
func reconcileCount(b *testing.B) float64 {
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controllers.ControllerName {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// peakRSSMiB reads VmHWM, the process's peak resident set, from /proc.
func peakRSSMiB(b *testing.B) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}
