// Package traces derives observed service-to-service edges from OTLP
// trace exports, for the fleet's observed-edge source.
//
// An edge is a call from one service to another: a client (or producer)
// span of one service that is the parent of a server (or consumer) span
// of another, matched by trace id and parent span id, with the service
// names read from each span's service.name resource attribute. A client
// span that names its callee in a peer.service attribute is an edge by
// itself (the shape of Pacto's demo export). Each edge counts its calls
// and keeps the end time of the latest.
//
// Everything is bounded: the bytes of one export, the spans in it, the
// distinct service names, the distinct edges and the spans kept waiting
// for their other half across exports. An export past a per-export bound,
// or one that does not decode, is refused whole with an error that says
// what was wrong and what is accepted, and changes nothing already known.
// Past the whole-set bounds, new names and pairs are dropped and the set
// says so (fleetgraph.LimitObservedTruncated).
//
// Two encodings are read: OTLP/JSON (ReadJSON; a file written by an
// OpenTelemetry collector's file exporter, or a request body of
// Content-Type application/json) and OTLP/protobuf (ReadProto; the
// request body of an OTLP/HTTP exporter's default encoding).
package traces

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"google.golang.org/protobuf/proto"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"

	"github.com/kubepact/kubepact/fleetgraph"
)

// Default bounds.
const (
	DefaultMaxExportBytes = 16 << 20 // one export (a file, a request body)
	DefaultMaxSpans       = 200_000  // spans in one export
	DefaultMaxServices    = 2_000    // distinct service names in the set
	DefaultMaxEdges       = 20_000   // distinct caller → callee pairs
	DefaultMaxPending     = 100_000  // spans waiting for their other half
	maxNameLen            = 255      // a service name longer than this is not one
)

// Limits bound an Accumulator; zero fields take the defaults.
type Limits struct {
	MaxExportBytes int64
	MaxSpans       int
	MaxServices    int
	MaxEdges       int
	MaxPending     int
}

func (l Limits) withDefaults() Limits {
	if l.MaxExportBytes <= 0 {
		l.MaxExportBytes = DefaultMaxExportBytes
	}
	if l.MaxSpans <= 0 {
		l.MaxSpans = DefaultMaxSpans
	}
	if l.MaxServices <= 0 {
		l.MaxServices = DefaultMaxServices
	}
	if l.MaxEdges <= 0 {
		l.MaxEdges = DefaultMaxEdges
	}
	if l.MaxPending <= 0 {
		l.MaxPending = DefaultMaxPending
	}
	return l
}

// Errors an export is refused with; errors.Is tells them apart.
var (
	// ErrTooLarge: the export is over MaxExportBytes or holds more than
	// MaxSpans spans.
	ErrTooLarge = errors.New("trace export too large")
	// ErrMalformed: the export does not decode as OTLP.
	ErrMalformed = errors.New("trace export malformed")
)

// Span kinds, as OTLP numbers them.
const (
	kindServer   = 2
	kindClient   = 3
	kindProducer = 4
	kindConsumer = 5
)

// span is what the accumulator reads of one span.
type span struct {
	service, peer     string
	trace, id, parent string // lower-case hex; empty when absent
	kind              int
	end               time.Time
}

// Summary says what one export contributed.
type Summary struct {
	Spans int // spans read
	// Calls is how many calls were counted into edges; Pending how many
	// spans wait for their other half in a later export.
	Calls   int
	Pending int
	// Skipped counts spans left out: no service.name, a name that is not
	// one, or a kind that takes no part in an edge.
	Skipped int
}

type pend struct {
	service string
	end     time.Time
	counted bool // a client span already counted through peer.service
}

// Accumulator merges exports into one observed-edge set. It is safe for
// concurrent use.
type Accumulator struct {
	lim Limits

	mu       sync.Mutex
	edges    map[[2]string]*fleetgraph.ObservedEdge
	services map[string]bool
	clients  map[string]pend // trace+span id of a client span -> its service
	servers  map[string]pend // trace+parent span id of a server span -> its service
	fifo     []string        // pending keys ("c"/"s" + key), oldest first
	dropped  struct{ services, edges, pending int }
}

// NewAccumulator returns an empty Accumulator with the given bounds.
func NewAccumulator(lim Limits) *Accumulator {
	return &Accumulator{lim: lim.withDefaults(), edges: map[[2]string]*fleetgraph.ObservedEdge{}, services: map[string]bool{},
		clients: map[string]pend{}, servers: map[string]pend{}}
}

// Limits returns the accumulator's bounds, defaults filled in.
func (a *Accumulator) Limits() Limits { return a.lim }

// ReadJSON reads one OTLP/JSON export from r and merges it. Nothing is
// merged when it is refused.
func (a *Accumulator) ReadJSON(r io.Reader) (Summary, error) {
	raw, err := a.readAll(r)
	if err != nil {
		return Summary{}, err
	}
	spans, err := decodeJSON(raw, a.lim.MaxSpans)
	if err != nil {
		return Summary{}, err
	}
	return a.merge(spans), nil
}

// ReadProto reads one OTLP/protobuf ExportTraceServiceRequest from r and
// merges it. Nothing is merged when it is refused.
func (a *Accumulator) ReadProto(r io.Reader) (Summary, error) {
	raw, err := a.readAll(r)
	if err != nil {
		return Summary{}, err
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		return Summary{}, fmt.Errorf("%w: the body is not an OTLP ExportTraceServiceRequest in protobuf encoding; send application/x-protobuf as an OTLP/HTTP exporter does, or OTLP/JSON as application/json", ErrMalformed)
	}
	var spans []span
	for _, rs := range req.GetResourceSpans() {
		svc := serviceOf(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				if len(spans) >= a.lim.MaxSpans {
					return Summary{}, fmt.Errorf("%w: more than %d spans in one export; send smaller batches", ErrTooLarge, a.lim.MaxSpans)
				}
				s := span{service: svc, kind: int(sp.GetKind()), trace: hex.EncodeToString(sp.GetTraceId()),
					id: hex.EncodeToString(sp.GetSpanId()), parent: hex.EncodeToString(sp.GetParentSpanId()),
					peer: stringAttr(sp.GetAttributes(), "peer.service")}
				if ns := sp.GetEndTimeUnixNano(); ns > 0 && ns < 1<<63 {
					s.end = time.Unix(0, int64(ns)).UTC()
				}
				spans = append(spans, s)
			}
		}
	}
	return a.merge(spans), nil
}

func (a *Accumulator) readAll(r io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, a.lim.MaxExportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the trace export: %w", err)
	}
	if int64(len(raw)) > a.lim.MaxExportBytes {
		return nil, fmt.Errorf("%w: over %d bytes; split it into smaller exports", ErrTooLarge, a.lim.MaxExportBytes)
	}
	return raw, nil
}

func serviceOf(attrs []*commonpb.KeyValue) string { return stringAttr(attrs, "service.name") }

func stringAttr(attrs []*commonpb.KeyValue, key string) string {
	for _, kv := range attrs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

// validName reports whether a traced service name can name a service:
// non-empty, at most maxNameLen bytes, printable, no spaces.
func validName(s string) bool {
	if s == "" || len(s) > maxNameLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// merge folds one export's spans into the set: client spans first, so a
// server span finds its parent from the same export.
func (a *Accumulator) merge(spans []span) Summary {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := Summary{Spans: len(spans)}
	for _, pass := range []int{kindClient, kindServer} {
		for _, s := range spans {
			k := s.kind
			switch k {
			case kindProducer:
				k = kindClient
			case kindConsumer:
				k = kindServer
			case kindClient, kindServer:
			default:
				if pass == kindClient {
					sum.Skipped++
				}
				continue
			}
			if k != pass {
				continue
			}
			if !validName(s.service) {
				sum.Skipped++
				continue
			}
			if pass == kindClient {
				a.client(s, &sum)
			} else {
				a.server(s, &sum)
			}
		}
	}
	return sum
}

func (a *Accumulator) client(s span, sum *Summary) {
	counted := false
	if validName(s.peer) && s.peer != s.service {
		counted = a.count(s.service, s.peer, s.end)
		if counted {
			sum.Calls++
		}
	}
	if s.trace == "" || s.id == "" {
		return
	}
	key := s.trace + "/" + s.id
	if srv, ok := a.servers[key]; ok {
		delete(a.servers, key)
		if !counted && srv.service != s.service && a.count(s.service, srv.service, later(s.end, srv.end)) {
			sum.Calls++
		}
		return
	}
	a.hold("c", key, pend{service: s.service, end: s.end, counted: counted}, sum)
}

func (a *Accumulator) server(s span, sum *Summary) {
	if s.trace == "" || s.parent == "" {
		return
	}
	key := s.trace + "/" + s.parent
	if c, ok := a.clients[key]; ok {
		delete(a.clients, key)
		if !c.counted && c.service != s.service && a.count(c.service, s.service, later(s.end, c.end)) {
			sum.Calls++
		}
		return
	}
	a.hold("s", key, pend{service: s.service, end: s.end}, sum)
}

// hold keeps a span waiting for its other half, evicting the oldest when
// MaxPending are waiting.
func (a *Accumulator) hold(side, key string, p pend, sum *Summary) {
	m := a.clients
	if side == "s" {
		m = a.servers
	}
	if _, dup := m[key]; !dup {
		a.fifo = append(a.fifo, side+key)
	}
	m[key] = p
	sum.Pending++
	for len(a.clients)+len(a.servers) > a.lim.MaxPending && len(a.fifo) > 0 {
		old := a.fifo[0]
		a.fifo = a.fifo[1:]
		if old[0] == 'c' {
			delete(a.clients, old[1:])
		} else {
			delete(a.servers, old[1:])
		}
		a.dropped.pending++
	}
	if len(a.fifo) > 2*a.lim.MaxPending {
		a.compact()
	}
}

// compact drops fifo entries whose span was matched since.
func (a *Accumulator) compact() {
	out := a.fifo[:0]
	for _, k := range a.fifo {
		m := a.clients
		if k[0] == 's' {
			m = a.servers
		}
		if _, ok := m[k[1:]]; ok {
			out = append(out, k)
		}
	}
	a.fifo = out
}

// count adds one call from → to; false when a bound refused it.
func (a *Accumulator) count(from, to string, at time.Time) bool {
	k := [2]string{from, to}
	e, ok := a.edges[k]
	if !ok {
		for _, n := range []string{from, to} {
			if !a.services[n] && len(a.services) >= a.lim.MaxServices {
				a.dropped.services++
				return false
			}
		}
		if len(a.edges) >= a.lim.MaxEdges {
			a.dropped.edges++
			return false
		}
		a.services[from], a.services[to] = true, true
		e = &fleetgraph.ObservedEdge{From: from, To: to}
		a.edges[k] = e
	}
	e.Calls++
	if at.After(e.LastSeen) {
		e.LastSeen = at
	}
	return true
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Observed returns the set as it stands, for the fleet's next snapshot.
func (a *Accumulator) Observed() *fleetgraph.Observed {
	a.mu.Lock()
	defer a.mu.Unlock()
	edges := make([]fleetgraph.ObservedEdge, 0, len(a.edges))
	for _, e := range a.edges {
		edges = append(edges, *e)
	}
	var notes []string
	if a.dropped.services > 0 {
		notes = append(notes, fmt.Sprintf("%d calls were not recorded because the set already names %d services", a.dropped.services, a.lim.MaxServices))
	}
	if a.dropped.edges > 0 {
		notes = append(notes, fmt.Sprintf("%d calls were not recorded because the set already holds %d edges", a.dropped.edges, a.lim.MaxEdges))
	}
	if a.dropped.pending > 0 {
		notes = append(notes, fmt.Sprintf("%d spans waited longer than the %d newest for their other half and were let go", a.dropped.pending, a.lim.MaxPending))
	}
	return fleetgraph.NewObserved(edges, strings.Join(notes, "; "))
}

// decodeJSON decodes an OTLP/JSON export: resourceSpans → scopeSpans (or
// the older instrumentationLibrarySpans) → spans. Ids are hex, as OTLP/JSON
// writes them; kinds are numbers or SPAN_KIND_* names; times are decimal
// nanoseconds, as strings or numbers.
func decodeJSON(raw []byte, maxSpans int) ([]span, error) {
	var doc struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []jsonKV `json:"attributes"`
			} `json:"resource"`
			ScopeSpans                  []jsonScope `json:"scopeSpans"`
			InstrumentationLibrarySpans []jsonScope `json:"instrumentationLibrarySpans"`
		} `json:"resourceSpans"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %s; want OTLP/JSON: {\"resourceSpans\": [{\"resource\": {\"attributes\": [...]}, \"scopeSpans\": [{\"spans\": [...]}]}]}", ErrMalformed, jsonProblem(err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value; want one OTLP/JSON export per file or request", ErrMalformed)
	}
	var out []span
	for i, rs := range doc.ResourceSpans {
		svc := jsonString(rs.Resource.Attributes, "service.name")
		for _, ss := range append(rs.ScopeSpans, rs.InstrumentationLibrarySpans...) {
			for j, sp := range ss.Spans {
				if len(out) >= maxSpans {
					return nil, fmt.Errorf("%w: more than %d spans in one export; split it", ErrTooLarge, maxSpans)
				}
				s := span{service: svc, peer: jsonString(sp.Attributes, "peer.service")}
				var err error
				if s.kind, err = jsonKind(sp.Kind); err != nil {
					return nil, fmt.Errorf("%w: resourceSpans[%d] span %d: %w", ErrMalformed, i, j, err)
				}
				for _, f := range []struct {
					in   string
					out  *string
					want int
				}{{sp.TraceID, &s.trace, 16}, {sp.SpanID, &s.id, 8}, {sp.ParentSpanID, &s.parent, 8}} {
					if f.in == "" {
						continue
					}
					b, err := hex.DecodeString(f.in)
					if err != nil || len(b) != f.want {
						return nil, fmt.Errorf("%w: resourceSpans[%d] span %d: id %q is not %d bytes in hex", ErrMalformed, i, j, cut(f.in), f.want)
					}
					*f.out = strings.ToLower(f.in)
				}
				if ns, err := jsonNanos(sp.End); err != nil {
					return nil, fmt.Errorf("%w: resourceSpans[%d] span %d: endTimeUnixNano: %w", ErrMalformed, i, j, err)
				} else if ns > 0 {
					s.end = time.Unix(0, ns).UTC()
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

type jsonScope struct {
	Spans []struct {
		TraceID      string          `json:"traceId"`
		SpanID       string          `json:"spanId"`
		ParentSpanID string          `json:"parentSpanId"`
		Kind         json.RawMessage `json:"kind"`
		End          json.RawMessage `json:"endTimeUnixNano"`
		Attributes   []jsonKV        `json:"attributes"`
	} `json:"spans"`
}

type jsonKV struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string `json:"stringValue"`
	} `json:"value"`
}

func jsonString(kvs []jsonKV, key string) string {
	for _, kv := range kvs {
		if kv.Key == key && kv.Value.StringValue != nil {
			return *kv.Value.StringValue
		}
	}
	return ""
}

var kindNames = map[string]int{"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}

func jsonKind(raw json.RawMessage) (int, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		if n < 0 || n > 5 {
			return 0, fmt.Errorf("kind %d: want 0..5", n)
		}
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if k, ok := kindNames[s]; ok {
			return k, nil
		}
		return 0, fmt.Errorf("kind %q: want a number 0..5 or a name such as SPAN_KIND_SERVER or SPAN_KIND_CLIENT", cut(s))
	}
	return 0, errors.New("kind: want a number or a SPAN_KIND_* name")
}

func jsonNanos(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	s := string(raw)
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n >= 1<<63 {
		return 0, fmt.Errorf("%q is not a count of nanoseconds since 1970", cut(s))
	}
	return int64(n), nil
}

// jsonProblem says where a JSON document went wrong, without the Go
// decoder's wording.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not JSON (syntax error at byte %d)", se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Sprintf("%s holds a JSON %s where OTLP/JSON has another type", field, te.Value)
	case errors.Is(err, io.EOF):
		return "empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "cut short"
	default:
		return "not JSON"
	}
}

func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
