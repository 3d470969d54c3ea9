package openapitools

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// Tool modes (Options.ToolMode).
const (
	// ToolModeAll offers one tool per exposed operation.
	ToolModeAll = "all"
	// ToolModeDiscover offers a search, a describe and call tools instead,
	// plus the operations named in Options.ToolPins as tools of their own.
	ToolModeDiscover = "discover"
	// ToolModeAuto is ToolModeDiscover when the exposed operations are more
	// than AutoDiscoverTools, or their tool definitions more than
	// AutoDiscoverTokens estimated tokens; else ToolModeAll.
	ToolModeAuto = "auto"
)

// Thresholds of ToolModeAuto. Clients warn above 50 tools in all; a
// server's tool list should leave most of a 200k context to the work.
const (
	AutoDiscoverTools  = 40
	AutoDiscoverTokens = 20_000
)

// bindNamingFlags binds the flags of names and tool modes.
func (o *Options) bindNamingFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.MaxNameLength, "max-tool-name-length", cmp.Or(o.MaxNameLength, DefaultNameCap),
		fmt.Sprintf("longest generated tool name (%d to %d); a longer name is abbreviated and ends in _ and 6 hex digits derived from the full name, the same on every run", MinNameCap, MaxNameLength))
	fs.StringVar(&o.ToolMode, "tool-mode", cmp.Or(o.ToolMode, ToolModeAll),
		fmt.Sprintf("how operations are offered: all (one tool each), discover (pacto_search_operations, pacto_describe_operations and the call tools) or auto (discover above %d tools or about %d tokens of tool definitions)", AutoDiscoverTools, AutoDiscoverTokens))
	fs.StringSliceVar(&o.ToolPins, "tool-pin", o.ToolPins, "in discover mode, also offer these operations as tools of their own, by tool name (comma-separated, repeatable)")
}

// checkNameCap refuses a name cap outside MinNameCap..MaxNameLength.
func checkNameCap(n int) error {
	if n < MinNameCap || n > MaxNameLength {
		return fmt.Errorf("MaxNameLength %d: want %d to %d (MCP allows names up to %d characters; clients often refuse more than 64)", n, MinNameCap, MaxNameLength, MaxNameLength)
	}
	return nil
}

// checkToolMode refuses an unknown tool mode.
func checkToolMode(m string) error {
	switch m {
	case "", ToolModeAll, ToolModeDiscover, ToolModeAuto:
		return nil
	}
	return fmt.Errorf("ToolMode %q: want %s, %s or %s", m, ToolModeAll, ToolModeDiscover, ToolModeAuto)
}

// Mode is the tool mode in force: Options.ToolMode with auto settled
// against the exposed tools (see ToolModeAuto), and why.
func (c *Capability) Mode() (mode, why string) {
	tokens := 0
	for _, t := range c.Tools {
		tokens += (len(t.Name) + len(t.Title) + len(t.Description) + len(t.InputSchema)) / 4
	}
	switch c.toolMode {
	case ToolModeDiscover:
		return ToolModeDiscover, "discovery mode was chosen (--tool-mode discover)"
	case ToolModeAuto:
		if len(c.Tools) > AutoDiscoverTools || tokens > AutoDiscoverTokens {
			return ToolModeDiscover, fmt.Sprintf("discovery mode, because %d operations (about %d tokens of tool definitions) is more than the %d tools or %d tokens --tool-mode auto lists one by one",
				len(c.Tools), tokens, AutoDiscoverTools, AutoDiscoverTokens)
		}
		return ToolModeAll, fmt.Sprintf("one tool per operation, because %d operations (about %d tokens) is within what --tool-mode auto lists one by one (%d tools, %d tokens)",
			len(c.Tools), tokens, AutoDiscoverTools, AutoDiscoverTokens)
	}
	return ToolModeAll, "one tool per operation (--tool-mode all)"
}

// Pins are the operations Options.ToolPins names, in the order given.
func (c *Capability) Pins() []string { return slices.Clone(c.pins) }

// Title is the API's title (info.title of its first interface that has
// one), else the service name.
func (c *Capability) Title() string {
	for _, in := range c.Interfaces {
		if in.title != "" {
			return in.title
		}
	}
	return c.Service
}

// opText is what search reads of one operation, exposed or withheld.
type opText struct {
	name, iface, method, path, operationID string
	summary, description                   string
	tags, params                           []string
	hints                                  Hints
}

// texts keeps the searchable text of every operation.
func texts(all []*operation) map[string]*opText {
	out := make(map[string]*opText, len(all))
	for _, op := range all {
		t := &opText{name: op.name, iface: op.iface.name, method: op.method, path: op.path, operationID: op.operationID,
			summary: op.title, description: op.description, tags: op.tags, hints: hintsFor(op.method, op.iface.loopback)}
		for _, p := range op.params {
			t.params = append(t.params, p.name)
		}
		out[op.name] = t
	}
	return out
}

// Access filters of a search.
const (
	AccessAny   = ""
	AccessRead  = "read"
	AccessWrite = "write"
)

// Query is one search over a Capability's operations.
type Query struct {
	// Text is what the operation does, in words; empty lists operations
	// in document order.
	Text string
	// Tag keeps operations carrying this tag (any letter case).
	Tag string
	// Access keeps read-only operations (AccessRead), the others
	// (AccessWrite), or both (AccessAny).
	Access string
	// Limit is the most hits returned (at least 1).
	Limit int
}

// Hit is one operation a search found.
type Hit struct {
	Name        string
	OperationID string
	Interface   string
	Method      string
	Path        string
	Summary     string
	Tags        []string
	Hints       Hints
	Score       float64
	// Tool is the exposed tool; nil when the operation is withheld.
	Tool *Tool
	// Withheld is why the operation is not offered; nil when exposed.
	Withheld *Withheld
}

// SearchResult is the answer of Search.
type SearchResult struct {
	Hits []Hit
	// Matched counts every operation that matched, before Limit.
	Matched int
}

// TagCount is one tag and how many operations carry it.
type TagCount struct {
	Tag        string
	Operations int
}

// Tags lists the tags of every operation (exposed or withheld) with their
// counts, most operations first, then by tag.
func (c *Capability) Tags() []TagCount {
	ix := c.index()
	out := make([]TagCount, 0, len(ix.tagCount))
	for tag, n := range ix.tagCount {
		out = append(out, TagCount{Tag: tag, Operations: n})
	}
	slices.SortFunc(out, func(a, b TagCount) int { return cmp.Or(b.Operations-a.Operations, strings.Compare(a.Tag, b.Tag)) })
	return out
}

// Search ranks the bundle's operations, exposed and withheld, against
// q.Text with BM25 over their tool name and operationId, summary,
// description, tags, path and parameter names (each field weighted), ties
// broken by document order: the same query gives the same answer on
// every server. The index is built on the first search and kept for the
// Capability's life.
func (c *Capability) Search(q Query) SearchResult {
	ix := c.index()
	limit := max(q.Limit, 1)
	keep := func(d *indexDoc) bool {
		if q.Tag != "" && !slices.ContainsFunc(d.hit.Tags, func(t string) bool { return strings.EqualFold(t, q.Tag) }) {
			return false
		}
		switch q.Access {
		case AccessRead:
			return d.hit.Hints.ReadOnly
		case AccessWrite:
			return !d.hit.Hints.ReadOnly
		}
		return true
	}
	terms := queryTerms(q.Text)
	qverb := queryVerb(q.Text)
	first := ""
	if len(terms) > 0 && terms[0].weight == 1 {
		first = terms[0].term
	}
	type scored struct {
		doc   int
		score float64
	}
	var found []scored
	if len(terms) == 0 {
		for i := range ix.docs {
			if keep(&ix.docs[i]) {
				found = append(found, scored{doc: i})
			}
		}
	} else {
		// A word and its synonyms are one concept: a doc scores the best
		// of them, each at most as rare (idf) as the word itself, so
		// synonyms widen a query without outweighing what was written.
		// Per-doc sums live in one dense slice (a map per query cost
		// more than the scoring).
		type sum struct {
			score, best float64
			covered     uint64 // the caller's words a doc matches, by bit
			named       uint64 // those it matches outside its description
			inWord      bool   // best holds a score for the current word
			touched     bool
		}
		acc := make([]sum, len(ix.docs))
		var touched, inWord []int32
		flush := func() {
			for _, d := range inWord {
				acc[d].score += acc[d].best
				acc[d].best, acc[d].inWord = 0, false
			}
			inWord = inWord[:0]
		}
		words := 0
		idfOf := func(term string) float64 {
			n := float64(len(ix.postings[term]))
			return math.Log(1 + (float64(len(ix.docs))-n+0.5)/(n+0.5))
		}
		for i, t := range terms {
			if i > 0 && t.word != terms[i-1].word {
				flush()
			}
			words = max(words, t.word+1)
			post := ix.postings[t.term]
			idf := idfOf(t.term)
			if t.weight < 1 {
				idf = min(idf, idfOf(t.of))
			}
			bit := 1<<(t.word%64) | t.also
			for _, p := range post {
				a := &acc[p.doc]
				if !a.touched {
					a.touched = true
					touched = append(touched, p.doc)
				}
				if !a.inWord {
					a.inWord = true
					inWord = append(inWord, p.doc)
				}
				a.best = max(a.best, t.weight*idf*p.tf*(bm25K1+1)/(p.tf+bm25K1))
				a.covered |= bit
				if p.named {
					a.named |= bit
				}
			}
		}
		flush()
		slices.Sort(touched) // document order, whatever order the terms came in
		for _, doc := range touched {
			a, d := &acc[doc], &ix.docs[doc]
			if !keep(d) {
				continue
			}
			// A doc that matches more of the caller's words ranks above
			// one matching few words often; a word only the description
			// holds counts for less; among equals the operation with the
			// shorter path (the general one) wins.
			coverage := (float64(bits.OnesCount64(a.named)) + descriptionCoverage*float64(bits.OnesCount64(a.covered&^a.named))) / float64(max(min(words, 64), 1))
			s := a.score * coverage * coverage / (1 + pathDepthPenalty*float64(d.depth))
			s *= (1 + titleBonus*titleCoverage(d.title, terms)) * verbAgreement(qverb, d.verb) * actionAgreement(first, d)
			found = append(found, scored{doc: int(doc), score: s})
		}
		slices.SortFunc(found, func(a, b scored) int {
			if a.score != b.score {
				return cmp.Compare(b.score, a.score)
			}
			return a.doc - b.doc
		})
	}
	res := SearchResult{Matched: len(found)}
	for _, f := range found[:min(limit, len(found))] {
		h := ix.docs[f.doc].hit
		h.Score = math.Round(f.score*1000) / 1000
		res.Hits = append(res.Hits, h)
	}
	return res
}

// BM25F parameters: k1 as usual; each field is normalised by its own
// length against that field's average (b), so a long description does not
// bury a short, exact summary.
const bm25K1 = 1.2

// Search fields, their weights and length normalisation: a word in the
// name or summary says more about what an operation does than one in its
// description.
var searchFields = [...]struct {
	weight, b float64
}{
	fieldName:        {weight: 2, b: 0.5},
	fieldSummary:     {weight: 3, b: 0.75},
	fieldDescription: {weight: 0.6, b: 0.75},
	fieldTag:         {weight: 1, b: 0.3},
	fieldPath:        {weight: 1.5, b: 0.5},
	fieldParam:       {weight: 0.5, b: 0.5},
}

const (
	fieldName = iota
	fieldSummary
	fieldDescription
	fieldTag
	fieldPath
	fieldParam
	numFields
)

// searchIndex is the inverted index over a Capability's operations.
type searchIndex struct {
	docs     []indexDoc
	postings map[string][]posting
	tagCount map[string]int
}

type indexDoc struct {
	hit    Hit
	depth  int      // segments of the path
	title  []string // the distinct terms of the summary (else of the name)
	verb   int      // what the operation does (docVerb)
	action string   // the word its summary (else its operationId) starts with
}

// pathDepthPenalty scales a score down per path segment.
const pathDepthPenalty = 0.04

type posting struct {
	doc   int32
	named bool    // the term is in a field other than the description
	tf    float64 // the BM25F pseudo-frequency: field frequencies weighted and normalised
}

// descriptionCoverage is what a query word found only in an operation's
// description counts for in its coverage, against 1 for a word in its
// name, summary, tags, path or parameters: the words that say what an
// operation is.
const descriptionCoverage = 0.5

// lazyIndex builds a Capability's index once.
type lazyIndex struct {
	once sync.Once
	ix   *searchIndex
}

func (c *Capability) index() *searchIndex {
	if c.search == nil { // a Capability not made by Project
		return buildIndex(c)
	}
	c.search.once.Do(func() { c.search.ix = buildIndex(c) })
	return c.search.ix
}

// buildIndex indexes the exposed tools and the withheld operations, in
// document order as far as the Capability keeps it (tools, then withheld).
func buildIndex(c *Capability) *searchIndex {
	ix := &searchIndex{postings: map[string][]posting{}, tagCount: map[string]int{}}
	type fieldTF struct {
		tf  map[string]*[numFields]float64
		len [numFields]float64
	}
	var pending []fieldTF
	var total [numFields]float64
	add := func(h Hit, t *opText) {
		d := fieldTF{tf: map[string]*[numFields]float64{}}
		field := func(f int, s string) {
			for _, term := range terms(s) {
				if d.tf[term] == nil {
					d.tf[term] = &[numFields]float64{}
				}
				d.tf[term][f]++
				d.len[f]++
			}
		}
		if t != nil {
			field(fieldName, t.name)
			if t.operationID != t.name {
				field(fieldName, t.operationID)
			}
			field(fieldName, methodWord(t.method))
			field(fieldSummary, t.summary)
			desc := t.description
			if len(desc) > maxIndexedDescription {
				desc = desc[:maxIndexedDescription]
			}
			field(fieldDescription, desc)
			for _, tag := range t.tags {
				field(fieldTag, tag)
			}
			field(fieldPath, t.path)
			for _, p := range t.params {
				field(fieldParam, p)
			}
			h.Tags = t.tags
			h.Summary = oneLine(t.summary, t.description)
		}
		for _, tag := range h.Tags {
			ix.tagCount[tag]++
		}
		for f := range numFields {
			total[f] += d.len[f]
		}
		doc := indexDoc{hit: h, depth: strings.Count(h.Path, "/"), verb: methodVerb(h.Method)}
		if t != nil {
			doc.title = distinct(terms(t.summary))
			if len(doc.title) == 0 {
				doc.title = distinct(terms(t.operationID))
			}
			doc.verb = docVerb(t.operationID, t.summary, t.method)
			doc.action = actionOf(t.operationID, t.summary)
		}
		ix.docs = append(ix.docs, doc)
		pending = append(pending, d)
	}
	for _, t := range c.Tools {
		add(Hit{Name: t.Name, OperationID: t.OperationID, Interface: t.Interface, Method: t.Method, Path: t.Path, Hints: t.Hints, Tool: t}, c.texts[t.Name])
	}
	for i := range c.Withheld {
		w := &c.Withheld[i]
		h := Hit{Name: w.Name, OperationID: w.OperationID, Interface: w.Interface, Method: w.Method, Path: w.Path, Hints: hintsFor(w.Method, false), Withheld: w}
		if t := c.texts[w.Name]; t != nil {
			h.Hints = t.hints
		}
		add(h, c.texts[w.Name])
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = max(total[f]/float64(max(len(pending), 1)), 1)
	}
	for doc, d := range pending {
		for _, term := range slices.Sorted(mapKeys(d.tf)) {
			tf, named := 0.0, false
			for f, n := range d.tf[term] {
				if n > 0 {
					named = named || f != fieldDescription
					sf := searchFields[f]
					tf += sf.weight * n / (1 - sf.b + sf.b*d.len[f]/avg[f])
				}
			}
			ix.postings[term] = append(ix.postings[term], posting{doc: int32(doc), named: named, tf: tf})
		}
	}
	return ix
}

// maxIndexedDescription bounds the description text indexed per
// operation: the opening says what an operation does; the rest (notes,
// examples) would only dilute it.
const maxIndexedDescription = 1024

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// methodWord is the verb an HTTP method stands for, indexed with the name.
func methodWord(m string) string {
	switch m {
	case "GET", "HEAD":
		return "get"
	case "POST":
		return "create"
	case "PUT", "PATCH":
		return "update"
	case "DELETE":
		return "delete"
	}
	return ""
}

// oneLine is an operation's summary, else the first line of its
// description, cut to 160 bytes.
func oneLine(summary, description string) string {
	s := summary
	if s == "" {
		s, _, _ = strings.Cut(description, "\n")
	}
	s = strings.TrimSpace(s)
	if len(s) > 160 {
		cut := 157
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// terms splits text into index terms: lower-case words split at
// punctuation and camelCase, stop words dropped, each reduced to a stem.
func terms(text string) []string {
	var out []string
	for run := range alnumRuns(text) {
		if !hasHump(run) { // one word: the common case, without the parts' slice
			if w := strings.ToLower(run); !stopWords[w] {
				out = append(out, termOf(w))
			}
			continue
		}
		whole, parts := runTerms(run)
		out = append(out, parts...)
		if len(parts) > 1 && whole != "" {
			out = append(out, whole)
		}
	}
	return out
}

// hasHump says whether a run of letters and digits has a camelCase hump
// inside (splitWords would cut it).
func hasHump(run string) bool {
	for i := 1; i < len(run); i++ {
		if c, prev := run[i], run[i-1]; c >= 'A' && c <= 'Z' && (prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9') {
			return true
		}
	}
	return false
}

// alnumRuns yields the runs of letters and digits of text.
func alnumRuns(text string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := -1
		for i := 0; i <= len(text); i++ {
			if i < len(text) && isAlnum(text[i]) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && !yield(text[start:i]) {
				return
			}
			start = -1
		}
	}
}

// runTerms are the terms of one run of letters and digits: the whole run
// as one term ("" for a stop word), and its camelCase parts
// (listProducts → list, product; GitHub → git, hub), stop words dropped.
func runTerms(run string) (whole string, parts []string) {
	if w := strings.ToLower(run); !stopWords[w] {
		whole = termOf(w)
	}
	for _, w := range splitWords(run) {
		if w = strings.ToLower(w); !stopWords[w] {
			parts = append(parts, termOf(w))
		}
	}
	return whole, parts
}

// queryTerm is one term of a query with its weight: a word the caller
// wrote weighs 1, a synonym added for it less.
type queryTerm struct {
	term   string
	weight float64
	word   int    // which of the caller's words it stands for
	of     string // that word's own term
	// also are the other words of the caller's it covers, by bit: a
	// synonym of a later word that is a word (or synonym) already.
	also uint64
}

// queryTerms are the terms of a query, each once, with the synonyms of
// the caller's words.
func queryTerms(text string) []queryTerm {
	seen := map[string]int{}
	var out []queryTerm
	add := func(t string, w float64, word int, of string) {
		if i, ok := seen[t]; ok {
			// The first mention counts for the score: a word written
			// before, or a synonym of one; a doc with it covers this
			// word too.
			if out[i].word != word {
				out[i].also |= 1 << (word % 64)
			}
			return
		}
		seen[t] = len(out)
		out = append(out, queryTerm{term: t, weight: w, word: word, of: of})
	}
	word := 0
	for run := range alnumRuns(text) {
		whole, parts := runTerms(run)
		if len(parts) > 1 && whole != "" {
			// A camelCase word is a name (GitHub, listProducts): the
			// whole of it is what the caller wrote; its parts widen it.
			if _, ok := seen[whole]; ok {
				continue
			}
			add(whole, 1, word, whole)
			for _, p := range parts {
				add(p, synonymWeight, word, whole)
			}
			word++
			continue
		}
		for _, t := range parts {
			if i, ok := seen[t]; ok && out[i].weight == 1 {
				continue
			}
			if _, ok := seen[t]; ok { // already in as a synonym: now a word of its own
				out[seen[t]].weight = 1
				continue
			}
			add(t, 1, word, t)
			for _, syn := range synonymTerms[t] {
				add(syn, synonymWeight, word, t)
			}
			for _, syn := range verbTerms[verbClassOf[t]] {
				add(syn, synonymWeight, word, t)
			}
			word++
		}
	}
	return out
}

// synonymWeight is a synonym's weight against the word written.
const synonymWeight = 0.4

// synonyms maps a word to words that mean the same in API names. It is a
// short, fixed list: the same on every server, no model behind it.
var synonyms = map[string][]string{
	"pr": {"pull"}, "pull": {"pr"}, "remove": {"delete"}, "delete": {"remove"}, "add": {"create", "set"}, "create": {"add"},
	"show": {"get"}, "fetch": {"get"}, "retrieve": {"get"},
	"change": {"update"}, "edit": {"update"}, "modify": {"update"}, "update": {"edit"},
	"me": {"authenticated"}, "my": {"authenticated"}, "i": {"authenticated"}, "ask": {"request"},
	"star": {"starred"}, "starred": {"star"}, "follow": {"follower", "following"}, "ci": {"workflow", "action"},
	"job": {"workflow"}, "build": {"workflow", "run"}, "key": {"secret"}, "secret": {"key"}, "comment": {"review"},
	"label": {"tag"}, "tag": {"label"}, "search": {"find"}, "find": {"search"}, "file": {"content"}, "content": {"file"},
	"team": {"member"}, "member": {"team"}, "open": {"create"}, "new": {"create"}, "publish": {"create"},
	"close": {"update"}, "detail": {"get"}, "signed": {"authenticated"}, "profile": {"user"}, "contributed": {"contributor"},
	"keyword": {"search"}, "review": {"reviewer"}, "webhook": {"hook"}, "hook": {"webhook"}, "gist": {"snippet"},
}

// stopWords carry no meaning in an API description.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "for": true, "to": true, "in": true, "on": true, "by": true,
	"with": true, "and": true, "or": true, "is": true, "are": true, "be": true, "this": true, "that": true,
	"it": true, "its": true, "from": true, "as": true, "at": true, "all": true, "you": true,
	"am": true, "have": true, "has": true, "their": true, "them": true, "they": true, "who": true, "one": true,
	"can": true, "will": true, "which": true, "what": true, "do": true, "does": true, "if": true, "use": true,
	"your": true, "about": true, "into": true, "api": true, "endpoint": true, "operation": true,
}

// stem reduces an English word to a crude stem so plural and singular
// meet: repositories → repository, pulls → pull, branches → branch.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

// cleanList is a list of names trimmed, empty ones dropped, each once.
func cleanList(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
