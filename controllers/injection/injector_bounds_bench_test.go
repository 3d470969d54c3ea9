package injection_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubepact/kubepact/controllers/injection"
)

// BenchmarkForgedReviews measures what made-up AdmissionReviews cost the
// webhook: 16 posted at once, each of the size given, their Pod naming no
// contract (nothing is looked up). It reports the peak of the heap in use
// during a round (sampled every millisecond, after a GC before it) and
// how many reviews were answered 200. The client shares one body, so the
// heap is the server's. Run it on a build without the review bounds to
// compare:
//
//	go test -run '^$' -bench ForgedReviews -benchtime 5x ./controllers
func BenchmarkForgedReviews(b *testing.B) {
	srv := webhook.NewServer(webhook.Options{})
	(&injection.Injector{}).Register(srv)
	ts := httptest.NewServer(srv.WebhookMux())
	defer ts.Close()
	for _, size := range []int{7 << 20, 3900 << 10} {
		pad := strings.Repeat("x", size-1024)
		body := []byte(fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},`+
			`"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","namespace":"a","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"pad":%q}}}}}`, pad))
		b.Run(fmt.Sprintf("16x%dKiB", size>>10), func(b *testing.B) {
			var peak uint64
			var served atomic.Int64
			for b.Loop() {
				runtime.GC()
				stop := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
						select {
						case <-stop:
							return
						case <-time.After(time.Millisecond):
						}
					}
				}()
				var wg sync.WaitGroup
				for range 16 {
					wg.Go(func() {
						resp, err := http.Post(ts.URL+injection.InjectorPath, "application/json", bytes.NewReader(body))
						if err != nil {
							return
						}
						if resp.StatusCode == http.StatusOK {
							served.Add(1)
						}
						resp.Body.Close()
					})
				}
				wg.Wait()
				close(stop)
				<-sampled
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(served.Load())/float64(b.N), "served/op")
		})
	}
}
