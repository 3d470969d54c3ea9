// Package tokenbucket is the one rate bound of the operator's API calls:
// the injection webhook's reads of the API server and the TokenReviews of
// /mcp's Kubernetes identity. It imports nothing of the module.
package tokenbucket

import (
	"sync"
	"time"
)

// Bucket admits rate events a second on average, burst at once.
type Bucket struct {
	rate, burst float64
	now         func() time.Time

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// New is a full Bucket reading the time from now.
func New(rate float64, burst int, now func() time.Time) *Bucket {
	return &Bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now(), now: now}
}

// Allow takes one token if there is one.
func (b *Bucket) Allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
