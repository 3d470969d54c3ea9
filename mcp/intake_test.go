package mcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/fleetgraph/traces"
	"github.com/kubepact/kubepact/test/otlpreceiver"
)

// allowUsers is the intake's authorization step as a table: the sub-step
// under test here is the handler; the operator's envtest test asks a real
// API server.
type allowUsers map[string]bool

func (a allowUsers) MayPostTraces(_ context.Context, id Identity) (bool, error) {
	return a[id.User], nil
}

// TestTraceIntake: spans posted by a real OTLP/HTTP exporter become an
// observed edge of the next snapshot. The hostile callers: no token, a
// token that may not post, an oversized export, a gzip bomb, garbage, a
// wrong media type, a GET; each is refused with a clear status and
// message, and the edge already known stays.
func TestTraceIntake(t *testing.T) {
	b := fleetgraph.NewBuilder(nil)
	source.NewFeed(b, []source.Source{&source.LocalSource{Dir: "../examples/bundles"}}).Collect(t.Context(), nil)
	acc := traces.NewAccumulator(traces.Limits{MaxExportBytes: 64 << 10})
	s := newTestServer(t, &Options{Transport: TransportHTTP, Families: []Family{FamilyFleet},
		HTTPOptions: HTTPOptions{Authenticator: tokenTable{"collector": {User: "collector"}, "nobody": {User: "nobody"}}},
		Fleet:       FleetOptions{Enabled: true, Builder: b},
		TraceIntake: &TraceIntake{Accumulator: acc, Builder: b, Authorizer: allowUsers{"collector": true}}})
	endpoint := strings.TrimSuffix(serveHTTP(t, s), Endpoint) + TraceIntakeEndpoint

	if err := otlpreceiver.ExportCall(t, endpoint, "collector"); err != nil {
		t.Fatalf("export: %v", err)
	}
	edges := func() []fleetgraph.ObservedEdge { return b.Flush().Observed().Edges() }
	got := edges()
	if len(got) != 1 || got[0].From != "orders" || got[0].To != "payments" || got[0].Calls != 1 {
		t.Fatalf("edges after the export: %+v, want orders -> payments once", got)
	}
	g, err := b.Current().Graph(fleetgraph.GraphQuery{Service: "orders", IncludeObserved: true})
	if err != nil || len(g.Observed) != 1 || g.Observed[0].Provenance != fleetgraph.ProvenanceDeclaredObserved {
		t.Fatalf("graph: %+v %v", g.Observed, err)
	}

	if err := otlpreceiver.ExportCall(t, endpoint, "nobody"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a token that may not post: %v, want 403", err)
	}
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write([]byte(`{"resourceSpans":[` + strings.Repeat(" ", 1<<20) + `]}`))
	_ = zw.Close()
	for _, tc := range []struct {
		name, method, token, ctype, encoding string
		body                                 []byte
		status                               int
		says                                 string
	}{
		{"no token", "POST", "", "application/json", "", []byte(`{}`), 401, "bearer token"},
		{"oversized", "POST", "collector", "application/json", "", bytes.Repeat([]byte(" "), 70<<10), 413, "at most 65536 bytes"},
		{"gzip bomb", "POST", "collector", "application/json", "gzip", bomb.Bytes(), 413, "65536 bytes"},
		{"not OTLP/JSON", "POST", "collector", "application/json", "", []byte(`{"resourceSpans": 7}`), 400, "OTLP/JSON"},
		{"not protobuf", "POST", "collector", "application/x-protobuf", "", []byte{0xff, 0xff, 0xff}, 400, "protobuf"},
		{"media type", "POST", "collector", "text/plain", "", []byte(`{}`), 415, "application/x-protobuf"},
		{"GET", "GET", "collector", "", "", nil, 405, "POST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tc.method, endpoint, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			req.Header.Set("Content-Type", tc.ctype)
			if tc.encoding != "" {
				req.Header.Set("Content-Encoding", tc.encoding)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(msg), tc.says) {
				t.Errorf("%d %q, want %d saying %q", resp.StatusCode, msg, tc.status, tc.says)
			}
			if strings.Contains(string(msg), "json:") || strings.Contains(string(msg), "proto:") {
				t.Errorf("the answer carries a library's wording: %q", msg)
			}
			if now := edges(); len(now) != 1 || now[0].Calls != 1 {
				t.Errorf("edges after a refused export: %+v", now)
			}
		})
	}
}
