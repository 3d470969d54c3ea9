package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"
	"strconv"
)

// fingerprint is the catalog id: SHA-256 over length-prefixed fields of
// what was resolved — each revision's identity, version and rank, the
// edges, the unresolved declarations and their reason codes, conflicts,
// cycles, completeness, bounds and the limitation codes. It leaves out
// what does not change the answer's meaning: the time, the order the
// roots were given in, the references as written and local paths. So the
// same content under the same roots is the same id, and a moved tag (new
// content) is a new one.
func fingerprint(c *Catalog, lims []Limitation) string {
	h := sha256.New()
	w := func(s string) { writeField(h, s) }
	id := func(r RevisionID) { w(r.Service.Domain); w(r.Service.Name); w(r.Content.Scheme); w(r.Content.Digest) }
	n := func(i int) { w(strconv.Itoa(i)) }

	w(SchemaVersion)
	w(c.meta.Completeness)
	b := c.meta.Bounds
	for _, f := range b.fields() {
		n(*f.v)
	}
	w("revisions")
	n(len(c.revisions))
	for _, r := range c.revisions {
		id(r.RevisionID)
		w(r.Version)
		w(r.Rank)
		n(r.MinDepth)
	}
	w("edges")
	n(len(c.edges))
	for _, e := range c.edges {
		id(e.Declaration.From)
		n(e.Declaration.Index)
		id(e.To)
	}
	w("unresolved")
	n(len(c.unresolved))
	for _, u := range c.unresolved {
		id(u.Declaration.From)
		n(u.Declaration.Index)
		w(u.Reason.Code)
	}
	w("conflicts")
	n(len(c.conflicts))
	for _, x := range c.conflicts {
		w(x.Kind)
		w(x.Service.Domain)
		w(x.Service.Name)
		w(x.Version)
		n(len(x.Revisions))
		for _, r := range x.Revisions {
			id(r)
		}
	}
	w("cycles")
	n(len(c.cycles))
	for _, x := range c.cycles {
		n(len(x.Revisions))
		for _, r := range x.Revisions {
			id(r)
		}
	}
	codes := make([]string, len(lims))
	for i, l := range lims {
		codes[i] = l.Code
	}
	slices.Sort(codes)
	w("limitations")
	n(len(codes))
	for _, c := range codes {
		w(c)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writeField writes s with its length before it, so that no two field
// sequences hash alike.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}
