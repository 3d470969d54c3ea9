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
// resolves the first catalog with ctx before it returns.
func NewLive(ctx context.Context, opts *Options) (*Live, error) {
	l, err := NewResolvingLive(opts)
	if err != nil {
		return nil, err
	}
	l.Refresh(ctx)
	return l, nil
}

// NewResolvingLive checks opts (as [Build] does) and returns at once,
// resolving nothing: until the first [Live.Refresh] (or [Live.Run], which
// starts with one) has finished, Current is a placeholder that lists
// every root as RESOLVING under a RESOLVING limitation, completeness
// partial, so that a server can answer before its registries have.
func NewResolvingLive(opts *Options) (*Live, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	l := &Live{opts: o}
	l.cur.Store(resolvingCatalog(&l.opts))
	return l, nil
}

// resolvingCatalog is the placeholder of a catalog not resolved yet.
func resolvingCatalog(o *Options) *Catalog {
	b := newBuilder(o, nil, nil)
	for i, ref := range o.Roots {
		b.roots = append(b.roots, Root{ID: i, RequestedRef: ref,
			Reason: &Reason{Code: ReasonResolving, Message: "not resolved yet: the catalog is being resolved for the first time"}})
	}
	b.limit(Limitation{Code: LimitResolving,
		Message: "the catalog is being resolved for the first time: nothing is known yet, so a revision that is not here is unknown, not absent; read it again shortly"})
	c := b.finish()
	c.resolving = true
	return c
}

// Current returns the catalog published last. Readers load it once per
// request: it never changes under them.
func (l *Live) Current() *Catalog { return l.cur.Load() }

// Refresh resolves the catalog again with ctx and publishes it if its id
// changed; it returns the current catalog and whether it changed. A
// refresh that ctx cut short publishes nothing when a resolved catalog
// exists: the last complete resolution stands rather than one stopped
// half-way. It does replace the RESOLVING placeholder, since what was
// resolved before the cut is more than nothing.
func (l *Live) Refresh(ctx context.Context) (*Catalog, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]*loaded{}
	c := build(ctx, &l.opts, l.content, seen)
	old := l.cur.Load()
	if !old.resolving && ctx.Err() != nil {
		return old, false
	}
	l.content = seen
	if old.ID() == c.ID() {
		return old, false
	}
	l.cur.Store(c)
	return c, true
}

// Run refreshes every interval until ctx is done, each refresh bounded by
// timeout (0: the interval; both 0: unbounded); while Current is the RESOLVING placeholder
// it resolves at once, without waiting for the first tick. onChange, when
// set, is called after a refresh that published a new catalog. Run
// returns when ctx is done; an interval of zero or less returns after
// that first resolution, if any.
func (l *Live) Run(ctx context.Context, interval, timeout time.Duration, onChange func(*Catalog)) {
	if timeout <= 0 {
		timeout = interval
	}
	refresh := func() {
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			rctx, cancel = context.WithTimeout(ctx, timeout)
		}
		c, changed := l.Refresh(rctx)
		cancel()
		if changed && onChange != nil {
			onChange(c)
		}
	}
	if l.Current().resolving && ctx.Err() == nil {
		refresh()
	}
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			refresh()
		}
	}
}
