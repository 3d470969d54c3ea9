package mcp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// getStream is a client holding a session's GET stream open, as every
// 2025-era client may for the session's whole life.
type getStream struct {
	resp  *http.Response
	ended chan struct{} // closed when the server ends the stream
}

// openGetStream opens session sid's GET stream through hc and returns
// once the server has answered its headers.
func openGetStream(t *testing.T, hc *http.Client, url, sid string) *getStream {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(sessionHeader, sid)
	resp, err := hc.Do(req) //nolint:bodyclose // the stream stays open for the test; its cleanup closes it
	if err != nil {
		t.Fatalf("GET stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	g := &getStream{resp: resp, ended: make(chan struct{})}
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
		close(g.ended)
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return g
}

// TestHTTPGetStreamsDoNotPinSessions fills every session slot with
// sessions that hold their GET stream open and make no call (one raw
// HTTP client, whose stream the test watches, then two go-sdk clients
// with their standalone stream on) and then connects a new go-sdk
// client: it is served; the session idle longest is evicted, its stream
// ended and its id answered 404; the others keep theirs. Today a GET
// stream counts as a call in progress for as long as it is open, so the
// new client is refused 503.
func TestHTTPGetStreamsDoNotPinSessions(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxSessions: 3}})
	url := serveHTTP(t, s)
	first := rawSession(t, url)
	stream := openGetStream(t, &http.Client{}, url, first)
	var holders []*sdk.ClientSession
	for range 2 {
		tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{}, MaxRetries: -1}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "holder", Version: "v0"}, nil).Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		holders = append(holders, cs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.sessions.streams.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d GET streams open", s.sessions.streams.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}

	cs, err := httpClient(t.Context(), t, url, "2025-11-25", nil)
	if err != nil {
		t.Fatalf("a new client while every session holds a GET stream: %v", err)
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("tools/list of the new client: %v", err)
	}
	select {
	case <-stream.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the evicted session's GET stream was not ended")
	}
	if r := rpcPost(t, url, first, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.status != http.StatusNotFound {
		t.Errorf("the evicted session answers %d, want 404", r.status)
	}
	for i, h := range holders {
		if _, err := h.ListTools(t.Context(), nil); err != nil {
			t.Errorf("holder %d lost its session: %v", i, err)
		}
	}
}

// TestHTTPSessionQuotaPerCaller: one caller (an identity, or without
// authentication an address) holds at most MaxSessionsPerIdentity
// sessions. At its quota with every session busy its new one is refused
// 429 while another caller is served; with one of its own idle, its new
// session evicts that one and never another caller's.
func TestHTTPSessionQuotaPerCaller(t *testing.T) {
	tokens := tokenTable{"hog-token": {User: "hog"}, "alice-token": {User: "alice"}}
	for _, tc := range []struct {
		name       string
		auth       Authenticator
		hog, alice *http.Client
	}{
		{"identity", tokens, &http.Client{Transport: bearer{"hog-token", http.DefaultTransport}}, &http.Client{Transport: bearer{"alice-token", http.DefaultTransport}}},
		{"address", nil, clientFrom("127.0.0.1"), clientFrom("127.0.0.2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started, release := make(chan struct{}, 4), make(chan struct{})
			s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxSessions: 4, MaxSessionsPerIdentity: 2, Authenticator: tc.auth}})
			addTestTool(t, s, blockingTool(t, started, release, 0))
			url := serveHTTP(t, s)
			session := func(hc *http.Client) string {
				t.Helper()
				r := rpcPostWith(t, hc, url, "", "", initializeBody)
				if r.status != http.StatusOK || r.sessionID == "" {
					t.Fatalf("initialize: %d %q", r.status, r.body)
				}
				rpcPostWith(t, hc, url, r.sessionID, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				return r.sessionID
			}
			hog := []string{session(tc.hog), session(tc.hog)}
			var wg sync.WaitGroup
			for _, id := range hog {
				wg.Go(func() {
					rpcPostWith(t, tc.hog, url, id, "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"pacto_test_block","arguments":{"name":"x"}}}`)
				})
			}
			<-started
			<-started
			r := rpcPostWith(t, tc.hog, url, "", "", initializeBody)
			_, code, msg, isErr := rpcError(t, r.raw)
			if r.status != http.StatusTooManyRequests || !isErr || code != codeUnavailable || !strings.Contains(msg, "too many sessions for this caller: all 2 of its sessions are busy") {
				t.Errorf("the hog's third session: %d %q", r.status, r.body)
			}
			alice := session(tc.alice)
			close(release)
			wg.Wait()
			rpcPostWith(t, tc.hog, url, hog[1], "", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`) // hog[0] is now its idle longest

			// Both of the hog's sessions idle now: its next one evicts
			// its own oldest, although alice's is older still.
			session(tc.hog)
			if r := rpcPostWith(t, tc.hog, url, hog[0], "", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); r.status != http.StatusNotFound {
				t.Errorf("the hog's oldest session answers %d, want 404 (evicted)", r.status)
			}
			if r := rpcPostWith(t, tc.alice, url, alice, "", `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); r.status != http.StatusOK {
				t.Errorf("alice's session: %d %q", r.status, r.body)
			}
		})
	}
}

// TestHTTPGetStreamsDoNotPinConnections fills every connection slot with
// GET streams and connects a new client: it is served, taking the slot of
// the stream that has waited longest (that stream ends; its session stays
// and answers). Today a stream's connection counts as serving for as long
// as it is open, so the new connection is refused 503.
func TestHTTPGetStreamsDoNotPinConnections(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxConnections: 2}})
	url := serveHTTP(t, s)
	// Both sessions first, over one keep-alive connection: the second
	// stream then takes that connection's slot, and both slots are
	// streams.
	a, b := rawSession(t, url), rawSession(t, url)
	streamA := openGetStream(t, &http.Client{}, url, a)
	openGetStream(t, &http.Client{}, url, b)

	cs, err := httpClient(t.Context(), t, url, "2025-11-25", &http.Client{})
	if err != nil {
		t.Fatalf("a new client while every connection holds a GET stream: %v", err)
	}
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("tools/list of the new client: %v", err)
	}
	select {
	case <-streamA.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the oldest stream kept its connection")
	}
	if r := rpcPostWith(t, &http.Client{}, url, a, "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); r.status != http.StatusOK {
		t.Errorf("the session whose stream lost its connection: %d %q", r.status, r.body)
	}
}

// openListen opens a subscriptions/listen stream (for session sid, or
// stateless when sid is empty) and returns once the server has
// acknowledged it: its handler then parks until the client goes.
func openListen(t *testing.T, url, sid string, id int) *getStream {
	t.Helper()
	meta, version := "", "2025-11-25"
	if sid == "" {
		meta, version = statelessMeta, statelessEra
	}
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true}` + meta + `}}`
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", listenMethod)
	if sid != "" {
		req.Header.Set(sessionHeader, sid)
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatalf("subscriptions/listen: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("subscriptions/listen: %d, ended before it was acknowledged: %v", resp.StatusCode, err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			break
		}
	}
	g := &getStream{resp: resp, ended: make(chan struct{})}
	go func() {
		_, _ = io.Copy(io.Discard, br)
		close(g.ended)
	}()
	return g
}

// TestHTTPListenStreamsDoNotPin: subscriptions/listen, a POST whose
// answer is a stream open as long as the client likes (the 2026-07-28
// era's GET stream; 2025 sessions may send it too), pins neither a
// connection, nor a session, nor the shutdown. Today every such POST is a
// call in progress: a client holding --max-connections of them (no
// session, no quota, no token needed on loopback) has every new client
// refused 503, sessions holding one are never evicted, and a shutdown
// waits the whole drain timeout for them.
func TestHTTPListenStreamsDoNotPin(t *testing.T) {
	t.Run("connections", func(t *testing.T) {
		s := capabilityServer(t, "../examples/bundles/catalog", nil, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxConnections: 2}})
		url := serveHTTP(t, s)
		first := openListen(t, url, "", 1)
		openListen(t, url, "", 2)
		cs, err := httpClient(t.Context(), t, url, statelessEra, &http.Client{})
		if err != nil {
			t.Fatalf("a new client while every connection holds a listen stream: %v", err)
		}
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Errorf("tools/list of the new client: %v", err)
		}
		select {
		case <-first.ended:
		case <-time.After(20 * time.Second):
			t.Error("the oldest listen stream kept its connection")
		}
	})
	t.Run("sessions", func(t *testing.T) {
		s := capabilityServer(t, "../examples/bundles/catalog", nil, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxSessions: 2}})
		url := serveHTTP(t, s)
		a, b := rawSession(t, url), rawSession(t, url)
		streamA := openListen(t, url, a, 1)
		openListen(t, url, b, 2)
		cs, err := httpClient(t.Context(), t, url, "2025-11-25", &http.Client{})
		if err != nil {
			t.Fatalf("a new session while every session holds a listen stream: %v", err)
		}
		if _, err := cs.ListTools(t.Context(), nil); err != nil {
			t.Errorf("tools/list of the new client: %v", err)
		}
		select {
		case <-streamA.ended:
		case <-time.After(20 * time.Second):
			t.Error("the session idle longest kept its listen stream")
		}
		if r := rpcPost(t, url, b, "", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); r.status != http.StatusOK {
			t.Errorf("the other session: %d %q", r.status, r.body)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		var logs logSink
		s := capabilityServer(t, "../examples/bundles/catalog", nil, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{DrainTimeout: time.Minute}, Logger: logs.logger()})
		var lc net.ListenConfig
		ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
		done := make(chan error, 1)
		go func() { done <- s.Serve(ctx, ln) }()
		url := "http://" + ln.Addr().String() + Endpoint
		listen := openListen(t, url, "", 1)
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if got := logs.matching("Stopped MCP over HTTP"); len(got) != 1 || !strings.Contains(got[0], `"drained"=true`) {
			t.Errorf("shutdown with a listen stream open: %q, want it drained at once", got)
		}
		<-listen.ended
	})
}
