package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// BenchmarkSidecarOverhead makes the same call two ways in one run, each
// over loopback HTTP: (a) straight to the demo service, (b) as an MCP tool
// call through the sidecar's handler (the capability family on the HTTP
// transport). The calls alternate, so both see the same conditions; the
// per-call durations give percentiles and the latency the MCP hop adds.
func BenchmarkSidecarOverhead(b *testing.B) {
	base := demoService(b, nil)
	s := capabilityServer(b, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base}, nil)
	srv := httptest.NewServer(s.httpHandler)
	b.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(b.Context(),
		&sdk.StreamableClientTransport{Endpoint: srv.URL + Endpoint, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	direct := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	params := &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": "p-0001"}}

	callDirect := func() {
		req, _ := http.NewRequestWithContext(b.Context(), http.MethodGet, base+"/products/p-0001", nil)
		req.Header.Set("Accept", "application/json")
		resp, err := direct.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("direct status %d", resp.StatusCode)
		}
	}
	callMCP := func() {
		res, err := cs.CallTool(b.Context(), params)
		if err != nil || res.IsError {
			b.Fatalf("tool call: %v %+v", err, res)
		}
	}
	for range 50 { // warm connections and caches
		callDirect()
		callMCP()
	}
	directs := make([]time.Duration, 0, b.N)
	mcps := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		callDirect()
		t1 := time.Now()
		callMCP()
		t2 := time.Now()
		directs = append(directs, t1.Sub(t0))
		mcps = append(mcps, t2.Sub(t1))
	}
	b.StopTimer()
	dp50, dp99 := percentile(directs, 50), percentile(directs, 99)
	mp50, mp99 := percentile(mcps, 50), percentile(mcps, 99)
	b.ReportMetric(us(dp50), "direct-p50-µs")
	b.ReportMetric(us(dp99), "direct-p99-µs")
	b.ReportMetric(us(mp50), "mcp-p50-µs")
	b.ReportMetric(us(mp99), "mcp-p99-µs")
	b.ReportMetric(us(mp50-dp50), "added-p50-µs")
	b.ReportMetric(us(mp99-dp99), "added-p99-µs")
	b.ReportMetric(float64(mp50)/float64(dp50), "ratio-p50")
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
