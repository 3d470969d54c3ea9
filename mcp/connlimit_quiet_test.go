package mcp

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// TestQuietedWaitsForTheWholeResponse: a connection a handler marked
// serving keeps the limiter from being quiet until its response has been
// written in full and the connection is idle, not merely until the
// handler has returned; the drain closes connections only then.
func TestQuietedWaitsForTheWholeResponse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := newConnLimiter(ln, 8)
	entered, release := make(chan struct{}), make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			markServing(r)
			close(entered)
			<-release
			_, _ = io.WriteString(w, "answer")
		}),
		ConnState:   lim.connState,
		ConnContext: withConn,
	}
	go func() { _ = srv.Serve(lim) }()
	t.Cleanup(func() { _ = srv.Close() })

	select {
	case <-lim.quieted():
	default:
		t.Fatal("quiet is not closed with no connection serving")
	}
	got := make(chan string, 1)
	go func() {
		res, err := http.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		got <- string(b)
	}()
	<-entered
	quiet := lim.quieted()
	select {
	case <-quiet:
		t.Fatal("quiet while a handler is serving")
	default:
	}
	close(release)
	if b := <-got; b != "answer" {
		t.Fatalf("response %q", b)
	}
	<-quiet // the connection is idle again: no longer serving
	lim.mu.Lock()
	n := lim.serving
	lim.mu.Unlock()
	if n != 0 {
		t.Fatalf("serving %d after the answer, want 0", n)
	}
}
