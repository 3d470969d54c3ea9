package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rpcReply is one HTTP answer to a JSON-RPC POST.
type rpcReply struct {
	status    int
	sessionID string
	raw       string // the JSON-RPC message (from a JSON body or the SSE data line); "" when none
	body      string // the whole body
}

// rpcPost sends body to url as a client of the given era would: with the
// session id (if any) and, for the stateless era, its version header.
func rpcPost(t testing.TB, url, sessionID, version, body string) rpcReply {
	t.Helper()
	return rpcPostWith(t, http.DefaultClient, url, sessionID, version, body)
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.2 stands for another host).
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}

// rpcPostWith is rpcPost through hc.
func rpcPostWith(t testing.TB, hc *http.Client, url, sessionID, version, body string) rpcReply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set(sessionHeader, sessionID)
	}
	if version != "" {
		// The stateless era repeats the method and the tool's name in
		// headers, for proxies.
		req.Header.Set("Mcp-Protocol-Version", version)
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(body), &m) == nil {
			req.Header.Set("Mcp-Method", m.Method)
			if m.Params.Name != "" {
				req.Header.Set("Mcp-Name", m.Params.Name)
			}
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", body, err)
	}
	r := rpcReply{status: resp.StatusCode, sessionID: resp.Header.Get(sessionHeader), body: string(all)}
	r.raw = strings.TrimSpace(r.body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.raw = ""
		for line := range strings.SplitSeq(r.body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"jsonrpc"`) {
				r.raw = data
			}
		}
	}
	return r
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// statelessMeta is the _meta member every stateless-era request carries.
const statelessMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + statelessEra +
	`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

// rawSession opens a 2025-era session with plain HTTP and returns its id.
func rawSession(t testing.TB, url string) string {
	t.Helper()
	r := rpcPost(t, url, "", "", initializeBody)
	if r.status != http.StatusOK || r.sessionID == "" {
		t.Fatalf("initialize: %d %q", r.status, r.body)
	}
	if n := rpcPost(t, url, r.sessionID, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); n.status >= 300 {
		t.Fatalf("initialized: %d %q", n.status, n.body)
	}
	return r.sessionID
}

// rpcError decodes a JSON-RPC error answer; ok is false for a result.
func rpcError(t testing.TB, raw string) (id json.RawMessage, code int, msg string, ok bool) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("answer %q is not a JSON-RPC message: %v", raw, err)
	}
	if m.Error == nil {
		return m.ID, 0, "", false
	}
	return m.ID, m.Error.Code, m.Error.Message, true
}

// TestHTTPEnvelopeDuplicateKeys: a key given twice anywhere in a request
// is an Invalid Request before the SDK decodes it (the SDK would run the
// last one while a proxy reads the first), in both protocol eras.
func TestHTTPEnvelopeDuplicateKeys(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)
	sid := rawSession(t, url)
	for _, tc := range []struct {
		name, body, path string
	}{
		{"tool name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{},"name":"pacto_create"}}`, "params.name"},
		{"method", `{"jsonrpc":"2.0","id":7,"method":"tools/list","method":"tools/call","params":{"name":"pacto_server_info","arguments":{}}}`, "method"},
		{"params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{}},"params":{"name":"pacto_create","arguments":{}}}`, "params"},
		{"arguments", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{},"arguments":{"x":1}}}`, "params.arguments"},
		{"deep inside arguments", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_check","arguments":{"path":".","opts":[{"a":1,"a":2}]}}}`, "params.arguments.opts[0].a"},
		{"_meta", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"progressToken":1,"progressToken":2}}}`, "params._meta.progressToken"},
		{"batch element", `[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","id":8,"method":"ping","id":9}]`, "[1].id"},
	} {
		for _, era := range []struct{ sid, version string }{{sid, ""}, {"", statelessEra}} {
			t.Run(tc.name+" "+era.version, func(t *testing.T) {
				r := rpcPost(t, url, era.sid, era.version, tc.body)
				if r.status != http.StatusBadRequest {
					t.Fatalf("status %d, body %q; want 400 Invalid Request", r.status, r.body)
				}
				id, code, msg, isErr := rpcError(t, r.raw)
				if !isErr || code != codeInvalidRequest || !strings.Contains(msg, fmt.Sprintf("key %q appears twice", tc.path)) {
					t.Errorf("answer %q; want code %d naming %s", r.raw, codeInvalidRequest, tc.path)
				}
				if want := "7"; tc.path != "[1].id" && string(id) != want {
					t.Errorf("id %s, want %s", id, want)
				}
			})
		}
	}
	// The same request without the duplicate is served.
	r := rpcPost(t, url, sid, "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{}}}`)
	if _, _, _, isErr := rpcError(t, r.raw); r.status != http.StatusOK || isErr {
		t.Errorf("clean call: %d %q", r.status, r.body)
	}
}

// TestHTTPIDsKeptExactly: every id the server answers is the id sent, byte
// for byte; one the SDK would change (it decodes ids through float64) is
// refused with that exact id instead of answered with another.
func TestHTTPIDsKeptExactly(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)
	sid := rawSession(t, url)
	for _, tc := range []struct {
		id     string
		served bool
	}{
		{`42`, true},
		{`-7`, true},
		{`9007199254740991`, true},
		{`"1e308"`, true},
		{`"req-ü-1"`, true},
		{`1e308`, false},
		{`-1e308`, false},
		{`9007199254740993`, false},
		{`1.5`, false},
		{`10E2`, false},
		{`1.0`, false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r := rpcPost(t, url, sid, "", `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"tools/list"}`)
			id, code, msg, isErr := rpcError(t, r.raw)
			if string(id) != tc.id {
				t.Errorf("answered id %s, sent %s (%d %q)", id, tc.id, r.status, r.body)
			}
			switch {
			case tc.served && (isErr || r.status != http.StatusOK):
				t.Errorf("not served: %d %q", r.status, r.body)
			case !tc.served && (!isErr || code != codeInvalidRequest || !strings.Contains(msg, "use a string id")):
				t.Errorf("answer %d %q; want Invalid Request saying which ids are accepted", r.status, r.raw)
			}
		})
	}
}

// TestHTTPBatchIDs: the 2025 era accepts JSON-RPC batches; an element
// whose id would be changed refuses the whole batch, naming the element.
func TestHTTPBatchIDs(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)
	sid := rawSession(t, url)
	r := rpcPost(t, url, sid, "", `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":1e308,"method":"ping"}]`)
	_, code, msg, isErr := rpcError(t, r.raw)
	if r.status != http.StatusBadRequest || !isErr || code != codeInvalidRequest || !strings.Contains(msg, "batch element 1: id 1e308") {
		t.Errorf("batch with an inexact id: %d %q", r.status, r.body)
	}
	if r := rpcPost(t, url, sid, "", `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":"six","method":"ping"}]`); r.status != http.StatusOK ||
		!strings.Contains(r.body, `"id":5,`) || !strings.Contains(r.body, `"id":"six",`) {
		t.Errorf("batch with exact ids: %d %q", r.status, r.body)
	}
}

// blockingTool is a read-only tool that returns once release is closed
// (or after hold, when release is nil), and counts the calls it started.
func blockingTool(t testing.TB, started chan<- struct{}, release <-chan struct{}, hold time.Duration) *tool {
	t.Helper()
	tl, err := newTool(toolSpec{name: "pacto_test_block", title: "Block", description: "Blocks for tests.", hints: hints{readOnly: true}},
		func(ctx context.Context, in echoArgs) (echoOut, string, error) {
			if started != nil {
				started <- struct{}{}
			}
			if release != nil {
				select {
				case <-release:
				case <-ctx.Done():
				}
			} else {
				time.Sleep(hold)
			}
			return echoOut{Greeting: "done " + in.Name + strings.Repeat(".", in.Count)}, "done", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// TestHTTPSessionLimit: at MaxSessions a new session evicts the one idle
// longest; when every session is busy a new one is refused with a clear
// error, and the busy ones keep working.
func TestHTTPSessionLimit(t *testing.T) {
	started, release := make(chan struct{}, 8), make(chan struct{})
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxSessions: 3}})
	addTestTool(t, s, blockingTool(t, started, release, 0))
	url := serveHTTP(t, s)

	var ids []string
	for range 5 {
		ids = append(ids, rawSession(t, url))
	}
	if n := s.sessions.len(); n != 3 {
		t.Errorf("sessions held: %d, want 3", n)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for i, id := range ids {
		r := rpcPost(t, url, id, "", list)
		if evicted := i < 2; evicted != (r.status == http.StatusNotFound) {
			t.Errorf("session %d: status %d (evicted: %v)", i, r.status, evicted)
		}
	}

	// Every remaining session busy: a fourth is refused, not evicting one.
	var wg sync.WaitGroup
	for _, id := range ids[2:] {
		wg.Go(func() {
			r := rpcPost(t, url, id, "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pacto_test_block","arguments":{"name":"x"}}}`)
			if _, _, _, isErr := rpcError(t, r.raw); r.status != http.StatusOK || isErr {
				t.Errorf("busy session's call: %d %q", r.status, r.body)
			}
		})
	}
	for range 3 {
		<-started
	}
	// From another address, so the caller's own quota is not what stops it.
	r := rpcPostWith(t, clientFrom("127.0.0.2"), url, "", "", initializeBody)
	_, code, msg, isErr := rpcError(t, r.raw)
	if r.status != http.StatusServiceUnavailable || !isErr || code != codeUnavailable || !strings.Contains(msg, "too many sessions: all 3 are busy") {
		t.Errorf("initialize with every session busy: %d %q", r.status, r.body)
	}
	close(release)
	wg.Wait()
	if r := rpcPost(t, url, "", "", initializeBody); r.status != http.StatusOK {
		t.Errorf("initialize once a session is idle again: %d %q", r.status, r.body)
	}
}

// dialSlow opens a connection that sends headers announcing a body and
// then only its first byte.
func dialSlow(t testing.TB, url string) net.Conn {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Endpoint)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{", Endpoint, addr)
	return c
}

// closedByServer reports whether the server closed c (EOF or reset)
// within wait, reading and discarding whatever it sent first.
func closedByServer(c net.Conn, wait time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return true
}

// TestHTTPSlowBodyTimesOut: a client trickling its body is cut off by
// ReadTimeout, not held forever.
func TestHTTPSlowBodyTimesOut(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{ReadTimeout: 300 * time.Millisecond}})
	url := serveHTTP(t, s)
	c := dialSlow(t, url)
	if !closedByServer(c, 10*time.Second) {
		t.Error("a connection sending its body slowly was still open after 10s")
	}
}

// TestHTTPReadTimeoutSparesLongCalls: ReadTimeout bounds reading the
// request only; a call that runs longer still writes its full result.
func TestHTTPReadTimeoutSparesLongCalls(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{ReadTimeout: 200 * time.Millisecond}})
	addTestTool(t, s, blockingTool(t, nil, nil, 700*time.Millisecond))
	url := serveHTTP(t, s)
	sid := rawSession(t, url)
	r := rpcPost(t, url, sid, "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pacto_test_block","arguments":{"name":"long"}}}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, "done long") {
		t.Errorf("a call longer than ReadTimeout: %d %q", r.status, r.body)
	}
}

// TestHTTPConnectionLimit: at MaxConnections, slow clients give their
// slots to new ones, so a legitimate client is served while many slow
// connections are held; when every slot is serving a call, a new
// connection is answered 503.
func TestHTTPConnectionLimit(t *testing.T) {
	started, release := make(chan struct{}, 8), make(chan struct{})
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxConnections: 4}})
	addTestTool(t, s, blockingTool(t, started, release, 0))
	url := serveHTTP(t, s)
	var slow []net.Conn
	for range 20 {
		slow = append(slow, dialSlow(t, url))
	}
	sid := rawSession(t, url)
	if r := rpcPost(t, url, sid, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.status != http.StatusOK {
		t.Fatalf("legitimate client beside 20 slow connections: %d %q", r.status, r.body)
	}
	for i, c := range slow[:10] {
		if !closedByServer(c, 5*time.Second) {
			t.Errorf("slow connection %d (of the oldest) still open", i)
		}
	}

	// Four calls in progress on four connections: no slot can be freed.
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	var wg sync.WaitGroup
	sids := make([]string, 4)
	for i := range sids {
		sids[i] = rawSession(t, url)
	}
	http.DefaultClient.CloseIdleConnections()
	for _, sid := range sids {
		wg.Go(func() {
			body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pacto_test_block","arguments":{"name":"x"}}}`
			hdr := http.Header{}
			hdr.Set("Content-Type", "application/json")
			hdr.Set("Accept", "application/json, text/event-stream")
			hdr.Set(sessionHeader, sid)
			// A fresh connection may lose its slot to another fresh one
			// before its request was read, or find every slot serving;
			// a client retries.
			var resp *http.Response
			var err error
			for range 100 {
				req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
				req.Header = hdr
				if resp, err = tr.RoundTrip(req); err == nil && resp.StatusCode != http.StatusServiceUnavailable {
					break
				}
				if err == nil {
					resp.Body.Close()
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				t.Errorf("call: %v", err)
				return
			}
			all, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(all), "done x") {
				t.Errorf("call: %d %q", resp.StatusCode, all)
			}
		})
	}
	for range 4 {
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatal("four calls did not start")
		}
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Endpoint)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(status, "HTTP/1.1 503") {
		t.Errorf("connection beyond the limit with every slot serving: %q, want 503", status)
	}
	close(release)
	wg.Wait()
}

// TestHTTPShutdownLosesNoResponse: calls in progress when shutdown starts
// all get their full responses (both eras); Serve then returns.
func TestHTTPShutdownLosesNoResponse(t *testing.T) {
	started := make(chan struct{}, 64)
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{DrainTimeout: 20 * time.Second}})
	addTestTool(t, s, blockingTool(t, started, nil, 400*time.Millisecond))
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + Endpoint
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	const calls = 20
	sids := make([]string, calls)
	for i := range sids {
		sids[i] = rawSession(t, url)
	}
	// An idle session with a standalone stream open must not hold the
	// drain up.
	ctxSSE, stopSSE := context.WithCancel(t.Context())
	defer stopSSE()
	cs, err := httpClient(ctxSSE, t, url, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	results := make(chan rpcReply, calls)
	for i := range calls {
		go func() {
			sid, version := sids[i], ""
			if i%2 == 1 {
				sid, version = "", statelessEra
			}
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"pacto_test_block","arguments":{"name":"c%d","count":20000}%s}}`,
				100+i, i, map[bool]string{true: statelessMeta}[version != ""])
			results <- rpcPost(t, url, sid, version, body)
		}()
	}
	for range calls {
		<-started
	}
	cancel()
	for range calls {
		r := <-results
		var m struct {
			ID     int `json:"id"`
			Result struct {
				StructuredContent echoOut `json:"structuredContent"`
			} `json:"result"`
		}
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &m) != nil ||
			m.Result.StructuredContent.Greeting != fmt.Sprintf("done c%d%s", m.ID-100, strings.Repeat(".", 20000)) {
			t.Errorf("a call in progress at shutdown got %d with %d bytes: %.200q", r.status, len(r.body), r.body)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after the calls finished")
	}
}

// TestHTTPDrainIsBounded: a call that never finishes cannot hold shutdown
// beyond DrainTimeout, and many open sessions do not slow it.
func TestHTTPDrainIsBounded(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{DrainTimeout: 300 * time.Millisecond, MaxSessions: 5000,
		RateLimit: RateLimitOptions{RequestRate: -1}}}) // 2000 sessions from one address at once
	addTestTool(t, s, blockingTool(t, started, release, 0))
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + Endpoint
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	n := 2000
	if testing.Short() {
		n = 200
	}
	for range n {
		if r := rpcPost(t, url, "", "", initializeBody); r.status != http.StatusOK {
			t.Fatalf("initialize: %d", r.status)
		}
	}
	sid := rawSession(t, url)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pacto_test_block","arguments":{"name":"x"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(sessionHeader, sid)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		t.Logf("shutdown with %d sessions and a stuck call: %v", n+1, time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return within 15s of shutdown with DrainTimeout 300ms")
	}
}

// BenchmarkSessionTable measures one session's life in the table (reserve
// with eviction, initialize, a request, idle) at different table sizes,
// with every session one caller's (owners=1, its quota the table's size:
// it evicts its own) or each its own caller's (owners=all, quota 1): the
// cost per operation must not grow with the number of sessions.
func BenchmarkSessionTable(b *testing.B) {
	for _, size := range []int{1_000, 100_000} {
		for _, shared := range []bool{true, false} {
			name := fmt.Sprintf("sessions=%d/owners=all", size)
			if shared {
				name = fmt.Sprintf("sessions=%d/owners=1", size)
			}
			b.Run(name, func(b *testing.B) {
				quota := 1
				if shared {
					quota = size
				}
				owner := func(i int) string {
					if shared {
						return "one"
					}
					return fmt.Sprintf("o%d", i)
				}
				tab := newSessionTable(size, quota, time.Hour, func(context.Context, string) {})
				for i := range size {
					id := fmt.Sprintf("s%d", i)
					if _, err := tab.reserve(owner(i)); err != nil {
						b.Fatal(err)
					}
					tab.initialized(id)
					tab.created(owner(i), id)
				}
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					id := fmt.Sprintf("n%d", n)
					n++
					if _, err := tab.reserve(owner(size + n)); err != nil { // evicts the oldest idle one
						b.Fatal(err)
					}
					tab.initialized(id)
					tab.created(owner(size+n), id)
					if tab.acquire(id) {
						tab.release(id, false)
					}
				}
				if got := tab.len(); got != size {
					b.Fatalf("table holds %d, want %d", got, size)
				}
			})
		}
	}
}

// closeRecorder records, for each response, whether the server closes the
// connection after it.
type closeRecorder struct {
	mu     sync.Mutex
	closes []bool
}

func (c *closeRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		c.mu.Lock()
		c.closes = append(c.closes, resp.Close)
		c.mu.Unlock()
	}
	return resp, err
}

func (c *closeRecorder) last() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closes[len(c.closes)-1]
}

// TestHTTPDrainDelayKeepsServing: after shutdown starts, for DrainDelay
// the server still answers calls, each answer closing its connection (a
// kept-alive client reconnects, through a Service to another replica);
// only then does it drain and Serve return.
func TestHTTPDrainDelayKeepsServing(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{DrainDelay: 2 * time.Second}})
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + Endpoint
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()

	rec := &closeRecorder{}
	cs, err := httpClient(t.Context(), t, url, "2026-07-28", &http.Client{Transport: rec})
	if err != nil {
		t.Fatal(err)
	}
	info := &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}}
	if _, err := cs.CallTool(t.Context(), info); err != nil {
		t.Fatal(err)
	}
	if rec.last() {
		t.Fatal("before shutdown an answer closed its connection")
	}
	cancel()
	// Serve sees ctx done at once; the calls below are within the delay.
	time.Sleep(100 * time.Millisecond)
	for i := range 3 {
		if res, err := cs.CallTool(t.Context(), info); err != nil || res.IsError {
			t.Fatalf("call %d in the drain delay: %v %+v", i, err, res)
		}
		if !rec.last() {
			t.Errorf("call %d in the drain delay: its answer kept the connection open", i)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return within 30s of shutdown with DrainDelay 2s")
	}
}
