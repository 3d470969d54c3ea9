package openapitools

import "strings"

// Ranking signals beyond BM25F. Each is read from the document alone
// (its summary, operationId and method), so they serve any API, not one.

// Verb classes: what an operation does to what it names.
const (
	verbNone = iota
	verbList
	verbGet
	verbCreate
	verbUpdate
	verbDelete
)

// verbClasses maps the stem of a verb, as callers write it and as
// operationIds and summaries start, to its class. It is a generic CRUD
// thesaurus, not one API's words.
var verbClasses = map[string]int{
	"list": verbList, "enumerate": verbList,
	"get": verbGet, "show": verbGet, "fetch": verbGet, "retrieve": verbGet, "read": verbGet, "view": verbGet,
	"look": verbGet, "lookup": verbGet, "describe": verbGet, "download": verbGet,
	"create": verbCreate, "add": verbCreate, "new": verbCreate, "make": verbCreate, "post": verbCreate,
	"open": verbCreate, "publish": verbCreate, "submit": verbCreate, "register": verbCreate, "generate": verbCreate,
	"update": verbUpdate, "edit": verbUpdate, "change": verbUpdate, "modify": verbUpdate, "set": verbUpdate,
	"rename": verbUpdate, "replace": verbUpdate, "patch": verbUpdate,
	"delete": verbDelete, "remove": verbDelete, "drop": verbDelete, "destroy": verbDelete, "erase": verbDelete,
	"unset": verbDelete,
}

// methodVerb is the class an HTTP method stands for when an operation's
// name starts with no known verb.
func methodVerb(m string) int {
	switch m {
	case "GET", "HEAD":
		return verbGet
	case "POST":
		return verbCreate
	case "PUT", "PATCH":
		return verbUpdate
	case "DELETE":
		return verbDelete
	}
	return verbNone
}

// docVerb is what an operation does: the verb its summary starts with
// (words written for people), else its operationId's (its last segment),
// else its method.
func docVerb(operationID, summary, method string) int {
	if i := strings.LastIndexAny(operationID, "/."); i >= 0 {
		operationID = operationID[i+1:]
	}
	for _, s := range []string{summary, operationID} {
		if ts := terms(s); len(ts) > 0 {
			if v := verbClassOf[ts[0]]; v != verbNone {
				return v
			}
		}
	}
	return methodVerb(method)
}

// verbAgreement scales a score by how the query's verb (the first the
// caller wrote) and the operation's agree: the same class gains, a read
// against a write (or the reverse) loses; list and get are both reads.
func verbAgreement(query, doc int) float64 {
	switch {
	case query == verbNone || doc == verbNone:
		return 1
	case query == doc:
		return verbMatch
	case isRead(query) && isRead(doc):
		return 1
	case isRead(query) != isRead(doc):
		return verbClash
	}
	return verbOther // two different writes
}

func isRead(v int) bool { return v == verbList || v == verbGet }

const (
	verbMatch = 1.25
	verbClash = 0.6
	verbOther = 0.8
)

// titleCoverage is the share of an operation's summary terms the query
// holds (a synonym counting as synonymWeight): "List pull requests" is
// all in "list the open pull requests of a repository", while "List review
// comments on a pull request" is half in it — the general operation the
// query names fully ranks above a specific one it names in part.
func titleCoverage(title []string, q []queryTerm) float64 {
	if len(title) == 0 {
		return 0
	}
	got := 0.0
	for _, t := range title {
		best := 0.0
		for i := range q {
			if q[i].term == t {
				best = max(best, q[i].weight)
			}
		}
		got += best
	}
	return got / float64(len(title))
}

// titleBonus is how much a fully covered summary multiplies a score by
// (plus one).
const titleBonus = 1.0

// distinct is a list of terms with repeats dropped, in order.
func distinct(ts []string) []string {
	out := ts[:0:0]
	for _, t := range ts {
		if !containsString(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// verbWords are the words operations name each verb class with: a verb
// the caller writes also searches for these (as a synonym).
var verbWords = [...][]string{
	verbList:   {"list"},
	verbGet:    {"get"},
	verbCreate: {"create"},
	verbUpdate: {"update"},
	verbDelete: {"delete"},
}

// queryVerb is the class of the first verb the caller wrote; "which" and
// "who" open a question whose answer is a list.
func queryVerb(text string) int {
	for _, w := range splitWords(text) {
		w = strings.ToLower(w)
		if w == "which" || w == "who" {
			return verbList
		}
		if v := verbClassOf[termOf(w)]; v != verbNone {
			return v
		}
	}
	return verbNone
}

// abbreviationOf maps a short form, as APIs and callers write it, to the
// word it stands for; index and query both use the long form, so
// "repos" in a path meets "repository" in a question at full weight.
var abbreviationOf = map[string]string{
	"repo": "repository", "org": "organization", "config": "configuration", "info": "information",
	"env": "environment", "dir": "directory", "ref": "reference", "msg": "message", "param": "parameter",
	"stat": "statistic", "perm": "permission", "pkg": "package", "desc": "description", "spec": "specification",
	"var": "variable", "auth": "authentication", "admin": "administrator",
}

// suffixStem takes a derivational or inflectional suffix off a word
// already reduced by stem, so that a verb meets its noun and its past:
// deployment → deploy, starred → star, merged → merg(e), listing → list.
// It keeps at least four letters (three before -ed), so short words stay
// whole, and it runs the same on the index and the query.
func suffixStem(w string) string {
	for _, suf := range [...]struct {
		s    string
		keep int
	}{{"ments", 4}, {"ment", 4}, {"ings", 4}, {"ing", 4}, {"ation", 4}, {"ed", 3}, {"ee", 4}, {"or", 5}} {
		if len(w) >= len(suf.s)+suf.keep && strings.HasSuffix(w, suf.s) {
			w = w[:len(w)-len(suf.s)]
			if n := len(w); n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiosl", rune(w[n-1])) {
				w = w[:n-1] // starr → star, runn → run; pass, fill, see stay
			}
			return trimAt(trimE(w))
		}
	}
	return trimAt(trimE(w))
}

// trimAt drops a final "at" left of -ate, -ated or -ator from a word of
// seven letters or more: collaborat(e) meets collaborat(or).
func trimAt(w string) string {
	if len(w) >= 7 && strings.HasSuffix(w, "at") {
		return w[:len(w)-2]
	}
	return w
}

// trimE drops a final e from a word of five letters or more, so merge
// meets merg(ed) and create meets creat(ed).
func trimE(w string) string {
	if len(w) >= 5 && w[len(w)-1] == 'e' {
		return w[:len(w)-1]
	}
	return w
}

// termOf is the index term of one lower-case word: its stem, an
// abbreviation's long form, then its suffix off.
func termOf(w string) string {
	w = stem(w)
	if long, ok := abbreviationOf[w]; ok {
		w = long
	}
	return suffixStem(w)
}

// The word lists above, as index terms (termOf), made once.
var (
	synonymTerms = func() map[string][]string {
		out := make(map[string][]string, len(synonyms))
		for w, syns := range synonyms {
			t := termOf(w)
			for _, syn := range syns {
				if st := termOf(syn); st != t && !containsString(out[t], st) {
					out[t] = append(out[t], st)
				}
			}
		}
		return out
	}()
	verbClassOf = func() map[string]int {
		out := make(map[string]int, len(verbClasses))
		for w, v := range verbClasses {
			out[termOf(w)] = v
		}
		return out
	}()
	verbTerms = func() (out [len(verbWords)][]string) {
		for v, ws := range verbWords {
			for _, w := range ws {
				out[v] = append(out[v], termOf(w))
			}
		}
		return out
	}()
)

// actionOf is the word an operation's summary starts with, else its
// operationId's last segment (refundPayment: refund; pulls/merge: merge),
// "" when neither starts with a word.
func actionOf(operationID, summary string) string {
	if ts := terms(summary); len(ts) > 0 {
		return ts[0]
	}
	if i := strings.LastIndexAny(operationID, "/."); i >= 0 {
		operationID = operationID[i+1:]
	}
	if ts := terms(operationID); len(ts) > 0 {
		return ts[0]
	}
	return ""
}

// actionAgreement is verbAgreement for a query whose first word is no
// CRUD verb ("refund a payment", "merge a pull request", "star a
// repository"): an operation that starts with that same word does what
// the caller asked.
func actionAgreement(first string, doc *indexDoc) float64 {
	if first != "" && verbClassOf[first] == verbNone && first == doc.action {
		return verbMatch
	}
	return 1
}
