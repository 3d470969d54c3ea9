package mcp

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// connLimiter bounds the connections a listener hands out. A connection is
// "waiting" from accept until its request (headers and body) has been read,
// and again while idle between requests; it is "serving" while a handler
// works for it. At the limit, a new connection takes the slot of the one
// that has been waiting longest (a slow or idle client gives way to a new
// one); when every slot is serving, the new connection is answered 503 and
// closed. Both are O(1): waiting connections are a list in the order they
// started waiting.
type connLimiter struct {
	net.Listener
	max int

	mu      sync.Mutex
	open    int
	waiting list.List // of *limitedConn; front has waited longest
	// serving counts the connections a handler has marked serving whose
	// response is not yet written in full (not idle or closed again);
	// quiet are the channels to close when it falls to zero.
	serving int
	quiet   []chan struct{}

	evicted, refused atomic.Int64
}

type limitedConn struct {
	net.Conn
	l        *connLimiter
	elem     *list.Element // non-nil while waiting
	released bool
	once     sync.Once
}

func newConnLimiter(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, max: max}
}

func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *limitedConn
		if l.open >= l.max {
			e := l.waiting.Front()
			if e == nil {
				l.mu.Unlock()
				l.refused.Add(1)
				go refuseConn(c)
				continue
			}
			victim = e.Value.(*limitedConn)
			l.releaseLocked(victim)
		}
		lc := &limitedConn{Conn: c, l: l}
		l.open++
		lc.elem = l.waiting.PushBack(lc)
		l.mu.Unlock()
		if victim != nil {
			l.evicted.Add(1)
			_ = victim.Conn.Close()
		}
		return lc, nil
	}
}

// releaseLocked frees c's slot; l.mu is held.
func (l *connLimiter) releaseLocked(c *limitedConn) {
	if c.released {
		return
	}
	c.released = true
	l.open--
	if c.elem != nil {
		l.waiting.Remove(c.elem)
		c.elem = nil
	} else {
		l.servedLocked()
	}
}

// servedLocked counts one serving connection done; l.mu is held.
func (l *connLimiter) servedLocked() {
	if l.serving--; l.serving == 0 {
		for _, ch := range l.quiet {
			close(ch)
		}
		l.quiet = nil
	}
}

// quieted is closed once no connection is serving: every response a
// handler started has been written in full, up to the end of its body,
// which net/http writes after the handler has returned.
func (l *connLimiter) quieted() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if l.serving == 0 {
		close(ch)
	} else {
		l.quiet = append(l.quiet, ch)
	}
	return ch
}

// setServing moves c out of (true) or to the back of (false) the waiting
// list.
func (l *connLimiter) setServing(c *limitedConn, serving bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.released {
		return
	}
	switch {
	case serving && c.elem != nil:
		l.waiting.Remove(c.elem)
		c.elem = nil
		l.serving++
	case !serving && c.elem == nil:
		c.elem = l.waiting.PushBack(c)
		l.servedLocked()
	}
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.releaseLocked(c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// connState is the http.Server hook: an idle keep-alive connection waits
// again (from now), a closed or hijacked one frees its slot.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	switch state {
	case http.StateIdle:
		l.setServing(lc, false)
	case http.StateClosed, http.StateHijacked:
		l.mu.Lock()
		l.releaseLocked(lc)
		l.mu.Unlock()
	}
}

// refuseConn answers a connection there is no slot for, briefly, and
// closes it.
func refuseConn(c net.Conn) {
	const msg = "too many connections: every slot is serving a request; retry shortly\n"
	_ = c.SetDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(msg)) + "\r\n\r\n" + msg))
	_ = c.Close()
}

type connKey struct{}

// withConn is the http.Server ConnContext hook: handlers find their
// connection to mark it serving.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// markServing marks the request's connection as serving: it cannot be
// evicted until the response has been written in full and the connection
// is idle again (connState). Outside Serve (a handler mounted on another
// server) it does nothing.
func markServing(r *http.Request) {
	if lc, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
		lc.l.setServing(lc, true)
	}
}
