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
	"look": verbGet, "lookup": verbGet, "describe": verbGet, "download": verbGet, "check": verbGet, "see": verbGet,
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

// docVerb is what an operation does: the verb its operationId (its last
// segment) starts with, else its summary's first word, else its method.
func docVerb(operationID, summary, method string) int {
	if i := strings.LastIndexAny(operationID, "/."); i >= 0 {
		operationID = operationID[i+1:]
	}
	for _, s := range []string{operationID, summary} {
		if ts := terms(s); len(ts) > 0 {
			if v := verbClasses[ts[0]]; v != verbNone {
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
		if v := verbClasses[stem(w)]; v != verbNone {
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
