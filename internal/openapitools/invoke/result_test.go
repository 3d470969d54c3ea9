package invoke

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// rawUpstream serves every connection with fn on a real loopback socket,
// so a test can send what no well-behaved server would: a body shorter
// than its Content-Length, a chunked body that stops, a reset.
func rawUpstream(t *testing.T, fn func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				// Read the request head before answering.
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				fn(c.(*net.TCPConn))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestIncompleteBodiesAreErrors is issue 10, item 6: an upstream that
// announces Content-Length: 100000, sends 11 bytes and resets was reported
// as status 200, truncated false, no isError, body {"partial":.
func TestIncompleteBodiesAreErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(c *net.TCPConn)
	}{
		{name: "short read then reset", fn: func(c *net.TCPConn) {
			_, _ = fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"partial\":")
			_ = c.SetLinger(0) // close with RST
		}},
		{name: "short read then close", fn: func(c *net.TCPConn) {
			_, _ = fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"partial\":")
		}},
		{name: "chunked body that stops", fn: func(c *net.TCPConn) {
			_, _ = fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nb\r\n{\"partial\":\r\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := projectStyles(t, &openapitools.Options{BaseURL: rawUpstream(t, tc.fn)})
			res, err := callTool(t, c, "big", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError() || !res.Truncated || res.Status != 200 || !strings.HasPrefix(res.Failure, "the response body was cut short: ") || res.Body != `{"partial":` {
				t.Errorf("got status %d, isError %v, truncated %v, failure %q, body %#v; want 200, an error, truncated, a failure and the 11 bytes as text",
					res.Status, res.IsError(), res.Truncated, res.Failure, res.Body)
			}
		})
	}
}

// TestCapCoversTheEncodedResult is issue 10, item 7: the byte cap counted
// the raw body only, so megabytes of headers or of bytes that JSON escapes
// six-fold (control characters, <, >, &) gave results many times the cap.
func TestCapCoversTheEncodedResult(t *testing.T) {
	const limit = 64 << 10
	for _, tc := range []struct {
		name      string
		handler   http.HandlerFunc
		truncated bool
	}{
		{name: "megabytes of headers", truncated: true, handler: func(w http.ResponseWriter, r *http.Request) {
			for i := range 2000 {
				w.Header().Set(fmt.Sprintf("X-Pad-%04d", i), strings.Repeat("h", 1000))
			}
			_, _ = w.Write([]byte("ok"))
		}},
		{name: "control bytes", truncated: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(strings.Repeat("\x01", limit)))
		}},
		{name: "JSON full of HTML characters", truncated: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"a":"` + strings.Repeat("<&>", limit/4) + `"}`))
		}},
		{name: "binary", truncated: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte(strings.Repeat("\xff\xfe", limit/2)))
		}},
		{name: "multi-byte text cut inside a character", truncated: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte(strings.Repeat("é", limit)))
		}},
		{name: "JSON that fits stays JSON", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"n": 9007199254740993, "s": "<b>"}`))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			t.Cleanup(srv.Close)
			c := projectStyles(t, &openapitools.Options{BaseURL: srv.URL, MaxResponseBytes: limit})
			res, err := callTool(t, c, "big", `{}`)
			if err != nil {
				t.Fatal(err)
			}
			enc, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) > limit {
				t.Errorf("encoded result is %d bytes, over the cap of %d", len(enc), limit)
			}
			if res.Truncated != tc.truncated || res.IsError() {
				t.Errorf("truncated %v, isError %v; want truncated %v and no error", res.Truncated, res.IsError(), tc.truncated)
			}
			if tc.truncated && len(enc) < limit/2 {
				t.Errorf("encoded result is %d bytes: the cap of %d was not used", len(enc), limit)
			}
			if !tc.truncated {
				if raw, ok := res.Body.(json.RawMessage); !ok || string(raw) != `{"n":9007199254740993,"s":"\u003cb\u003e"}` {
					t.Errorf("body = %#v, want the compact JSON value", res.Body)
				}
			}
		})
	}
}

// TestJSONLenCountsAsMarshal holds fit's counted header lengths to what
// json.Marshal writes: escapes, HTML characters, line separators, bytes
// that are not UTF-8, empty and nil lists.
func TestJSONLenCountsAsMarshal(t *testing.T) {
	strs := []string{"", "plain", `q"b\s`, "\n\r\t\b\f\x00\x1f\x7f", "<a>&", "\u2028\u2029", "é漢字🙂", "\xff\xfe", "x\xe2\x82", "Content-Type"}
	for _, s := range strs {
		want, _ := json.Marshal(s)
		if got := jsonStringLen(s); got != len(want) {
			t.Errorf("jsonStringLen(%q) = %d; json.Marshal writes %d bytes (%s)", s, got, len(want), want)
		}
	}
	for _, v := range [][]string{nil, {}, {""}, strs, {"a", "b"}} {
		want, _ := json.Marshal(v)
		if got := jsonStringsLen(v); got != len(want) {
			t.Errorf("jsonStringsLen(%q) = %d; json.Marshal writes %d bytes (%s)", v, got, len(want), want)
		}
	}
}
