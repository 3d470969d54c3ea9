package catalog

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Live keeps a catalog current: Refresh resolves the roots again and
// publishes the result when its catalogId differs, so a tag moved in the
// registry (new content) or a local root edited shows as a new catalog
// while an unchanged one keeps its id and generatedAt. Registry bundles
// already read are kept by pinned digest (only those the current catalog
// uses), so refreshing unchanged tags costs one manifest resolution per
// tag and pulls nothing. It is safe for concurrent use.
type Live struct {
	opts Options
	cur  atomic.Pointer[Catalog]

	mu      sync.Mutex // serialises refreshes
	content map[string]*loaded
}

// NewLive checks opts (as [Build] does, before any resolver call) and
// resolves the first catalog with ctx.
func NewLive(ctx context.Context, opts *Options) (*Live, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	l := &Live{opts: o}
	l.Refresh(ctx)
	return l, nil
}

// Current returns the catalog published last. Readers load it once per
// request: it never changes under them.
func (l *Live) Current() *Catalog { return l.cur.Load() }

// Refresh resolves the catalog again with ctx and publishes it if its id
// changed; it returns the current catalog and whether it changed. A
// refresh that ctx cut short publishes nothing when a catalog exists: the
// last complete resolution stands rather than one stopped half-way.
func (l *Live) Refresh(ctx context.Context) (*Catalog, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]*loaded{}
	c := build(ctx, &l.opts, l.content, seen)
	old := l.cur.Load()
	if old != nil && ctx.Err() != nil {
		return old, false
	}
	l.content = seen
	if old != nil && old.ID() == c.ID() {
		return old, false
	}
	l.cur.Store(c)
	return c, true
}

// Run refreshes every interval until ctx is done, each refresh bounded by
// timeout (0: the interval). onChange, when set, is called after a refresh
// that published a new catalog. Run returns when ctx is done; an interval
// of zero or less returns at once.
func (l *Live) Run(ctx context.Context, interval, timeout time.Duration, onChange func(*Catalog)) {
	if interval <= 0 {
		return
	}
	if timeout <= 0 {
		timeout = interval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rctx, cancel := context.WithTimeout(ctx, timeout)
			c, changed := l.Refresh(rctx)
			cancel()
			if changed && onChange != nil {
				onChange(c)
			}
		}
	}
}
