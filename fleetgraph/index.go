package fleetgraph

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Search indexes. Every search filter but not_ready has a posting list: a
// sorted set of keys per term, maintained by the Builder as records change
// and shared between snapshots like the records (a change copies one
// chunk of each list it touches). Search intersects the lists it needs,
// smallest first, and walks the result in service key order, so it can
// count an exact total without visiting services that cannot match.
//
// Service terms hold service keys. Target terms hold a target's composite
// key, its service key and its target key joined by a NUL: sorted that way,
// a target-level intersection (every target filter must hold on one target)
// comes out grouped by service, in service order. Keys never contain a NUL.
const (
	termOwner      = "o\x00"   // + folded owner
	termStatus     = "st\x00"  // + service status
	termSource     = "src\x00" // + source id
	termWorkload   = "w\x00"   // + a revision's workload
	termCapability = "cap\x00" // + a revision's capability type
	termDepName    = "dn\x00"  // + a dependency's reference name or alias
	termDepKey     = "dk\x00"  // + the service key a dependency's reference names
	termDepDigest  = "dd\x00"  // + a dependency's pinned digest
	termReadiness  = "rdy"     // some revision declares readiness
	termCompliance = "tc\x00"  // + a target's compliance
	termScope      = "ts\x00"  // + a target's scope
	termLabel      = "tl\x00"  // + label key, NUL, value
	termLabelKey   = "tk\x00"  // + label key
)

// postings maps a term to its sorted key set.
type postings = pmap[sorted[struct{}]]

// foldKey maps s to one representative of its strings.EqualFold class:
// each rune becomes the smallest rune of its simple case-folding orbit.
// Two strings are EqualFold exactly when their fold keys are equal.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == utf8.RuneError {
			b.WriteRune(r)
			continue
		}
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// serviceTerms are the service-level terms sv is listed under, sorted.
func serviceTerms(sv *service) []string {
	out := make([]string, 0, 8)
	for _, o := range sv.owners {
		out = append(out, termOwner+foldKey(o))
	}
	out = append(out, termStatus+string(sv.status))
	for _, src := range sv.sources {
		out = append(out, termSource+src)
	}
	for _, r := range sv.revs {
		if r.Workload != "" {
			out = append(out, termWorkload+r.Workload)
		}
		for _, c := range r.Capabilities {
			out = append(out, termCapability+c)
		}
		for _, e := range r.Edges {
			if e.Type != EdgeDependency {
				continue
			}
			t := e.target()
			out = append(out, termDepKey+ServiceKey(t.domain, t.name))
			for _, n := range t.names() {
				out = append(out, termDepName+n)
			}
			if t.digest != "" {
				out = append(out, termDepDigest+t.digest)
			}
		}
		if r.Readiness != nil {
			out = append(out, termReadiness)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// targetTerms are the target-level terms t is listed under.
func targetTerms(t *Target) []string {
	out := make([]string, 0, 2+2*len(t.Labels))
	out = append(out, termCompliance+string(t.compliance()), termScope+t.Scope)
	for k, v := range t.Labels {
		out = append(out, termLabel+k+"\x00"+v, termLabelKey+k)
	}
	return out
}

// compositeKey is a target's entry in the target posting lists.
func compositeKey(serviceKey, targetKey string) string {
	return serviceKey + "\x00" + targetKey
}

// stream is an ordered set of keys read forward: seek moves to the first
// key >= k, next past the current one. Both report the new current key.
type stream interface {
	seek(k string) (string, bool)
	next() (string, bool)
	size() int // an upper bound, to intersect the smallest first
}

// listStream reads a posting list.
type listStream struct {
	sc *scan[struct{}]
	n  int
}

func newListStream(l sorted[struct{}]) *listStream { return &listStream{sc: l.scan(), n: l.len()} }

func (l *listStream) cur() (string, bool) {
	if !l.sc.valid() {
		return "", false
	}
	return l.sc.key(), true
}

func (l *listStream) seek(k string) (string, bool) { l.sc.seek(k); return l.cur() }

func (l *listStream) next() (string, bool) {
	if l.sc.valid() {
		l.sc.next()
	}
	return l.cur()
}

func (l *listStream) size() int { return l.n }

// sliceStream reads a sorted slice.
type sliceStream struct {
	keys []string
	i    int
}

func (s *sliceStream) cur() (string, bool) {
	if s.i >= len(s.keys) {
		return "", false
	}
	return s.keys[s.i], true
}

func (s *sliceStream) seek(k string) (string, bool) {
	if s.i < len(s.keys) && s.keys[s.i] < k {
		j, _ := slices.BinarySearch(s.keys[s.i:], k)
		s.i += j
	}
	return s.cur()
}

func (s *sliceStream) next() (string, bool) { s.i++; return s.cur() }

func (s *sliceStream) size() int { return len(s.keys) }

// textStream reads the service order, keeping services whose lower-cased
// name or owners contain text. It searches each chunk's values as one
// contiguous string (chunkText) rather than value by value: at 50,000
// services the values are short strings scattered over the heap, and
// reading them one by one is mostly cache misses.
type textStream struct {
	sc   *scan[string]
	text string
	n    int
}

// chunkText is a string chunk's values concatenated in key order: value j
// is blob[off[j]:off[j+1]]. freq counts each byte's occurrences in blob
// (saturating): a search looks for the text's rarest byte, which the
// vectorised strings.IndexByte skips to, and skips a chunk lacking one of
// the text's bytes outright. It costs the values' bytes once more, four
// bytes per value and 512 bytes per chunk.
type chunkText struct {
	blob string
	off  []int32
	freq [256]uint16
}

// rarest is the position in text of its byte least frequent in the blob,
// or -1 when some byte of text does not occur in the blob at all.
func (ct *chunkText) rarest(text string) int {
	best := 0
	for i := range len(text) {
		f := ct.freq[text[i]]
		if f == 0 {
			return -1
		}
		if f < ct.freq[text[best]] {
			best = i
		}
	}
	return best
}

// index is strings.Index(ct.blob[from:], text) + from, or -1, given
// p = ct.rarest(text) >= 0.
func (ct *chunkText) index(from int32, text string, p int) int32 {
	c, n := text[p], len(text)
	blob := ct.blob
	for at := int(from); at+n <= len(blob); at++ {
		i := strings.IndexByte(blob[at+p:len(blob)-n+p+1], c)
		if i < 0 {
			return -1
		}
		at += i
		if blob[at:at+n] == text {
			return int32(at)
		}
	}
	return -1
}

// textOf returns c's concatenated values, building them on first use.
// Concurrent first uses may both build; the results are equal.
func textOf(c *chunk[string]) *chunkText {
	if t := c.text.Load(); t != nil {
		return t
	}
	n := 0
	for _, v := range c.vals {
		n += len(v)
	}
	var b strings.Builder
	b.Grow(n)
	off := make([]int32, 1, len(c.vals)+1)
	for _, v := range c.vals {
		b.WriteString(v)
		off = append(off, int32(b.Len()))
	}
	t := &chunkText{blob: b.String(), off: off}
	for i := range len(t.blob) {
		if f := &t.freq[t.blob[i]]; *f < 1<<16-1 {
			*f++
		}
	}
	c.text.Store(t)
	return t
}

// match moves to the first value at or after the current one that
// contains text. An occurrence found in the blob counts for the value it
// starts in only if it also ends there; if it does not, no later
// occurrence starting in that value can either, so the search resumes at
// the next value. Nothing is assumed about the bytes of text or values.
func (t *textStream) match() (string, bool) {
	sc := t.sc
	if t.text == "" {
		if sc.valid() {
			return sc.key(), true
		}
		return "", false
	}
	for sc.valid() {
		c := sc.chunks[sc.ci]
		ct := textOf(c)
		p := ct.rarest(t.text)
		for from := ct.off[sc.j]; p >= 0; {
			at := ct.index(from, t.text, p)
			if at < 0 {
				break
			}
			// the value holding offset at: the last j with off[j] <= at
			j := sc.j
			for ct.off[j+1] <= at {
				j++
			}
			if at+int32(len(t.text)) <= ct.off[j+1] {
				sc.j = j
				return c.keys[j], true
			}
			sc.j = j + 1
			if sc.j == len(c.keys) {
				break
			}
			from = ct.off[sc.j]
		}
		sc.ci, sc.j = sc.ci+1, 0
	}
	return "", false
}

func (t *textStream) seek(k string) (string, bool) { t.sc.seek(k); return t.match() }

func (t *textStream) next() (string, bool) {
	if t.sc.valid() {
		t.sc.next()
	}
	return t.match()
}

func (t *textStream) size() int { return t.n }

// serviceStream turns a stream of target composite keys into the distinct
// service keys they start with.
type serviceStream struct {
	in  stream
	cur string
}

func serviceOf(composite string) string {
	return composite[:strings.IndexByte(composite, 0)]
}

func (p *serviceStream) seek(k string) (string, bool) {
	if p.cur != "" && p.cur >= k {
		return p.cur, true
	}
	c, ok := p.in.seek(k)
	if !ok {
		return "", false
	}
	p.cur = serviceOf(c)
	return p.cur, true
}

func (p *serviceStream) next() (string, bool) {
	for {
		c, ok := p.in.next()
		if !ok {
			return "", false
		}
		if sk := serviceOf(c); sk != p.cur {
			p.cur = sk
			return sk, true
		}
	}
}

func (p *serviceStream) size() int { return p.in.size() }

// andStream is the intersection of its streams (a leapfrog join): the
// smallest proposes a key, each other seeks to it, and any that lands
// further proposes its key instead, until all agree.
type andStream struct {
	in []stream // smallest first
}

func intersect(in []stream) stream {
	if len(in) == 1 {
		return in[0]
	}
	slices.SortStableFunc(in, func(a, b stream) int { return a.size() - b.size() })
	lists := make([]*scan[struct{}], 0, len(in))
	for _, s := range in {
		if l, ok := s.(*listStream); ok {
			lists = append(lists, l.sc)
		}
	}
	if len(lists) == len(in) {
		return &listAnd{in: lists, n: in[0].size()}
	}
	return &andStream{in: in}
}

// listAnd is andStream over posting lists only, the target filters'
// case: the same join without an interface call per step.
type listAnd struct {
	in []*scan[struct{}]
	n  int
}

func (a *listAnd) align() (string, bool) {
	if !a.in[0].valid() {
		return "", false
	}
	k := a.in[0].key()
	for agreed, i := 1, 0; agreed < len(a.in); {
		i = (i + 1) % len(a.in)
		sc := a.in[i]
		sc.seek(k)
		if !sc.valid() {
			return "", false
		}
		if got := sc.key(); got != k {
			k, agreed = got, 1
		} else {
			agreed++
		}
	}
	return k, true
}

func (a *listAnd) seek(k string) (string, bool) { a.in[0].seek(k); return a.align() }

func (a *listAnd) next() (string, bool) {
	if a.in[0].valid() {
		a.in[0].next()
	}
	return a.align()
}

func (a *listAnd) size() int { return a.n }

func (a *andStream) align(k string, ok bool) (string, bool) {
	agreed, i := 1, 0
	for ok && agreed < len(a.in) {
		i = (i + 1) % len(a.in)
		var got string
		if got, ok = a.in[i].seek(k); ok {
			if got == k {
				agreed++
			} else {
				k, agreed = got, 1
			}
		}
	}
	return k, ok
}

func (a *andStream) seek(k string) (string, bool) { return a.align(a.in[0].seek(k)) }

func (a *andStream) next() (string, bool) { return a.align(a.in[0].next()) }

func (a *andStream) size() int { return a.in[0].size() }
