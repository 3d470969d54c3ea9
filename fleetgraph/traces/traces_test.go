package traces_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/traces"
	"github.com/kubepact/kubepact/test/pactocompat"
)

var base = time.Date(2026, 7, 29, 8, 0, 0, 0, time.UTC)

func readFile(t *testing.T, a *traces.Accumulator, path string) traces.Summary {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := a.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// TestShopFixture reads kubepact's own export: client/server pairs matched
// by parent span id across services (twice for orders → payments, one of
// them with a kind written as a name), a peer.service call, an internal
// span that is no edge, and a call from a service the fleet does not have.
func TestShopFixture(t *testing.T) {
	a := traces.NewAccumulator(traces.Limits{})
	sum := readFile(t, a, filepath.Join("..", "testdata", "traces", "shop.json"))
	if sum.Spans != 10 || sum.Calls != 5 || sum.Skipped != 1 {
		t.Errorf("summary %+v: want 10 spans, 5 calls, 1 skipped (the internal span)", sum)
	}
	want := []fleetgraph.ObservedEdge{
		{From: "ghost", To: "payments", Calls: 1, LastSeen: base.Add(time.Minute)},
		{From: "orders", To: "payments", Calls: 2, LastSeen: base.Add(time.Hour)},
		{From: "payments", To: "catalog", Calls: 1, LastSeen: base.Add(time.Hour - 2*time.Microsecond)},
		{From: "search", To: "catalog", Calls: 1, LastSeen: base.Add(2 * time.Hour)},
	}
	if d := cmp.Diff(want, a.Observed().Edges()); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
}

// TestPairsAcrossExports: the client span and the server span of one call
// arrive in two exports (two processes export separately); the call is
// counted once, whichever comes first.
func TestPairsAcrossExports(t *testing.T) {
	client := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"orders"}}]},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","kind":3,"endTimeUnixNano":"1785312000000000000"}]}]}]}`
	server := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"payments"}}]},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"d7ad6b7169203331","parentSpanId":"b7ad6b7169203331","kind":2,"endTimeUnixNano":1785312000000000001}]}]}]}`
	for _, order := range [][]string{{client, server}, {server, client}} {
		a := traces.NewAccumulator(traces.Limits{})
		first, err := a.ReadJSON(strings.NewReader(order[0]))
		if err != nil || first.Pending != 1 || first.Calls != 0 {
			t.Fatalf("first export: %+v %v", first, err)
		}
		second, err := a.ReadJSON(strings.NewReader(order[1]))
		if err != nil || second.Calls != 1 {
			t.Fatalf("second export: %+v %v", second, err)
		}
		got := a.Observed().Edges()
		if len(got) != 1 || got[0].From != "orders" || got[0].To != "payments" || got[0].Calls != 1 || !got[0].LastSeen.Equal(base.Add(time.Nanosecond)) {
			t.Errorf("edges %+v", got)
		}
	}
}

// TestPactoDemoTraces reads Pacto's demo export (optional data): client
// spans that name their callee with peer.service.
func TestPactoDemoTraces(t *testing.T) {
	a := traces.NewAccumulator(traces.Limits{})
	readFile(t, a, filepath.Join(pactocompat.Demo(t), "traces.json"))
	var got []string
	for _, e := range a.Observed().Edges() {
		got = append(got, fmt.Sprintf("%s->%s x%d", e.From, e.To, e.Calls))
	}
	if d := cmp.Diff([]string{"audit-log->payments-service x1", "orders-service->payments-service x1"}, got); d != "" {
		t.Errorf("edges (-want +got):\n%s", d)
	}
}

// TestHostileExports: the caller is a collector (or a user's file) that
// sends too much, or garbage. Each export is refused whole with a clear
// error, and what the set knew before is still there.
func TestHostileExports(t *testing.T) {
	a := traces.NewAccumulator(traces.Limits{MaxExportBytes: 4096, MaxSpans: 3})
	readFile(t, a, filepath.Join("..", "testdata", "traces", "one-call.json"))
	before := a.Observed().Edges()
	if len(before) != 1 {
		t.Fatalf("seed edges %+v", before)
	}
	many := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"a"}}]},"scopeSpans":[{"spans":[` +
		strings.Repeat(`{"kind":3,"attributes":[{"key":"peer.service","value":{"stringValue":"b"}}]},`, 3) + `{"kind":3}]}]}]}`
	for _, tc := range []struct {
		name, body string
		is         error
		says       string
	}{
		{"oversized", `{"resourceSpans":[` + strings.Repeat(" ", 5000) + `]}`, traces.ErrTooLarge, "over 4096 bytes"},
		{"too many spans", many, traces.ErrTooLarge, "more than 3 spans"},
		{"not JSON", `{"resourceSpans": [`, traces.ErrMalformed, "OTLP/JSON"},
		{"wrong shape", `{"resourceSpans": {"x": 1}}`, traces.ErrMalformed, "resourceSpans"},
		{"two documents", `{} {}`, traces.ErrMalformed, "more than one JSON value"},
		{"bad trace id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz","kind":3}]}]}]}`, traces.ErrMalformed, "16 bytes in hex"},
		{"bad kind", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_WEIRD"}]}]}]}`, traces.ErrMalformed, "SPAN_KIND_SERVER"},
		{"bad time", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":3,"endTimeUnixNano":"-5"}]}]}]}`, traces.ErrMalformed, "nanoseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.ReadJSON(strings.NewReader(tc.body))
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v: want %v saying %q", err, tc.is, tc.says)
			}
			if strings.Contains(err.Error(), "json:") || strings.Contains(err.Error(), "invalid character") {
				t.Errorf("error %q carries the Go decoder's wording", err)
			}
			if d := cmp.Diff(before, a.Observed().Edges()); d != "" {
				t.Errorf("a refused export changed the set (-before +after):\n%s", d)
			}
		})
	}
	if _, err := a.ReadProto(bytes.NewReader([]byte{0xff, 0xff, 0xff})); !errors.Is(err, traces.ErrMalformed) || !strings.Contains(err.Error(), "protobuf") {
		t.Errorf("garbage protobuf: %v", err)
	}
}

// TestSetBounds: past MaxServices and MaxEdges new names and pairs are
// dropped, the edges already held keep counting, and the set says so.
func TestSetBounds(t *testing.T) {
	a := traces.NewAccumulator(traces.Limits{MaxServices: 3, MaxEdges: 1})
	call := func(from, to string) string {
		return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"` + from + `"}}]},"scopeSpans":[{"spans":[{"kind":3,"attributes":[{"key":"peer.service","value":{"stringValue":"` + to + `"}}]}]}]}]}`
	}
	for _, c := range [][2]string{{"a", "b"}, {"a", "c"}, {"d", "e"}, {"a", "b"}} {
		if _, err := a.ReadJSON(strings.NewReader(call(c[0], c[1]))); err != nil {
			t.Fatal(err)
		}
	}
	o := a.Observed()
	if e := o.Edges(); len(e) != 1 || e[0].From != "a" || e[0].To != "b" || e[0].Calls != 2 {
		t.Errorf("edges %+v: want a->b twice", e)
	}
	b := fleetgraph.NewBuilder(nil)
	b.SetObserved(o)
	res, err := b.Flush().Graph(fleetgraph.GraphQuery{Service: "x", IncludeObserved: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = res // a miss: the set's limitation is asserted through status below
	st, err := b.Current().Status(fleetgraph.StatusQuery{})
	if err != nil || st.Observed == nil {
		t.Fatalf("status %+v %v", st, err)
	}
	var codes []string
	for _, l := range st.Observed.Limitations {
		codes = append(codes, l.Code)
	}
	if !strings.Contains(strings.Join(codes, ","), fleetgraph.LimitObservedTruncated) {
		t.Errorf("limitations %v: want %s", codes, fleetgraph.LimitObservedTruncated)
	}
}
