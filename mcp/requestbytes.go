package mcp

import (
	"errors"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// requestBytes bounds the request bodies the HTTP transport holds at
// once, overall and per caller. Every POST takes its Content-Length from
// it before its body is read, and gives it back when its answer has been
// written; past either bound the request is refused at once (503, or 429
// for the caller's share, an eighth of the bound: it takes eight callers
// to hold it all), without its body being read. MaxRequestBytes
// bounds one request and MaxConnections how many are open, but neither
// bounds their sum: without this, a caller holding a valid token (in a
// cluster, any Pod's ServiceAccount) could send a handful of large
// requests at once and hold many times the process's memory limit
// (each byte of a body costs about 24 bytes while it is handled: the body
// itself, the SDK's decoded message and arguments, and an answer that may
// repeat an argument; one 4 MiB pacto_fleet_get call held 96 MiB of heap
// at its peak).
type requestBytes struct {
	max, perCaller int64

	mu     sync.Mutex
	held   int64
	caller map[string]int64

	refused, refusedCaller atomic.Int64
}

var (
	errRequestBytesFull = errors.New("request bytes in flight at the server's bound")
	errCallerBytesFull  = errors.New("request bytes in flight at the caller's bound")
)

// defaultRequestShares is, without a memory limit, how many of the
// largest requests the default bound admits at once.
const defaultRequestShares = 16

// requestBytesBound is MaxRequestBytesInFlight with its default derived:
// 1/256 of the process's memory limit (GOMEMLIMIT) when it has one, so
// that the bodies in flight, amplified, hold at most about a tenth of it
// (0.9 MiB with the chart's 230 MiB), else 16 of the largest requests;
// never less than one largest request.
func requestBytesBound(o *Options) int64 {
	n := o.MaxRequestBytesInFlight
	if n == 0 {
		n = defaultRequestShares * o.MaxRequestBytes
		if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
			n = lim / 256
		}
	}
	return max(n, o.MaxRequestBytes)
}

// callerShares is how many callers it takes to hold the whole bound:
// one caller holds at most this fraction of it.
const callerShares = 8

// newRequestBytes bounds all requests together by total and one caller's
// at an eighth of it, but never below one largest request (maxRequest).
func newRequestBytes(total, maxRequest int64) *requestBytes {
	return &requestBytes{max: total, perCaller: min(total, max(total/callerShares, maxRequest)), caller: map[string]int64{}}
}

// take holds n bytes for caller, or refuses; the returned func gives them
// back.
func (p *requestBytes) take(caller string, n int64) (func(), error) {
	if n <= 0 {
		return func() {}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.caller[caller]+n > p.perCaller:
		p.refusedCaller.Add(1)
		return nil, errCallerBytesFull
	case p.held+n > p.max:
		p.refused.Add(1)
		return nil, errRequestBytesFull
	}
	p.held += n
	p.caller[caller] += n
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.held -= n
			if p.caller[caller] -= n; p.caller[caller] <= 0 {
				delete(p.caller, caller)
			}
		})
	}, nil
}
