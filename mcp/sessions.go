package mcp

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const sessionHeader = "Mcp-Session-Id"

// sessionTable bounds and expires the HTTP sessions of the 2025 protocol
// era, in front of the SDK's stateful handler (which keeps every session
// until a DELETE or its own idle timer, with no limit). A session is idle
// while no request of it is in progress; idle sessions form a list in the
// order they became idle, so the oldest idle one is found, and any one is
// removed, in O(1). At the limit a new session evicts the oldest idle one;
// when every session is busy the new one is refused with a clear error.
// Idle sessions are closed after the idle timeout by one timer.
type sessionTable struct {
	max     int
	timeout time.Duration // 0: never expire
	// close ends a session in the SDK (a DELETE through its handler).
	close func(ctx context.Context, id string)
	// base is the context of closes no request asked for (expiry): the
	// first request's, detached, as closing a session must happen.
	base     context.Context
	baseOnce sync.Once

	mu       sync.Mutex
	byID     map[string]*sessionEntry
	idle     list.List // of *sessionEntry; front has been idle longest
	pending  int       // session-creating requests in progress
	timer    *time.Timer
	armed    bool
	draining bool

	evicted, expired, refused atomic.Int64
}

type sessionEntry struct {
	id       string
	busy     int           // requests in progress
	lastUsed time.Time     // when busy last dropped to 0
	elem     *list.Element // non-nil while idle
}

var errSessionsFull = errors.New("session limit reached")

func newSessionTable(max int, timeout time.Duration, closeFn func(context.Context, string)) *sessionTable {
	return &sessionTable{max: max, timeout: timeout, close: closeFn, byID: map[string]*sessionEntry{}}
}

// serve passes one request of the stateful era to next, accounting for
// the session it creates or uses.
func (t *sessionTable) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	t.baseOnce.Do(func() { t.base = context.WithoutCancel(r.Context()) })
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		victim, err := t.reserve()
		if err != nil {
			writeRPCError(w, http.StatusServiceUnavailable, nil, codeUnavailable,
				fmt.Sprintf("too many sessions: all %d are busy; retry shortly, or close sessions you no longer use (HTTP DELETE)", t.max))
			return
		}
		if victim != "" {
			t.close(context.WithoutCancel(r.Context()), victim)
		}
		next.ServeHTTP(w, r)
		t.created(w.Header().Get(sessionHeader))
		return
	}
	known := t.acquire(id)
	rec := &statusRecorder{ResponseWriter: w}
	next.ServeHTTP(rec, r)
	if known {
		gone := rec.status == http.StatusNotFound || (r.Method == http.MethodDelete && rec.status < 300)
		t.release(id, gone)
	}
}

// reserve holds a slot for a session being created, evicting the oldest
// idle session when the table is full; it returns that session's id, for
// the caller to close outside the lock.
func (t *sessionTable) reserve() (victim string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.draining {
		return "", errSessionsFull
	}
	if len(t.byID)+t.pending >= t.max {
		e := t.idle.Front()
		if e == nil {
			t.refused.Add(1)
			return "", errSessionsFull
		}
		victim = t.removeLocked(e.Value.(*sessionEntry))
		t.evicted.Add(1)
	}
	t.pending++
	return victim, nil
}

// initialized records a session the SDK has initialized (called from the
// receiving middleware while its creating request is still in progress).
func (t *sessionTable) initialized(id string) {
	if id == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.byID[id]; !ok {
		t.byID[id] = &sessionEntry{id: id, busy: 1}
	}
}

// created ends a session-creating request. A session that was not
// initialized was already closed by the SDK, and never entered the table.
func (t *sessionTable) created(id string) {
	t.mu.Lock()
	t.pending--
	t.mu.Unlock()
	if id != "" {
		t.release(id, false)
	}
}

// acquire marks a request of session id in progress; false when the table
// does not know it (the SDK will answer 404).
func (t *sessionTable) acquire(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok {
		return false
	}
	if e.elem != nil {
		t.idle.Remove(e.elem)
		e.elem = nil
	}
	e.busy++
	return true
}

// release ends a request of session id; gone forgets the session (the SDK
// no longer has it).
func (t *sessionTable) release(id string, gone bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok {
		return
	}
	if gone {
		t.removeLocked(e)
		return
	}
	if e.busy--; e.busy > 0 {
		return
	}
	e.busy = 0
	e.lastUsed = time.Now()
	e.elem = t.idle.PushBack(e)
	if t.timeout > 0 && !t.armed {
		t.armed = true
		if t.timer == nil {
			t.timer = time.AfterFunc(t.timeout, t.sweep)
		} else {
			t.timer.Reset(t.timeout)
		}
	}
}

func (t *sessionTable) removeLocked(e *sessionEntry) string {
	if e.elem != nil {
		t.idle.Remove(e.elem)
		e.elem = nil
	}
	delete(t.byID, e.id)
	return e.id
}

// sweep closes the sessions idle longer than the timeout and re-arms the
// timer for the next one to expire.
func (t *sessionTable) sweep() {
	now := time.Now()
	var expired []string
	t.mu.Lock()
	t.armed = false
	for e := t.idle.Front(); e != nil; e = t.idle.Front() {
		se := e.Value.(*sessionEntry)
		if wait := se.lastUsed.Add(t.timeout).Sub(now); wait > 0 {
			t.armed = true
			t.timer.Reset(wait)
			break
		}
		expired = append(expired, t.removeLocked(se))
	}
	t.mu.Unlock()
	t.expired.Add(int64(len(expired)))
	for _, id := range expired {
		t.close(t.base, id)
	}
}

// closeAll refuses new sessions and closes every known one; ctx bounds
// the wait.
func (t *sessionTable) closeAll(ctx context.Context) {
	t.mu.Lock()
	t.draining = true
	ids := make([]string, 0, len(t.byID))
	for id, e := range t.byID {
		ids = append(ids, id)
		t.removeLocked(e)
	}
	if t.timer != nil {
		t.timer.Stop()
	}
	t.mu.Unlock()
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		t.close(ctx, id)
	}
}

// len is the number of sessions the table holds.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

// trackInitialize is receiving middleware that enters a session into the
// table once the SDK has initialized it.
func (t *sessionTable) trackInitialize(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method == "initialize" && err == nil {
			if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
				t.initialized(ss.ID())
			}
		}
		return res, err
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController (the SDK flushes through it) reach
// the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// discardWriter is the response of a DELETE the server sends itself.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header {
	if d.h == nil {
		d.h = http.Header{}
	}
	return d.h
}
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
