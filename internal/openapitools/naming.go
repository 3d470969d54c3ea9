package openapitools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// MaxNameLength is the longest tool name MCP accepts.
const MaxNameLength = 128

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
func interfacePrefix(iface string) string {
	p := strings.Trim(nonNameChar.ReplaceAllString(iface, "_"), "_")
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
// stable whatever the exposure policy. A name an operationId claims is
// the operation's own; two operations claiming one name is an error that
// names both — never a silent rename, never the last one winning. Names
// derived from method and path (no operationId) are kubepact's, and a
// collision among them, or with a claimed name, gets _2, _3… in document
// order.
func nameAll(ops []*operation) error {
	n := &namer{used: map[string]bool{}}
	owner := map[string]*operation{}
	for _, op := range ops {
		if !op.claimed {
			continue
		}
		name := shorten(op.base)
		if first, dup := owner[name]; dup {
			return fmt.Errorf("the tool name %q is claimed twice: by %s and by %s; an operationId names a tool and must be unique across the bundle's openapi interfaces", name, describeOp(first), describeOp(op))
		}
		owner[name] = op
		op.name = name
		n.used[name] = true
	}
	for _, op := range ops {
		if !op.claimed {
			op.name = n.name(op.base)
		}
	}
	return nil
}

// describeOp names an operation in messages.
func describeOp(op *operation) string {
	return fmt.Sprintf("%s %s of interface %q (operationId %q)", op.method, op.path, op.iface.name, op.operationID)
}

// namer hands out unique names in the order it is asked: the first
// operation asking for a name gets it, later ones get _2, _3…
type namer struct{ used map[string]bool }

func (n *namer) name(base string) string {
	cand := shorten(base)
	for i := 2; n.used[cand]; i++ {
		cand = shorten(fmt.Sprintf("%s_%d", base, i))
	}
	n.used[cand] = true
	return cand
}

// shorten cuts a name longer than MaxNameLength and ends it with "_" and 8
// hex digits of the SHA-256 of the full name, so two long names that share
// their first 119 characters stay apart, the same way on every run.
func shorten(name string) string {
	if len(name) <= MaxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:MaxNameLength-9] + "_" + hex.EncodeToString(sum[:4])
}

// reserved reports whether name falls under the reserved prefix.
func reserved(name string) bool {
	return len(name) >= len(ReservedPrefix) && strings.EqualFold(name[:len(ReservedPrefix)], ReservedPrefix)
}
