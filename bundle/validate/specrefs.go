package validate

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/kubepact/kubepact/internal/didyoumean"
	"github.com/kubepact/kubepact/internal/jsonobj"
)

// maxNamedKeys bounds the keys a missing $ref's message lists.
const maxNamedKeys = 10

// checkSpecRefs reports the first $ref of an OpenAPI (or Swagger) document,
// in document order, that cannot be followed, in words an author acts on:
// one that points outside the document (a bundle's interface documents
// are self-contained), one that is not a JSON pointer, or one whose target
// does not exist — named, with what is there instead. The loader's own
// messages would call a missing target an external reference.
//
// Literal values (example, default, const, enum) and x- extensions are
// not walked: a "$ref" key there is data, not a reference.
func checkSpecRefs(doc map[string]any) error {
	if specRefsFollow(doc, doc) {
		return nil // nothing to report, so no order or path to keep
	}
	var found error
	var walk func(n any, at []string)
	walk = func(n any, at []string) {
		switch x := n.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if err := specRefTarget(doc, ref); err != nil {
					found = fmt.Errorf("the $ref %q at %s %w", ref, jsonobj.InstancePath(doc, at), err)
					return
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if k == "$ref" || k == "example" || k == "default" || k == "const" || k == "enum" || strings.HasPrefix(k, "x-") {
					continue
				}
				if walk(x[k], append(at[:len(at):len(at)], k)); found != nil {
					return
				}
			}
		case []any:
			for i, v := range x {
				if walk(v, append(at[:len(at):len(at)], strconv.Itoa(i))); found != nil {
					return
				}
			}
		}
	}
	walk(doc, nil)
	return found
}

// specRefsFollow reports whether every $ref under n that checkSpecRefs
// walks can be followed. It skips what checkSpecRefs skips, but in no
// order and without paths: the common answer, yes, costs a walk without
// the sorted keys and path slices only a report needs.
func specRefsFollow(doc map[string]any, n any) bool {
	switch x := n.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && specRefTarget(doc, ref) != nil {
			return false
		}
		for k, v := range x {
			if k == "$ref" || k == "example" || k == "default" || k == "const" || k == "enum" || strings.HasPrefix(k, "x-") {
				continue
			}
			if !specRefsFollow(doc, v) {
				return false
			}
		}
	case []any:
		for _, v := range x {
			if !specRefsFollow(doc, v) {
				return false
			}
		}
	}
	return true
}

// specRefError is why a $ref cannot be followed; its message continues the
// sentence "the $ref R at P …".
type specRefError string

func (e specRefError) Error() string { return string(e) }

// refTarget checks that ref names something inside doc.
func specRefTarget(doc map[string]any, ref string) error {
	ptr, internal := strings.CutPrefix(ref, "#")
	switch {
	case !internal:
		return specRefError("points outside the document: a bundle's interface documents must be self-contained, so external $refs are not allowed; move what it names into this document (under #/components/…) and refer to it there")
	case ptr == "":
		return nil
	case !strings.HasPrefix(ptr, "/"):
		return specRefError("is not a JSON pointer into the document: write it as #/components/schemas/Name")
	}
	if _, ok := jsonobj.Pointer(doc, ptr); ok {
		return nil
	}
	// Find the deepest part that exists, to say what is missing in it.
	tokens := strings.Split(ptr[1:], "/")
	for i := len(tokens) - 1; i >= 0; i-- {
		parent := "/" + strings.Join(tokens[:i], "/")
		if i == 0 {
			parent = ""
		}
		node, ok := jsonobj.Pointer(doc, parent)
		if !ok {
			continue
		}
		name := unescaped(tokens[i : i+1])[0]
		where := "the document"
		if i > 0 {
			where = jsonobj.InstancePath(doc, unescaped(tokens[:i]))
		}
		m, isMap := node.(map[string]any)
		if !isMap {
			return specRefError(fmt.Sprintf("points to nothing: %s is not an object, so it has no %q", where, name))
		}
		keys := slices.Sorted(maps.Keys(m))
		msg := fmt.Sprintf("points to nothing: %s has no %q", where, name)
		switch {
		case len(keys) == 0:
			msg += " (it is empty)"
		case len(keys) <= maxNamedKeys:
			msg += " (it holds " + strings.Join(keys, ", ")
		default:
			msg += fmt.Sprintf(" (it holds %s and %d more", strings.Join(keys[:maxNamedKeys], ", "), len(keys)-maxNamedKeys)
		}
		if len(keys) > 0 {
			if near := didyoumean.Nearest(name, keys); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			msg += ")"
		}
		return specRefError(msg + ": define it, or point the $ref at what exists")
	}
	return specRefError("points to nothing in the document")
}

// unescaped decodes JSON pointer tokens as references write them: URI
// escapes first, then ~1 and ~0.
func unescaped(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		if u, err := url.PathUnescape(t); err == nil {
			t = u
		}
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return out
}
