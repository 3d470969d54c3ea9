package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
)

// docConflict is one revision key that two or more sources delivered
// with different documents in one Collect.
type docConflict struct {
	key     string
	sources []string // ids of the sources involved, sorted
	keep    int      // index of the source whose document is kept
}

func (c docConflict) limitation(id string) fleetgraph.Limitation {
	return fleetgraph.Limitation{Code: fleetgraph.LimitRevisionDocumentConflict, Source: id, Subject: c.key,
		Message: fmt.Sprintf("sources %s delivered revision %s with different documents; the snapshot keeps one, chosen by content rather than by which source answered first", strings.Join(c.sources, ", "), c.key)}
}

// documentConflicts finds the revision keys that the collections of this
// round deliver with different documents. The kept document is the one
// with the smallest content hash, so which source finished first never
// changes the snapshot.
func documentConflicts(sources []Source, coll func(int) *Collection) map[string]docConflict {
	type seen struct {
		idx  int
		hash [32]byte
	}
	by := map[string][]seen{}
	for i := range sources {
		c := coll(i)
		if c == nil {
			continue
		}
		for _, r := range c.Revisions {
			if r == nil || r.Name == "" || r.Digest == "" {
				continue
			}
			by[r.Key()] = append(by[r.Key()], seen{i, documentHash(r)})
		}
	}
	out := map[string]docConflict{}
	for key, ss := range by {
		if len(ss) < 2 || !slices.ContainsFunc(ss[1:], func(s seen) bool { return s.hash != ss[0].hash }) {
			continue
		}
		c := docConflict{key: key, keep: ss[0].idx}
		best := ss[0].hash
		for _, s := range ss {
			c.sources = append(c.sources, sources[s.idx].ID())
			if bytes.Compare(s.hash[:], best[:]) < 0 {
				best, c.keep = s.hash, s.idx
			}
		}
		slices.Sort(c.sources)
		c.sources = slices.Compact(c.sources)
		out[key] = c
	}
	return out
}

// documentHash hashes what a source derived from a revision, leaving out
// what differs between sources by nature: which source it is, when it was
// read, where it was read from and the reference it was reached by.
func documentHash(r *fleetgraph.Revision) [32]byte {
	d := *r
	d.Source, d.Location, d.Scopes = "", "", nil
	d.RequestedRef, d.ResolvedRef = "", ""
	d.FetchedAt = time.Time{}
	b, _ := json.Marshal(&d) // plain fields: cannot fail
	return sha256.Sum256(b)
}
