package fleetgraph

import (
	"context"
	"slices"
	"sync"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/diff"
)

// maxCachedDiffs bounds the diffs a Builder keeps (each is a few
// changes, a few KiB).
const maxCachedDiffs = 64

// diffCache keeps the semantic diffs impact computed, per pair of bundle
// identities, for every snapshot of one Builder: a contract's revisions
// do not change when the fleet does, so an impact call on a new snapshot
// (or its next page) reuses the diff instead of decoding both bundles'
// specs again. An identity is the bundle's content digest, so a pair
// names one diff. Oldest entries go first.
type diffCache struct {
	mu    sync.Mutex
	m     map[[2]string][]diff.Change
	order [][2]string
}

// diff returns the changes from older to newer, computed once per pair
// of identities. A nil cache, or a bundle without an identity, computes
// every time; a failed diff is never kept.
func (c *diffCache) diff(ctx context.Context, older, newer *bundle.Bundle) ([]diff.Change, error) {
	k := [2]string{older.Identity.String(), newer.Identity.String()}
	if c == nil || k[0] == "" || k[1] == "" {
		return diff.Diff(ctx, older, newer)
	}
	c.mu.Lock()
	got, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return slices.Clone(got), nil
	}
	changes, err := diff.Diff(ctx, older, newer)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[2]string][]diff.Change{}
	}
	if _, ok := c.m[k]; !ok {
		c.m[k] = slices.Clone(changes)
		c.order = append(c.order, k)
		if len(c.order) > maxCachedDiffs {
			delete(c.m, c.order[0])
			c.order = slices.Delete(c.order, 0, 1)
		}
	}
	return changes, nil
}
