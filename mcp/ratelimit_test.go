package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/spf13/pflag"
)

// rateLimited returns the CodeRateLimited error of a tools/call, or fails.
func rateLimited(t *testing.T, cs *sdk.ClientSession, tool string) rateLimitData {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != CodeRateLimited {
		t.Fatalf("call of %s over its limit: result %v, error %v; want JSON-RPC error %d", tool, res, err, CodeRateLimited)
	}
	if !strings.Contains(we.Message, "--rate-limit-tool-calls") || !strings.Contains(we.Message, tool) || !strings.Contains(we.Message, "retry in") {
		t.Errorf("rate-limit message %q: want it to name the tool, the flag and when to retry", we.Message)
	}
	var d rateLimitData
	if err := json.Unmarshal(we.Data, &d); err != nil {
		t.Fatalf("rate-limit data %s: %v", we.Data, err)
	}
	return d
}

// TestRateLimitsOverHTTP: callers A and B over real loopback HTTP, one
// of each protocol era. A's calls of one tool past its burst are refused
// with a JSON-RPC error naming the limit and when to retry, while A's
// calls of another tool and B's calls of the same tool are served; A's
// HTTP requests past the request burst are refused 429 with Retry-After
// before their body is read, while B's are still answered. Every refusal
// is counted by limit. The rates are so low that no token refills while
// the test runs, so the counts are exact.
func TestRateLimitsOverHTTP(t *testing.T) {
	for _, era := range []string{"2025-11-25", statelessEra} {
		t.Run(era, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			logs := &logSink{}
			s := newTestServer(t, &Options{Transport: TransportHTTP, Registerer: reg, Logger: logs.logger(),
				HTTPOptions: HTTPOptions{Authenticator: tokenTable{"a-token": {User: "a"}, "b-token": {User: "b"}},
					RateLimit: RateLimitOptions{RequestRate: 0.001, RequestBurst: 40, ToolCallRate: 0.001, ToolCallBurst: 3}}})
			url := serveHTTP(t, s)
			as := func(token string) *sdk.ClientSession {
				cs, err := httpClient(t.Context(), t, url, era, &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}})
				if err != nil {
					t.Fatal(err)
				}
				return cs
			}
			a, b := as("a-token"), as("b-token")
			for i := range 3 {
				if res := callTool(t, a, "pacto_server_info", map[string]any{}); res.IsError {
					t.Fatalf("A's call %d within the burst: %s", i+1, text(res))
				}
			}
			d := rateLimited(t, a, "pacto_server_info")
			if d.Limit != limitToolCalls || d.Tool != "pacto_server_info" || d.RetryAfterMs < 900_000 {
				t.Errorf("rate-limit data %+v: want limit tool_calls, the tool, and retryAfterMs of about 1000s (1 token at 0.001/s)", d)
			}
			if lines := logs.matching(`"code"="RATE_LIMITED"`); len(lines) != 1 || !strings.Contains(lines[0], `"user"="a"`) {
				t.Errorf("audit lines of refused calls: %q; want A's one", lines)
			}
			callTool(t, a, "pacto_schema", map[string]any{}) // another tool: its own bucket
			for i := range 3 {
				if res := callTool(t, b, "pacto_server_info", map[string]any{}); res.IsError {
					t.Fatalf("B's call %d beside a limited A: %s", i+1, text(res))
				}
			}
			if n := testutil.ToFloat64(s.rates.limited.WithLabelValues(limitToolCalls)); n != 1 {
				t.Errorf("tool-call refusals counted: %v, want 1", n)
			}

			// A's HTTP requests: the remaining tokens, then 429.
			type answer struct {
				status int
				header http.Header
				body   []byte
			}
			post := func(token string) answer {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+statelessEra+`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}}}`))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Protocol-Version", statelessEra)
				req.Header.Set("Mcp-Method", "tools/list")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				return answer{resp.StatusCode, resp.Header, body}
			}
			var sent, refused int
			var last answer
			for sent = 1; sent <= 60; sent++ {
				if last = post("a-token"); last.status == http.StatusTooManyRequests {
					refused++
					break
				}
			}
			if refused == 0 {
				t.Fatalf("60 requests past A's calls: none refused; want 429 within the burst of 40")
			}
			if ra, err := strconv.Atoi(last.header.Get("Retry-After")); err != nil || ra < 900 {
				t.Errorf("Retry-After %q: want whole seconds, about 1000", last.header.Get("Retry-After"))
			}
			var rpc struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(last.body, &rpc); err != nil || rpc.Error.Code != CodeRateLimited || !strings.Contains(rpc.Error.Message, "--rate-limit-requests") {
				t.Errorf("429 body %s: want a JSON-RPC error %d naming --rate-limit-requests", last.body, CodeRateLimited)
			}
			if b := post("b-token"); b.status != http.StatusOK {
				t.Errorf("B's request while A is limited: %d %s, want 200", b.status, b.body)
			}
			if n := testutil.ToFloat64(s.rates.limited.WithLabelValues(limitRequests)); n != 1 {
				t.Errorf("request refusals counted: %v, want 1", n)
			}
			t.Logf("%s: A's tool calls admitted 3 of 4, A's HTTP requests admitted until request %d (burst 40, all of A's requests counted)", era, sent)
		})
	}
}

// TestRateLimitsNotOnStdio: a client without HTTP (in memory, as stdio)
// is never limited, however low the limits.
func TestRateLimitsNotOnStdio(t *testing.T) {
	s := newTestServer(t, &Options{HTTPOptions: HTTPOptions{RateLimit: RateLimitOptions{RequestRate: 0.001, RequestBurst: 1, ToolCallRate: 0.001, ToolCallBurst: 1}}})
	cs := connect(t.Context(), t, s)
	for i := range 5 {
		if res := callTool(t, cs, "pacto_server_info", map[string]any{}); res.IsError {
			t.Fatalf("call %d: %s", i+1, text(res))
		}
	}
}

// TestLimiterFraction: a caller sending at twice the rate is refused
// the share the bucket cannot cover, exactly (a clock of the test's).
func TestLimiterFraction(t *testing.T) {
	for _, c := range []struct {
		rate, send float64 // a second
		burst      int
		seconds    int
		want       int // admitted
	}{
		{rate: 50, send: 100, burst: 100, seconds: 10, want: 100 + 50*10},
		{rate: 50, send: 50, burst: 100, seconds: 10, want: 500},
		{rate: 20, send: 1000, burst: 40, seconds: 5, want: 40 + 20*5},
	} {
		now := time.Unix(0, 0)
		l := newLimiter(c.rate, c.burst, 10, func() time.Time { return now })
		step := time.Duration(float64(time.Second) / c.send)
		total := int(c.send) * c.seconds
		admitted := 0
		for range total {
			now = now.Add(step)
			if _, ok := l.take("caller"); ok {
				admitted++
			}
		}
		if admitted < c.want-1 || admitted > c.want {
			t.Errorf("rate %v burst %d, sent %v/s for %ds: admitted %d of %d, want %d", c.rate, c.burst, c.send, c.seconds, admitted, total, c.want)
		}
		t.Logf("rate %v/s burst %d, sending %v/s for %ds: %d of %d admitted, %.1f%% limited", c.rate, c.burst, c.send, c.seconds, admitted, total, 100*float64(total-admitted)/float64(total))
	}
}

// TestLimiterBoundedUnderCallerFlood: a hostile caller presenting a
// million identities keeps at most MaxCallers buckets; a caller it
// pushed out comes back with a full bucket, and a limited caller seen
// recently is still limited.
func TestLimiterBoundedUnderCallerFlood(t *testing.T) {
	now := time.Unix(0, 0)
	l := newLimiter(1, 2, 1000, func() time.Time { return now })
	for range 2 {
		l.take("victim")
	}
	if _, ok := l.take("victim"); ok {
		t.Fatal("the victim's third call within its burst of 2 was admitted")
	}
	for i := range 1_000_000 {
		l.take(fmt.Sprint("hostile-", i))
		if i%100 == 0 {
			l.take("limited") // seen often: never the least recently used
		}
	}
	if n := l.len(); n != 1000 {
		t.Errorf("%d buckets after a million callers, want the bound 1000", n)
	}
	if _, ok := l.take("limited"); ok {
		t.Error("a caller at its limit, seen recently, was admitted after the flood")
	}
	if _, ok := l.take("victim"); !ok {
		t.Error("a caller pushed out of the map was refused; want a full bucket")
	}
}

// TestRateLimitOptionErrors: bad settings name the flag and what is accepted.
func TestRateLimitOptionErrors(t *testing.T) {
	for _, c := range []struct {
		o    RateLimitOptions
		want string
	}{
		{RateLimitOptions{RequestBurst: -1}, "RateLimit.RequestBurst"},
		{RateLimitOptions{ToolCallBurst: -3}, "RateLimit.ToolCallBurst"},
		{RateLimitOptions{MaxCallers: -1}, "RateLimit.MaxCallers"},
	} {
		_, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), HTTPOptions: HTTPOptions{RateLimit: c.o}})
		var oe *OptionError
		if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.want) || !strings.Contains(oe.Named(FlagNames), "--rate-limit") {
			t.Errorf("%+v: %v; want an OptionError naming %s and its flag", c.o, err, c.want)
		}
	}
	// A negative rate turns the limit off.
	s := newTestServer(t, &Options{HTTPOptions: HTTPOptions{RateLimit: RateLimitOptions{RequestRate: -1, ToolCallRate: -1}}})
	if s.rates.requests != nil || s.rates.toolCalls != nil {
		t.Error("negative rates: want both limits off")
	}
}

// TestRateLimitFlags: the HTTP flag group binds the limits with their
// defaults, and a parsed value reaches the options.
func TestRateLimitFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	o.BindHTTPFlags(fs)
	for name, want := range map[string]string{"rate-limit-requests": "100", "rate-limit-requests-burst": "200",
		"rate-limit-tool-calls": "50", "rate-limit-tool-calls-burst": "100", "rate-limit-callers": "10000"} {
		if f := fs.Lookup(name); f == nil || f.DefValue != want {
			t.Errorf("--%s: %v; want bound with default %s", name, f, want)
		}
	}
	if err := fs.Parse([]string{"--rate-limit-tool-calls=-1"}); err != nil || o.RateLimit.ToolCallRate != -1 {
		t.Errorf("--rate-limit-tool-calls=-1: %v, ToolCallRate %v", err, o.RateLimit.ToolCallRate)
	}
}
