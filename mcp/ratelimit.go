package mcp

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
)

// Rate limits of the HTTP transport, per caller (the authenticated
// identity, or without authentication the client's IP address, as for
// the session quota):
//
//   - every HTTP request to /mcp takes a token of the caller's request
//     bucket before its body is read; without one it is answered 429 with
//     Retry-After (whole seconds) and a JSON-RPC error saying the same;
//   - every tools/call of a registered tool takes a token of the bucket of
//     (caller, tool); without one it is answered with the JSON-RPC error
//     CodeRateLimited, whose message names the limit and whose data says
//     retryAfterMs. Nothing of the call is run.
//
// stdio is never limited: its one client is the process that started the
// server. The buckets are kept in two maps of at most
// RateLimitOptions.MaxCallers entries each, the least recently used
// dropped first. A bucket untouched for burst/rate seconds has refilled,
// so dropping it loses nothing; only a caller flood cycling the whole map
// faster than that (more distinct valid identities or addresses than
// MaxCallers within 2 seconds at the defaults) hands a dropped caller a
// full bucket again. Memory stays bounded either way.
const (
	// CodeRateLimited is the JSON-RPC error code of a request refused by a
	// rate limit, in the implementation-defined server error range
	// (-32000 to -32099; 29 as in HTTP 429).
	CodeRateLimited = -32029

	// DefaultRequestRate and DefaultRequestBurst are the per-caller HTTP
	// request limit. An agent sends one request per tool call or list:
	// a few a second, a fan-out of parallel calls a few tens at once.
	// 100 a second with bursts of 200 never touches one, leaves room for
	// the clients behind one address (kubectl port-forward makes every
	// caller 127.0.0.1 to a server without authentication), and stops a
	// runaway loop within seconds.
	DefaultRequestRate  = 100
	DefaultRequestBurst = 200
	// DefaultToolCallRate and DefaultToolCallBurst are the per-caller,
	// per-tool limit: generous for a loop over one tool (a page walk, a
	// retry), low enough that one caller cannot hammer the service behind
	// a generated tool through this server.
	DefaultToolCallRate  = 50
	DefaultToolCallBurst = 100
	// DefaultRateLimitCallers bounds the buckets kept per map (about 200
	// bytes each: ~2 MiB for the request map at the default).
	DefaultRateLimitCallers = 10000
)

// Names of the limits, the label of kubepact_mcp_rate_limited_total and
// the "limit" of the error data.
const (
	limitRequests  = "requests"
	limitToolCalls = "tool_calls"
)

// callerHeader carries the caller's key from the HTTP route to the tool
// call (the SDK hands a call its request's headers); a client's own is
// removed first.
const callerHeader = "Kubepact-Rate-Caller"

// RateLimitOptions are the per-caller rate limits of the HTTP transport.
// A zero field means its default; a negative rate turns that limit off.
type RateLimitOptions struct {
	// RequestRate is the HTTP requests a second one caller may send
	// (default 100), RequestBurst how many at once (default 200).
	RequestRate  float64
	RequestBurst int
	// ToolCallRate is the calls a second one caller may make to one tool
	// (default 50), ToolCallBurst how many at once (default 100).
	ToolCallRate  float64
	ToolCallBurst int
	// MaxCallers bounds the callers (and caller-tool pairs) tracked
	// (default 10000); past it the least recently seen is forgotten.
	MaxCallers int
}

// BindFlags binds the rate-limit flags, part of the HTTP group.
func (o *RateLimitOptions) BindFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&o.RequestRate, "rate-limit-requests", o.RequestRate, "HTTP requests a second one caller (identity, or client IP without authentication) may send; past it 429 with Retry-After (negative: no limit)")
	fs.IntVar(&o.RequestBurst, "rate-limit-requests-burst", o.RequestBurst, "HTTP requests one caller may send at once before --rate-limit-requests applies")
	fs.Float64Var(&o.ToolCallRate, "rate-limit-tool-calls", o.ToolCallRate, "calls a second one caller may make to one tool; past it a JSON-RPC error with retryAfterMs (negative: no limit)")
	fs.IntVar(&o.ToolCallBurst, "rate-limit-tool-calls-burst", o.ToolCallBurst, "calls to one tool one caller may make at once before --rate-limit-tool-calls applies")
	fs.IntVar(&o.MaxCallers, "rate-limit-callers", o.MaxCallers, "most callers (and caller-tool pairs) whose buckets are kept; past it the least recently seen is forgotten")
}

func (o *RateLimitOptions) setDefaults() {
	if o.RequestRate == 0 {
		o.RequestRate = DefaultRequestRate
	}
	if o.RequestBurst == 0 {
		o.RequestBurst = DefaultRequestBurst
	}
	if o.ToolCallRate == 0 {
		o.ToolCallRate = DefaultToolCallRate
	}
	if o.ToolCallBurst == 0 {
		o.ToolCallBurst = DefaultToolCallBurst
	}
	if o.MaxCallers == 0 {
		o.MaxCallers = DefaultRateLimitCallers
	}
}

func (o *RateLimitOptions) validate() error {
	switch {
	case math.IsNaN(o.RequestRate) || math.IsInf(o.RequestRate, 0):
		return optionErrorf("RateLimit.RequestRate", "%v: want a number of requests a second (negative: no limit)", o.RequestRate)
	case math.IsNaN(o.ToolCallRate) || math.IsInf(o.ToolCallRate, 0):
		return optionErrorf("RateLimit.ToolCallRate", "%v: want a number of calls a second (negative: no limit)", o.ToolCallRate)
	case o.RequestBurst < 1:
		return optionErrorf("RateLimit.RequestBurst", "%d: want at least 1", o.RequestBurst)
	case o.ToolCallBurst < 1:
		return optionErrorf("RateLimit.ToolCallBurst", "%d: want at least 1", o.ToolCallBurst)
	case o.MaxCallers < 1:
		return optionErrorf("RateLimit.MaxCallers", "%d: want at least 1", o.MaxCallers)
	}
	return nil
}

// rateLimits are the server's two limiters and their counter.
type rateLimits struct {
	requests, toolCalls *limiter // nil: that limit is off
	limited             *prometheus.CounterVec
}

func newRateLimits(o RateLimitOptions, reg prometheus.Registerer, now func() time.Time) (*rateLimits, error) {
	rl := &rateLimits{limited: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kubepact",
		Subsystem: "mcp",
		Name:      "rate_limited_total",
		Help:      "Requests refused by a per-caller rate limit, by limit (requests: HTTP 429; tool_calls: a JSON-RPC error).",
	}, []string{"limit"})}
	if o.RequestRate > 0 {
		rl.requests = newLimiter(o.RequestRate, o.RequestBurst, o.MaxCallers, now)
	}
	if o.ToolCallRate > 0 {
		rl.toolCalls = newLimiter(o.ToolCallRate, o.ToolCallBurst, o.MaxCallers, now)
	}
	if reg != nil {
		var err error
		if rl.limited, err = register(reg, rl.limited); err != nil {
			return nil, err
		}
	}
	// Both series exist from the start, so a rate() over them is defined.
	rl.limited.WithLabelValues(limitRequests)
	rl.limited.WithLabelValues(limitToolCalls)
	return rl, nil
}

// admitRequest takes a token of the caller's request bucket, or answers
// 429 with Retry-After and returns false.
func (rl *rateLimits) admitRequest(w http.ResponseWriter, owner string) bool {
	if rl.requests == nil {
		return true
	}
	wait, ok := rl.requests.take(owner)
	if ok {
		return true
	}
	rl.limited.WithLabelValues(limitRequests).Inc()
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
	writeRPCError(w, http.StatusTooManyRequests, nil, CodeRateLimited, fmt.Sprintf(
		"Too Many Requests: you have sent more HTTP requests than one caller may (%s a second, bursts of %d; --rate-limit-requests); retry in %s",
		formatRate(rl.requests.rate), int(rl.requests.burst), roundWait(wait)))
	return false
}

// retryAfterSeconds is wait in whole seconds, rounded up: Retry-After
// has no finer unit, and 0 would invite an immediate retry.
func retryAfterSeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

func roundWait(d time.Duration) time.Duration {
	return max(time.Millisecond, d.Round(time.Millisecond))
}

func formatRate(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// rateLimitData is the data of a CodeRateLimited error.
type rateLimitData struct {
	Limit        string `json:"limit"`
	Tool         string `json:"tool,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs"`
}

// limitToolCalls returns receiving middleware that refuses a tools/call
// over the caller's limit for its tool with a CodeRateLimited error.
// Only calls that came over HTTP carry a caller key; stdio passes. An
// unknown tool's call passes too: it runs nothing, and the request limit
// bounds how often it is sent.
func (s *Server) limitToolCalls() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			call, ok := req.(*sdk.CallToolRequest)
			if s.rates.toolCalls == nil || method != "tools/call" || !ok || call.Params == nil || call.Extra == nil || call.Extra.Header == nil {
				return next(ctx, method, req)
			}
			owner := call.Extra.Header.Get(callerHeader)
			if _, known := s.tools[call.Params.Name]; !known || owner == "" {
				return next(ctx, method, req)
			}
			wait, ok := s.rates.toolCalls.take(owner + "\x00" + call.Params.Name)
			if ok {
				return next(ctx, method, req)
			}
			s.rates.limited.WithLabelValues(limitToolCalls).Inc()
			lim := s.rates.toolCalls
			data, _ := json.Marshal(rateLimitData{Limit: limitToolCalls, Tool: call.Params.Name, RetryAfterMs: roundWait(wait).Milliseconds()})
			return nil, &jsonrpc.Error{Code: CodeRateLimited, Data: data, Message: fmt.Sprintf(
				"rate limited: you have called %s more often than one caller may call one tool (%s a second, bursts of %d; --rate-limit-tool-calls); nothing was run, retry in %s",
				call.Params.Name, formatRate(lim.rate), int(lim.burst), roundWait(wait))}
		}
	}
}

// limiter is a token bucket per key, at most max keys, the least
// recently used forgotten first. One mutex guards it all: each take is a
// map lookup and a few float operations.
type limiter struct {
	rate, burst float64
	max         int
	now         func() time.Time

	mu      sync.Mutex
	buckets map[string]*list.Element // of *bucket
	lru     list.List                // front: most recently used
}

type bucket struct {
	key    string
	tokens float64
	last   time.Time
}

func newLimiter(rate float64, burst, maxKeys int, now func() time.Time) *limiter {
	return &limiter{rate: rate, burst: float64(burst), max: maxKeys, now: now, buckets: map[string]*list.Element{}}
}

// take takes a token of key's bucket, or says how long until there is one.
func (l *limiter) take(key string) (wait time.Duration, ok bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e, found := l.buckets[key]
	if !found {
		if l.lru.Len() >= l.max {
			oldest := l.lru.Back()
			delete(l.buckets, oldest.Value.(*bucket).key)
			l.lru.Remove(oldest)
		}
		e = l.lru.PushFront(&bucket{key: key, tokens: l.burst, last: now})
		l.buckets[key] = e
	} else {
		l.lru.MoveToFront(e)
	}
	b := e.Value.(*bucket)
	if d := now.Sub(b.last); d > 0 { // a clock stepping back adds nothing
		b.tokens = min(l.burst, b.tokens+d.Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second)), false
}

// len is the number of keys tracked.
func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
