package kube_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
)

// The benchmark fleet: issue 12's 2,000 ServiceContracts, 6,000
// Deployments and 2,000 Services (every third Deployment bound to a
// contract, every contract naming its Service).
const (
	benchContracts   = 2000
	benchDeployments = 6000
	benchServices    = 2000
	benchNS          = "bench"
	benchLagSamples  = 100
)

// benchFleet is the benchmark's fleet, built once for every b.N round.
var benchFleet struct {
	once sync.Once
	err  error
	l    *live
	// figures measured while setting up
	sync, firstComplete time.Duration
	lag                 []time.Duration
	rssMiB, heapMiB     float64
}

// BenchmarkLiveFleet measures the live fleet on a real kube-apiserver:
// the time from the feed's start to its cache sync and then to the first
// complete snapshot, the event-to-published-snapshot lag (a Deployment's
// image changed through the API until an MCP-visible snapshot shows it,
// p50 and p99 of 100 sequential changes), the process's RSS and Go heap
// once the fleet is in memory, and, per op, one pacto_fleet_get over MCP
// Streamable HTTP on loopback.
func BenchmarkLiveFleet(b *testing.B) {
	if skipReason != "" {
		b.Skip(skipReason)
	}
	f := &benchFleet
	f.once.Do(func() { f.err = setUpBenchFleet(b) })
	if f.err != nil {
		b.Fatal(f.err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(),
		&sdk.StreamableClientTransport{Endpoint: f.l.url, DisableStandaloneSSE: true, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		key := fleetgraph.TargetKey(benchNS, "Deployment", "d-"+strconv.Itoa(3*(i%benchContracts)))
		res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"target": key}})
		if err != nil || res.IsError {
			b.Fatalf("pacto_fleet_get %s: %v %v", key, err, res)
		}
	}
	b.StopTimer()
	b.ReportMetric(f.sync.Seconds(), "sync-s")
	b.ReportMetric(f.firstComplete.Seconds(), "complete-after-sync-s")
	b.ReportMetric(float64(percentile(f.lag, 50).Microseconds())/1000, "lag-p50-ms")
	b.ReportMetric(float64(percentile(f.lag, 99).Microseconds())/1000, "lag-p99-ms")
	b.ReportMetric(f.rssMiB, "rss-MiB")
	b.ReportMetric(f.heapMiB, "heap-MiB")
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

// setUpBenchFleet creates the fleet's objects, starts the live fleet and
// measures it; the objects stay for the process's lifetime (one envtest).
func setUpBenchFleet(b *testing.B) error {
	ctx := context.WithoutCancel(b.Context()) // the fleet outlives one b.N round
	if err := admin.Create(ctx, namespaceObj(benchNS)); err != nil {
		return err
	}
	start := time.Now()
	jobs := make(chan client.Object, 64)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for o := range jobs {
				if err := createBench(ctx, o); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range benchDeployments {
		jobs <- deployment(benchNS, "d-"+strconv.Itoa(i), "r.example/d:1", 1, nil)
	}
	for i := range benchServices {
		jobs <- service(benchNS, "s-"+strconv.Itoa(i), 80)
	}
	for i := range benchContracts {
		jobs <- benchContract(i)
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	fmt.Fprintf(os.Stderr, "bench: created %d objects in %s\n", benchContracts*2+benchDeployments+benchServices, time.Since(start).Round(time.Second))

	// Measured: start → cache sync → first complete snapshot holding the
	// whole fleet.
	f := &benchFleet
	started := time.Now()
	l, _, err := startLiveCtx(ctx, adminCfg, &kube.Options{Namespaces: []string{benchNS}}, 0)
	if err != nil {
		return err
	}
	f.l = l
	f.sync = time.Since(started)
	synced := time.Now()
	for {
		snap := l.b.Current()
		_, revs, tgts := snap.Counts()
		if revs == benchContracts && tgts == benchContracts && snap.Meta().Completeness == fleetgraph.CompletenessComplete {
			break
		}
		if time.Since(synced) > 5*time.Minute {
			return fmt.Errorf("no complete snapshot of the bench fleet after 5m: %d revisions, %d targets, %s", revs, tgts, snap.Meta().Completeness)
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.firstComplete = time.Since(synced)

	// Measured: API write of a new image → the published snapshot shows it.
	for i := range benchLagSamples {
		name := "d-" + strconv.Itoa(3*(i%benchContracts))
		image := "r.example/d:lag-" + strconv.Itoa(i)
		d := deployment(benchNS, name, "", 1, nil)
		if err := admin.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = image
		at := time.Now()
		if err := admin.Update(ctx, d); err != nil {
			return err
		}
		key := fleetgraph.TargetKey(benchNS, "Deployment", name)
		for {
			_, applied := l.b.Applied()
			res, err := l.b.Current().Get(fleetgraph.GetQuery{Target: key})
			if err != nil {
				return err
			}
			if res.Target != nil && strings.Contains(string(res.Target.ObservedRuntime), image) {
				break
			}
			select {
			case <-applied:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("%s: the image change was not published within 10s", name)
			}
		}
		f.lag = append(f.lag, time.Since(at))
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.heapMiB = float64(ms.HeapInuse) / (1 << 20)
	f.rssMiB = rssMiB()
	return nil
}

func namespaceObj(name string) client.Object {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// benchContract is contract i with the status the reconciler would write
// (a distinct digest per contract; the bench feed reads no bundles).
func benchContract(i int) *v1alpha1.ServiceContract {
	name := "svc-" + strconv.Itoa(i)
	d := fmt.Sprintf("sha256:%064x", i+1)
	sc := &v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: benchNS, Name: name},
		Spec: v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: "oci://registry.example/org/" + name + ":1.0.0"},
			TargetRef:  v1alpha1.TargetReference{Kind: "Deployment", Name: "d-" + strconv.Itoa(3*i)},
			ServiceRef: &v1alpha1.LocalObjectReference{Name: "s-" + strconv.Itoa(i)}}}
	now := metav1.Now()
	sc.Status = v1alpha1.ServiceContractStatus{Digest: d, ResolvedRef: "registry.example/org/" + name + ":1.0.0@" + d,
		Contract:       &v1alpha1.ContractSummary{Service: name, Version: "1.0.0", Owner: "team-" + strconv.Itoa(i%40), Interfaces: []string{"http"}},
		LastResolvedAt: &now,
		Conditions:     []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSucceeded, Message: "m", LastTransitionTime: now}}}
	return sc
}

// createBench creates o, and writes a ServiceContract's status after it.
func createBench(ctx context.Context, o client.Object) error {
	sc, isSC := o.(*v1alpha1.ServiceContract)
	var status v1alpha1.ServiceContractStatus
	if isSC {
		status = sc.Status
	}
	if err := admin.Create(ctx, o); err != nil {
		return err
	}
	if !isSC {
		return nil
	}
	sc.Status = status
	return admin.Status().Update(ctx, sc)
}

// rssMiB reads the process's resident set from /proc (0 elsewhere).
func rssMiB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
