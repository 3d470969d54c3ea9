package mcp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPRequestSmugglingShapes writes requests whose body framing is
// ambiguous straight to the server's socket, each followed on the same
// connection by a second request a proxy framing the body differently
// would see: every one is answered once and its connection closed, so
// the second is never read. The Transfer-Encoding ones are refused 400
// by kubepact (Go's server reads them as chunked, drops the
// Content-Length and keeps the connection open); the HTTP/1.0 one is
// answered and closed (Go's server drops its Transfer-Encoding unseen);
// the rest Go's server refuses itself.
func TestHTTPRequestSmugglingShapes(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Endpoint)
	head := "POST " + Endpoint + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(initializeBody), initializeBody)
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: " + addr + "\r\n\r\n"
	for _, tc := range []struct {
		name   string
		raw    string
		status int
		says   string // in the body of the answer
	}{
		{"Content-Length then Transfer-Encoding", head + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + smuggled,
			http.StatusBadRequest, "Transfer-Encoding is not accepted"},
		{"Transfer-Encoding then Content-Length", head + "Transfer-Encoding: chunked\r\nContent-Length: " + fmt.Sprint(len(chunked)+len(smuggled)) + "\r\n\r\n" + chunked + smuggled,
			http.StatusBadRequest, "Transfer-Encoding is not accepted"},
		{"Transfer-Encoding in another case", head + "transfer-encoding: Chunked\r\nContent-Length: 3\r\n\r\n" + chunked + smuggled,
			http.StatusBadRequest, "request-smuggling shape"},
		{"chunked alone", head + "Transfer-Encoding: chunked\r\n\r\n" + chunked + smuggled,
			http.StatusBadRequest, "send the body with a Content-Length"},
		{"HTTP/1.0 keep-alive with both", strings.Replace(head, "HTTP/1.1", "HTTP/1.0", 1) + "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: " +
			fmt.Sprint(len(initializeBody)) + "\r\n\r\n" + initializeBody + smuggled, http.StatusOK, ""},
		{"two Content-Length values (Go refuses)", head + "Content-Length: 3\r\nContent-Length: 4\r\n\r\nabcd" + smuggled, http.StatusBadRequest, ""},
		{"Transfer-Encoding gzip, chunked (Go refuses)", head + "Transfer-Encoding: gzip, chunked\r\nContent-Length: 3\r\n\r\nabc" + smuggled, http.StatusNotImplemented, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.WriteString(c, tc.raw); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.says) {
				t.Errorf("answered %d %q; want %d saying %q", resp.StatusCode, body, tc.status, tc.says)
			}
			if second, err := http.ReadResponse(br, nil); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				status := "an error"
				if second != nil {
					status = second.Status
					second.Body.Close()
				}
				t.Errorf("the connection stayed open and answered the smuggled request: %s (%v)", status, err)
			}
		})
	}
}
