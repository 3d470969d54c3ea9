package mcp

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const sessionHeader = "Mcp-Session-Id"

// sessionTable bounds and expires the HTTP sessions of the 2025 protocol
// era, in front of the SDK's stateful handler (which keeps every session
// until a DELETE or its own idle timer, with no limit). A session is busy
// while a call of it (a POST or a DELETE) is in progress, and idle
// otherwise: its streams, which a client may hold open for the session's
// whole life (the GET stream, a POST of subscriptions/listen), are not
// activity, so they never keep a session from being evicted or expired
// (closing the session ends them).
// Idle sessions form a list in the order they became idle, so the oldest
// idle one is found, and any one is removed, in O(1). Each session
// belongs to the caller that created it (its identity, or without
// authentication its address), and a caller holds at most perOwner
// sessions: at that quota its new session evicts its own oldest idle
// one, or is refused (429) when all of its sessions are busy. At the
// global limit a new session evicts the oldest idle one of anyone; when
// every session is busy it is refused (503). Idle sessions are closed
// after the idle timeout by one timer.
type sessionTable struct {
	max      int
	perOwner int
	timeout  time.Duration // 0: never expire
	// close ends a session in the SDK (a DELETE through its handler).
	close func(ctx context.Context, id string)
	// base is the context of closes no request asked for (expiry): the
	// first request's, detached, as closing a session must happen.
	base     context.Context
	baseOnce sync.Once

	mu       sync.Mutex
	byID     map[string]*sessionEntry
	owners   map[string]*sessionOwner
	idle     list.List // of *sessionEntry; front has been idle longest
	pending  int       // session-creating requests in progress
	creating int       // entries of byID whose creating request is still in progress
	timer    *time.Timer
	armed    bool
	draining bool

	evicted, expired, refused, refusedOwner atomic.Int64
	streams                                 atomic.Int64 // GET streams open now
}

type sessionEntry struct {
	id       string
	owner    string        // the caller that created it ("" until created)
	creating bool          // its creating request is in progress: counted as pending
	busy     int           // calls in progress
	lastUsed time.Time     // when busy last dropped to 0
	elem     *list.Element // in the table's idle list, while idle
	ownElem  *list.Element // in its owner's idle list, while idle
}

// sessionOwner is what one caller holds.
type sessionOwner struct {
	n       int       // sessions
	pending int       // session-creating requests in progress
	idle    list.List // of *sessionEntry, its idle sessions, oldest first
}

var (
	errSessionsFull = errors.New("session limit reached")
	errOwnerFull    = errors.New("session quota of the caller reached")
)

func newSessionTable(max, perOwner int, timeout time.Duration, closeFn func(context.Context, string)) *sessionTable {
	return &sessionTable{max: max, perOwner: perOwner, timeout: timeout, close: closeFn,
		byID: map[string]*sessionEntry{}, owners: map[string]*sessionOwner{}}
}

// serve passes one request of the stateful era to next, accounting for
// the session it creates or uses. stream says the request is a stream
// (a GET, or a POST of subscriptions/listen): no activity.
func (t *sessionTable) serve(w http.ResponseWriter, r *http.Request, next http.Handler, stream bool) {
	t.baseOnce.Do(func() { t.base = context.WithoutCancel(r.Context()) })
	id := r.Header.Get(sessionHeader)
	if id == "" {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		owner := sessionOwnerOf(r)
		victim, err := t.reserve(owner)
		switch {
		case errors.Is(err, errOwnerFull):
			w.Header().Set("Retry-After", "5")
			writeRPCError(w, http.StatusTooManyRequests, nil, codeUnavailable,
				fmt.Sprintf("too many sessions for this caller: all %d of its sessions are busy; retry shortly, or close sessions it no longer uses (HTTP DELETE)", t.perOwner))
			return
		case err != nil:
			writeRPCError(w, http.StatusServiceUnavailable, nil, codeUnavailable,
				fmt.Sprintf("too many sessions: all %d are busy; retry shortly, or close sessions you no longer use (HTTP DELETE)", t.max))
			return
		}
		if victim != "" {
			t.close(context.WithoutCancel(r.Context()), victim)
		}
		next.ServeHTTP(w, r)
		t.created(owner, w.Header().Get(sessionHeader))
		return
	}
	rec := &statusRecorder{ResponseWriter: w}
	if stream {
		// A stream of server messages: no activity (see sessionTable).
		t.streams.Add(1)
		defer t.streams.Add(-1)
		next.ServeHTTP(rec, r)
		if rec.status == http.StatusNotFound {
			t.forget(id)
		}
		return
	}
	known := t.acquire(id)
	next.ServeHTTP(rec, r)
	if known {
		gone := rec.status == http.StatusNotFound || (r.Method == http.MethodDelete && rec.status < 300)
		t.release(id, gone)
	}
}

// sessionOwnerOf names who creates a session: the authenticated identity
// or, without authentication, the client's IP address (so clients behind
// one proxy share a quota).
func sessionOwnerOf(r *http.Request) string {
	if info, ok := r.Context().Value(identityKey{}).(*auth.TokenInfo); ok && info != nil {
		return "identity\x00" + info.UserID
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return "address\x00" + host
}

// reserve holds a slot for a session owner is creating: at owner's quota
// it evicts owner's oldest idle session, and at the table's limit the
// oldest idle session of anyone. It returns that session's id, for the
// caller to close outside the lock.
func (t *sessionTable) reserve(owner string) (victim string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.draining {
		return "", errSessionsFull
	}
	o := t.ownerLocked(owner)
	switch {
	case o.n+o.pending >= t.perOwner:
		e := o.idle.Front()
		if e == nil {
			t.refusedOwner.Add(1)
			t.dropOwnerLocked(owner)
			return "", errOwnerFull
		}
		victim = t.removeLocked(e.Value.(*sessionEntry))
		t.evicted.Add(1)
	case len(t.byID)-t.creating+t.pending >= t.max:
		e := t.idle.Front()
		if e == nil {
			t.refused.Add(1)
			t.dropOwnerLocked(owner)
			return "", errSessionsFull
		}
		victim = t.removeLocked(e.Value.(*sessionEntry))
		t.evicted.Add(1)
	}
	o.pending++
	t.pending++
	return victim, nil
}

func (t *sessionTable) ownerLocked(owner string) *sessionOwner {
	o, ok := t.owners[owner]
	if !ok {
		o = &sessionOwner{}
		t.owners[owner] = o
	}
	return o
}

// dropOwnerLocked forgets an owner that holds and creates nothing.
func (t *sessionTable) dropOwnerLocked(owner string) {
	if o, ok := t.owners[owner]; ok && o.n == 0 && o.pending == 0 {
		delete(t.owners, owner)
	}
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
		t.byID[id] = &sessionEntry{id: id, busy: 1, creating: true}
		t.creating++
	}
}

// created ends owner's session-creating request. A session that was not
// initialized was already closed by the SDK, and never entered the table.
func (t *sessionTable) created(owner, id string) {
	t.mu.Lock()
	t.pending--
	o := t.ownerLocked(owner)
	o.pending--
	if e, ok := t.byID[id]; ok && e.creating {
		e.creating = false
		t.creating--
		e.owner = owner
		o.n++
	}
	t.dropOwnerLocked(owner)
	t.mu.Unlock()
	if id != "" {
		t.release(id, false)
	}
}

// acquire marks a call of session id in progress; false when the table
// does not know it (the SDK will answer 404).
func (t *sessionTable) acquire(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.byID[id]
	if !ok {
		return false
	}
	t.unidleLocked(e)
	e.busy++
	return true
}

// release ends a call of session id; gone forgets the session (the SDK
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
	if o, ok := t.owners[e.owner]; ok {
		e.ownElem = o.idle.PushBack(e)
	}
	if t.timeout > 0 && !t.armed {
		t.armed = true
		if t.timer == nil {
			t.timer = time.AfterFunc(t.timeout, t.sweep)
		} else {
			t.timer.Reset(t.timeout)
		}
	}
}

// forget removes a session the SDK no longer knows.
func (t *sessionTable) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byID[id]; ok {
		t.removeLocked(e)
	}
}

func (t *sessionTable) unidleLocked(e *sessionEntry) {
	if e.elem != nil {
		t.idle.Remove(e.elem)
		e.elem = nil
	}
	if e.ownElem != nil {
		if o, ok := t.owners[e.owner]; ok {
			o.idle.Remove(e.ownElem)
		}
		e.ownElem = nil
	}
}

func (t *sessionTable) removeLocked(e *sessionEntry) string {
	t.unidleLocked(e)
	delete(t.byID, e.id)
	if e.creating {
		e.creating = false
		t.creating--
	}
	if o, ok := t.owners[e.owner]; ok && e.owner != "" {
		o.n--
		t.dropOwnerLocked(e.owner)
	}
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
