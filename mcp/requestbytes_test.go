package mcp

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// heldRequest is a POST whose headers were sent with a Content-Length
// and whose body never is: what a hostile caller does to make the server
// hold a request's bytes.
type heldRequest struct {
	conn net.Conn
}

func holdRequest(t *testing.T, url, token string, contentLength int) *heldRequest {
	t.Helper()
	host := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Endpoint)
	var d net.Dialer
	conn, err := d.DialContext(t.Context(), "tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", Endpoint, host, token, contentLength)
	return &heldRequest{conn: conn}
}

// answer reads the status line of the held request's answer, which must
// come without its body having been sent.
func (h *heldRequest) answer(t *testing.T) string {
	t.Helper()
	_ = h.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(h.conn).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to a request whose body was not sent: %v", err)
	}
	return strings.TrimSpace(line)
}

// eventually repeats a small request as token until its status is want,
// and returns that answer; the held requests it waits for are taken by
// the server's handler concurrently with the test.
func eventually(t *testing.T, url, token string, want int) rpcReply {
	t.Helper()
	hc := &http.Client{Transport: bearer{token: token, next: &http.Transport{}}}
	var r rpcReply
	for range 200 {
		r = rpcPostWith(t, hc, url, "", statelessEra, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+statelessMeta[1:]+`}}`)
		if r.status == want {
			return r
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s never got %d: last %d %.300q", token, want, r.status, r.body)
	return r
}

// TestHTTPRequestBytesInFlight is a caller with a valid token (in a
// cluster: any Pod's ServiceAccount) that sends requests declaring large
// bodies and trickles them, or sends many at once: the server holds at
// most MaxRequestBytesInFlight of request bodies, one caller at most half,
// and refuses the rest at once without reading them; the other callers
// are served from what is left, and a request larger than
// MaxRequestBytes is refused before its body is read.
func TestHTTPRequestBytesInFlight(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxRequestBytes: 64 << 10, MaxRequestBytesInFlight: 128 << 10, Authenticator: tokenTable{"hostile-token": {User: "hostile"}, "other-token": {User: "other"}, "third-token": {User: "third"}}}})
	url := serveHTTP(t, s)

	// The hostile caller holds its share with one request it never finishes.
	held := holdRequest(t, url, "hostile-token", 64<<10)
	r := eventually(t, url, "hostile-token", http.StatusTooManyRequests)
	if _, code, msg, isErr := rpcError(t, r.raw); !isErr || code != codeUnavailable || !strings.Contains(msg, "--max-request-bytes-in-flight") {
		t.Errorf("the hostile caller's next request: %d %q", r.status, r.body)
	}
	// Another caller is served from its own share, then fills the rest.
	eventually(t, url, "other-token", http.StatusOK)
	holdRequest(t, url, "other-token", 64<<10)
	r = eventually(t, url, "third-token", http.StatusServiceUnavailable)
	if _, code, msg, isErr := rpcError(t, r.raw); !isErr || code != codeUnavailable || !strings.Contains(msg, "128 KiB, --max-request-bytes-in-flight") {
		t.Errorf("a third caller while the bound is held: %d %q", r.status, r.body)
	}
	// A held request that ends gives its bytes back.
	held.conn.Close()
	eventually(t, url, "third-token", http.StatusOK)

	// Larger than one request may be: refused before its body is read.
	big := holdRequest(t, url, "third-token", 64<<10+1)
	if got := big.answer(t); !strings.Contains(got, "413") {
		t.Errorf("a request declaring more than MaxRequestBytes: %q", got)
	}
}

// TestRequestBytesDefaults: the bound follows the process's memory limit,
// never admits less than one largest request, and a bound set below one
// largest request is refused naming both options.
func TestRequestBytesDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want int64
	}{
		{"16 largest requests without a memory limit", Options{HTTPOptions: HTTPOptions{MaxRequestBytes: 4 << 20}}, 64 << 20},
		{"as set", Options{HTTPOptions: HTTPOptions{MaxRequestBytes: 4 << 20, MaxRequestBytesInFlight: 5 << 20}}, 5 << 20},
	} {
		if got := requestBytesBound(&tc.opts); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if p := newRequestBytes(4<<20, 4<<20); p.perCaller != 4<<20 {
		t.Errorf("a bound of one largest request gives a caller %d, want all of it", p.perCaller)
	}
	if p := newRequestBytes(64<<20, 4<<20); p.perCaller != 8<<20 {
		t.Errorf("a caller's share of 64 MiB: %d, want an eighth: it takes eight callers to hold it all", p.perCaller)
	}
	_, err := NewServer(t.Context(), &Options{Transport: TransportHTTP, Workspace: t.TempDir(), HTTPOptions: HTTPOptions{MaxRequestBytes: 1 << 20, MaxRequestBytesInFlight: 1 << 10}})
	if err == nil || !strings.Contains(err.Error(), "MaxRequestBytesInFlight") || !strings.Contains(err.Error(), "MaxRequestBytes (1048576)") {
		t.Errorf("a bound below one request: %v", err)
	}
}
