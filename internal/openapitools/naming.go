package openapitools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// MaxNameLength is the longest tool name MCP accepts, and the largest
// Options.MaxNameLength.
const MaxNameLength = 128

// DefaultNameCap is the longest tool name projection gives unless
// Options.MaxNameLength says otherwise: OpenAI, Bedrock and Claude refuse
// longer names.
const DefaultNameCap = 64

// MinNameCap is the smallest Options.MaxNameLength: a shortened name
// keeps a readable head beside its 7-character identity suffix.
const MinNameCap = 24

// ReservedPrefix starts the names of kubepact's own tools. The whole prefix
// is reserved: an operation whose tool name would start with it (in any
// letter case) is skipped, never renamed.
const ReservedPrefix = "pacto_"

var (
	nonAlnum    = regexp.MustCompile(`[^A-Za-z0-9]+`)
	nonNameChar = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
)

// derivedName is the name of an operation without operationId:
// <method>_<path> with every run of non-alphanumerics collapsed to "_"
// (GET /health → get_health, GET / → get_root).
func derivedName(method, path string) string {
	p := strings.Trim(nonAlnum.ReplaceAllString(path, "_"), "_")
	if p == "" {
		p = "root"
	}
	return strings.ToLower(method) + "_" + p
}

// baseName is the name an operation asks for: its operationId with the
// characters MCP does not allow in a name replaced by "_", else the derived
// name; prefixed with the interface when the bundle has several.
func baseName(prefix, operationID, method, path string) string {
	name := strings.Trim(nonNameChar.ReplaceAllString(strings.TrimSpace(operationID), "_"), "_")
	if name == "" {
		name = derivedName(method, path)
	}
	if prefix != "" {
		name = prefix + "_" + name
	}
	return name
}

// interfacePrefix is the `<interface>_` prefix of a bundle with several
// openapi interfaces, as allowed name characters.
func interfacePrefix(iface string) string { return NamePart(iface) }

// NamePart is s as a part of a tool name: every run of characters a tool
// name may not hold becomes "_", leading and trailing "_" go, and an
// empty result is "interface". The gRPC tools name their parts with it.
func NamePart(s string) string {
	p := strings.Trim(nonNameChar.ReplaceAllString(s, "_"), "_")
	if p == "" {
		p = "interface"
	}
	return p
}

// claimedName reports whether an operation's name comes from its
// operationId, which the contract's author chose: such a name is the
// tool's identity and is never renamed.
func claimedName(operationID string) bool {
	return strings.Trim(nonNameChar.ReplaceAllString(strings.TrimSpace(operationID), "_"), "_") != ""
}

// nameAll settles every operation's name, exposed or not, so names are
// stable whatever the exposure policy. A name the tools lock gives the
// same operation (locked, by opKey: same operationId too) is kept, so a
// lock's names never shift — not even when the name cap changes. A name an operationId claims is
// the operation's own; two operations claiming one name is an error that
// names both — never a silent rename, never the last one winning. Names
// derived from method and path (no operationId) are kubepact's, and a
// collision among them, or with a claimed name, gets _2, _3… in document
// order.
func nameAll(ops []*operation, limit int, locked map[string]string) error {
	n := &namer{used: map[string]bool{}, limit: limit}
	owner := map[string]*operation{}
	claim := func(op *operation, name string) error {
		if first, dup := owner[name]; dup {
			return fmt.Errorf("the tool name %q is claimed twice: by %s and by %s; an operationId names a tool and must be unique across the bundle's openapi interfaces", name, describeOp(first), describeOp(op))
		}
		owner[name] = op
		op.name = name
		n.used[name] = true
		return nil
	}
	for _, op := range ops {
		if name, ok := locked[opKey(op.iface.name, op.method, op.path, op.operationID)]; ok && name != "" {
			if err := claim(op, name); err != nil {
				return err
			}
		}
	}
	for _, op := range ops {
		if op.name != "" || !op.claimed {
			continue
		}
		if err := claim(op, shorten(op.base, limit)); err != nil {
			return err
		}
	}
	for _, op := range ops {
		if op.name == "" {
			op.name = n.name(op.base)
		}
	}
	return nil
}

// opKey identifies an operation across runs: its interface, method, path
// and operationId (a new operationId is a new identity, and names the
// tool anew).
func opKey(iface, method, path, operationID string) string {
	return iface + "\x00" + method + "\x00" + path + "\x00" + operationID
}

// lockedNames are the names a lock gives operations, by opKey; nil
// without a lock.
func lockedNames(l *Lock) map[string]string {
	if l == nil {
		return nil
	}
	out := make(map[string]string, len(l.Tools))
	for _, lt := range l.Tools {
		out[opKey(lt.Operation.Interface, lt.Operation.Method, lt.Operation.Path, lt.Operation.OperationID)] = lt.Name
	}
	return out
}

// describeOp names an operation in messages.
func describeOp(op *operation) string {
	return fmt.Sprintf("%s %s of interface %q (operationId %q)", op.method, op.path, op.iface.name, op.operationID)
}

// namer hands out unique names in the order it is asked: the first
// operation asking for a name gets it, later ones get _2, _3…
type namer struct {
	used  map[string]bool
	limit int
}

func (n *namer) name(base string) string {
	cand := shorten(base, n.limit)
	for i := 2; n.used[cand]; i++ {
		cand = shorten(fmt.Sprintf("%s_%d", base, i), n.limit)
	}
	n.used[cand] = true
	return cand
}

// ShortenName is shorten for the other generated tools (gRPC): name
// fitted into limit (at most MaxNameLength) as an OpenAPI tool's name is.
func ShortenName(name string, limit int) string { return shorten(name, limit) }

// shorten fits a name longer than limit into it: the words of the name
// (runs between "_", "-" and ".") are abbreviated, longest first, until
// the name and a suffix fit, and the suffix is "_" and 6 hex digits of the
// SHA-256 of the full name. The result depends on the name alone — never
// on which other operations the bundle has or which are exposed — so a
// name is the same on every run and under every filter, and two long
// names that abbreviate alike stay apart by their suffixes.
func shorten(name string, limit int) string {
	if limit <= 0 || limit > MaxNameLength {
		limit = MaxNameLength
	}
	if len(name) <= limit {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "_" + hex.EncodeToString(sum[:3])
	return abbreviate(name, limit-len(suffix)) + suffix
}

// abbreviations are the short forms of words long API names are made of;
// a word not listed loses its inner vowels instead.
var abbreviations = map[string]string{
	"repository": "repo", "repositories": "repos", "organization": "org", "organizations": "orgs",
	"enterprise": "ent", "enterprises": "ents", "environment": "env", "environments": "envs",
	"configuration": "config", "configurations": "configs", "authenticated": "authd", "authentication": "authn",
	"authorization": "authz", "application": "app", "applications": "apps", "installation": "install",
	"installations": "installs", "permissions": "perms", "permission": "perm", "information": "info",
	"administrator": "admin", "administration": "admin", "deployment": "deploy", "deployments": "deploys",
	"dependency": "dep", "dependencies": "deps", "specification": "spec", "notification": "notif",
	"notifications": "notifs", "subscription": "sub", "subscriptions": "subs", "protection": "prot",
	"protected": "prot", "requirement": "req", "requirements": "reqs", "reference": "ref", "references": "refs",
	"statistics": "stats", "collaborator": "collab", "collaborators": "collabs", "variable": "var",
	"variables": "vars", "workflow": "wf", "workflows": "wfs", "selected": "sel", "settings": "sttgs",
	"attestation": "attest", "attestations": "attests", "description": "desc", "properties": "props",
	"property": "prop", "security": "sec", "advisory": "adv", "advisories": "advs", "management": "mgmt",
	"personal": "pers", "customization": "custom", "codespaces": "cs", "codespace": "cs",
}

// abbreviate shortens the words of name until it is at most budget long,
// longest word first (the first of equals); a name still too long is cut.
func abbreviate(name string, budget int) string {
	words := splitWords(name)
	length := len(name)
	for length > budget {
		longest := -1
		for i, w := range words {
			if isSeparator(w) || len(w) <= 3 {
				continue
			}
			if longest < 0 || len(w) > len(words[longest]) {
				longest = i
			}
		}
		if longest < 0 {
			break
		}
		w := words[longest]
		short := shortWord(w)
		if len(short) >= len(w) { // nothing left to drop: cut what is missing
			short = w[:max(3, len(w)-(length-budget))]
		}
		length -= len(w) - len(short)
		words[longest] = short
	}
	out := strings.Join(words, "")
	if len(out) > budget {
		out = strings.TrimRight(out[:budget], "_-.")
	}
	return out
}

// splitWords splits a name into words and separators, keeping every
// character: a word ends at a separator and where a lower-case letter or
// digit meets an upper-case one (listPullRequests → list, Pull, Requests).
func splitWords(name string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(name); i++ {
		if i == len(name) {
			out = append(out, name[start:])
			break
		}
		prev, c := name[i-1], name[i]
		switch {
		case isAlnum(prev) != isAlnum(c),
			isAlnum(c) && c >= 'A' && c <= 'Z' && (prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9'):
			out = append(out, name[start:i])
			start = i
		}
	}
	return out
}

func isSeparator(w string) bool { return w != "" && !isAlnum(w[0]) }

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// shortWord is a word's short form: the listed abbreviation (in the
// word's own leading case), else the word without its inner vowels (the
// word itself when it has none).
func shortWord(w string) string {
	if a, ok := abbreviations[strings.ToLower(w)]; ok {
		if w[0] >= 'A' && w[0] <= 'Z' {
			a = strings.ToUpper(a[:1]) + a[1:]
		}
		return a
	}
	var b strings.Builder
	b.WriteByte(w[0])
	for i := 1; i < len(w); i++ {
		if !strings.ContainsRune("aeiouAEIOU", rune(w[i])) || i == len(w)-1 {
			b.WriteByte(w[i])
		}
	}
	return b.String()
}

// Reserved reports whether name falls under the reserved prefix (in any
// letter case): such a tool is withheld, never renamed.
func Reserved(name string) bool { return reserved(name) }

// reserved reports whether name falls under the reserved prefix.
func reserved(name string) bool {
	return len(name) >= len(ReservedPrefix) && strings.EqualFold(name[:len(ReservedPrefix)], ReservedPrefix)
}
