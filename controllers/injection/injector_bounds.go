package injection

import (
	"cmp"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the AdmissionReviews the webhook reads (Injector.MaxReviewBytes
// and Injector.ReviewBytesInFlight).
const (
	// DefaultMaxReviewBytes is the largest review read. The API server
	// decodes write requests of at most 3 MiB and stores objects of at
	// most 1.5 MiB (etcd's bound), so a review of a Pod it admits is
	// within it; controller-runtime's own bound is 7 MiB.
	DefaultMaxReviewBytes = 4 << 20
	// DefaultReviewBytesInFlight bounds the reviews read or answered at
	// once: two of the largest, or hundreds of ordinary ones (a few KiB
	// each). A review holds about two and a half times its size while it
	// is decoded and answered.
	DefaultReviewBytesInFlight = 8 << 20
)

// reviewBytes is the account of the reviews the webhook holds at once.
type reviewBytes struct {
	max, total int64

	mu   sync.Mutex
	held int64

	refused atomic.Int64
}

// bounded serves next within the review bounds: anything that reaches the
// webhook's port may post a review of its own making (the API server
// presents no client certificate), and controller-runtime reads a body
// whole, up to 7 MiB, with no bound on how many at once nor on how long a
// body may take to arrive. So a review larger than MaxReviewBytes is
// refused (413) before its body is read, one that does not fit in what
// ReviewBytesInFlight leaves is refused at once (503, and the API server
// applies the webhook's failurePolicy: an ordinary Pod is admitted), and a
// body must arrive within the API server's timeout for the call. Without
// this, a dozen concurrent made-up reviews of 7 MiB held more memory than
// the chart gives the operator.
func (in *Injector) bounded(next http.Handler) http.Handler {
	rb := &reviewBytes{max: cmp.Or(in.MaxReviewBytes, DefaultMaxReviewBytes)}
	rb.total = max(cmp.Or(in.ReviewBytesInFlight, DefaultReviewBytesInFlight), rb.max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := r.ContentLength
		switch {
		case n > rb.max:
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("the AdmissionReview is larger than %d bytes, the most this webhook reads", rb.max), http.StatusRequestEntityTooLarge)
			return
		case n < 0: // not said: as much as a review may be
			n = rb.max
		}
		if !rb.take(n) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the webhook is reading as many AdmissionReview bytes as it allows; retry shortly", http.StatusServiceUnavailable)
			return
		}
		defer rb.give(n)
		// The API server sends a review whole; a body still arriving when
		// it would have given up is not its.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(callTimeout(r)))
		r.Body = http.MaxBytesReader(w, r.Body, rb.max)
		next.ServeHTTP(w, r)
	})
}

func (rb *reviewBytes) take(n int64) bool {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if rb.held+n > rb.total {
		rb.refused.Add(1)
		return false
	}
	rb.held += n
	return true
}

func (rb *reviewBytes) give(n int64) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.held -= n
}

// callTimeout is the API server's timeout for the call (its ?timeout=
// query parameter, at most maxCallTimeout), else defaultCallTimeout.
func callTimeout(r *http.Request) time.Duration {
	d, err := time.ParseDuration(r.URL.Query().Get("timeout"))
	if err != nil || d <= 0 {
		return defaultCallTimeout
	}
	return min(d, maxCallTimeout)
}
