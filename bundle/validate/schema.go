package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/schemamsg"
)

var printer = message.NewPrinter(language.English)

// contractSchema compiles the embedded contract schema once, from the tree
// contract.SchemaTree decoded.
var contractSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(contract.SchemaID, contract.SchemaTree()); err != nil {
		return nil, err
	}
	return c.Compile(contract.SchemaID)
})

// contractSchemaDoc is the embedded schema as a generic tree, used to look
// up descriptions, property names and oneOf titles for error messages.
func contractSchemaDoc(u string) any {
	if strings.HasPrefix(u, contract.SchemaID) {
		return contract.SchemaTree()
	}
	return nil
}

// refuseLoader refuses every URL: the contract schema is self-contained.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("loading %s is not allowed", u)
}

// bundleScheme is the URL scheme under which schema files of one bundle are
// compiled; $refs between files of the same bundle work, nothing else loads.
const bundleScheme = "pacto-bundle"

func bundleURL(name string) string { return bundleScheme + ":///" + name }

// bundleLoader loads JSON schema files from one bundle only.
type bundleLoader struct {
	fsys fs.FS
	docs map[string]any // URL (without fragment) → parsed document, for messages
}

func (l *bundleLoader) Load(u string) (any, error) {
	name, ok := strings.CutPrefix(u, bundleScheme+":///")
	if !ok {
		return nil, fmt.Errorf("schema reference %s points outside the bundle; only files inside the bundle may be referenced", u)
	}
	name, err := url.PathUnescape(name)
	if err != nil {
		return nil, err
	}
	data, err := readFile(l.fsys, name, maxSchemaBytes)
	if err != nil {
		return nil, err
	}
	if err := longNumber(name, data); err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", name, err)
	}
	l.docs[u] = doc
	return doc, nil
}

func (l *bundleLoader) lookup(u string) any {
	base, _, _ := strings.Cut(u, "#")
	return l.docs[base]
}

// schemaFileError says which step of loading a bundle schema file failed.
type schemaFileError struct {
	stage string // "read", "json" or "schema"
	err   error
}

func (e *schemaFileError) Error() string { return e.err.Error() }
func (e *schemaFileError) Unwrap() error { return e.err }

// longNumber refuses a schema file holding a number whose exact value
// costs more than its bytes: the compiler turns every minimum, maximum
// and multipleOf into a big.Rat, and 1e999999 is a million-digit one.
func longNumber(name string, data []byte) error {
	f, ok := jsonobj.LongNumber(data)
	if !ok {
		return nil
	}
	where := "the top level"
	if f.Path != "" {
		where = f.Path
	}
	return fmt.Errorf("%s is not compiled: the number at %s %s", name, where, f.Reason())
}

// compiledSchema is a user schema compiled from a bundle file, with the
// lookup needed to explain its errors.
type compiledSchema struct {
	schema *jsonschema.Schema
	lookup func(string) any
}

// compileBundleSchema reads name from fsys and compiles it as a JSON
// Schema. Errors are *schemaFileError.
func compileBundleSchema(fsys fs.FS, name string) (cs *compiledSchema, err error) {
	defer func() {
		if p := recover(); p != nil {
			cs, err = nil, &schemaFileError{stage: "schema", err: fmt.Errorf("schema compiler failed: %v", p)}
		}
	}()
	data, err := readFile(fsys, name, maxSchemaBytes)
	if err != nil {
		return nil, &schemaFileError{stage: "read", err: err}
	}
	if err := longNumber(name, data); err != nil {
		return nil, &schemaFileError{stage: "schema", err: err}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, &schemaFileError{stage: "json", err: fmt.Errorf("%s is not valid JSON: %w", name, err)}
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return nil, &schemaFileError{stage: "schema", err: fmt.Errorf("%s must hold a JSON object (a JSON Schema)", name)}
		}
	}
	l := &bundleLoader{fsys: fsys, docs: map[string]any{}}
	u := bundleURL(path.Clean(name))
	l.docs[u] = doc
	c := jsonschema.NewCompiler()
	c.UseLoader(l)
	if err := c.AddResource(u, doc); err != nil {
		return nil, &schemaFileError{stage: "schema", err: err}
	}
	sch, err := c.Compile(u)
	if err != nil {
		return nil, &schemaFileError{stage: "schema", err: fmt.Errorf("%s is not a valid JSON Schema: %w", name, err)}
	}
	return &compiledSchema{schema: sch, lookup: l.lookup}, nil
}

// validateValue runs a compiled schema over v and returns findings with
// paths relative to v (prefix is prepended).
func (cs *compiledSchema) validateValue(v any, prefix string) (fs []Finding) {
	defer func() {
		if p := recover(); p != nil {
			fs = []Finding{{Path: prefix, Message: fmt.Sprintf("schema validation failed: %v", p)}}
		}
	}()
	out := schemaFindings(cs.schema, v, cs.lookup)
	for i := range out {
		out[i].Path = joinPath(prefix, out[i].Path)
	}
	return out
}

func joinPath(prefix, p string) string {
	switch {
	case prefix == "":
		return p
	case p == "":
		return prefix
	case strings.HasPrefix(p, "["):
		return prefix + p
	default:
		return prefix + "." + p
	}
}

// schemaFindings validates inst against sch and turns the error tree into
// one finding per leaf problem, with messages that say what was wrong and
// what is accepted. lookup returns the schema document behind a schema URL
// (nil when unknown) so messages can quote descriptions and allowed names.
func schemaFindings(sch *jsonschema.Schema, inst any, lookup func(string) any) []Finding {
	err := sch.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Finding{{Message: err.Error()}}
	}
	var out []Finding
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf, *kind.AnyOf, *kind.Not:
			if len(e.Causes) > 0 {
				for _, c := range e.Causes {
					walk(c)
				}
				return
			}
		}
		out = append(out, describeError(e, inst, lookup)...)
	}
	walk(ve)
	return out
}

func describeError(e *jsonschema.ValidationError, inst any, lookup func(string) any) []Finding {
	at := jsonobj.InstancePath(inst, e.InstanceLocation)
	node := schemaNode(e.SchemaURL, lookup)
	deref := func(p map[string]any) map[string]any {
		if r, ok := p["$ref"].(string); ok && strings.HasPrefix(r, "#") {
			base, _, _ := strings.Cut(e.SchemaURL, "#")
			return schemaNode(base+r, lookup)
		}
		return p
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []Finding
		for _, name := range k.Missing {
			msg := fmt.Sprintf("missing required field %q", name)
			if d := propertyDescription(node, name, deref); d != "" {
				msg += ": " + d
			}
			out = append(out, Finding{Path: joinPath(at, jsonobj.Key(name)), Message: msg})
		}
		return out
	case *kind.AdditionalProperties:
		allowed := propertyNames(node)
		var out []Finding
		for _, name := range k.Properties {
			msg := fmt.Sprintf("unknown field %q", name)
			if len(allowed) > 0 {
				msg += "; allowed fields: " + strings.Join(allowed, ", ")
			}
			out = append(out, Finding{Path: joinPath(at, jsonobj.Key(name)), Message: msg})
		}
		return out
	case *kind.Type:
		return []Finding{{Path: at, Message: fmt.Sprintf("must be %s, got %s", article(strings.Join(k.Want, " or ")), k.Got) + explain(node)}}
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			want = append(want, display(w))
		}
		return []Finding{{Path: at, Message: fmt.Sprintf("%s is not allowed; must be one of: %s", display(k.Got), strings.Join(want, ", "))}}
	case *kind.Const:
		msg := fmt.Sprintf("must be %s, got %s", display(k.Want), display(k.Got))
		if strings.Contains(e.SchemaURL, "/then/") && at == "state.persistence.durability" {
			msg += " (a stateless service keeps no state across restarts, so its durability must be ephemeral)"
		}
		return []Finding{{Path: at, Message: msg}}
	case *kind.Pattern:
		return []Finding{{Path: at, Message: fmt.Sprintf("%s does not match the pattern %s", display(k.Got), k.Want) + explain(node)}}
	case *kind.OneOf:
		return []Finding{{Path: at, Message: oneOfMessage(k, node)}}
	default:
		return []Finding{{Path: at, Message: e.ErrorKind.LocalizedString(printer) + explain(node)}}
	}
}

// article puts the article before a type name (schemamsg.WithArticle).
func article(s string) string { return schemamsg.WithArticle(s) }

// explain returns "; <first sentence of the description>" when the schema
// node has a description.
func explain(node map[string]any) string {
	d, _ := node["description"].(string)
	if d == "" {
		return ""
	}
	return " (" + firstSentence(d) + ")"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func oneOfMessage(k *kind.OneOf, node map[string]any) string {
	var titles []string
	if branches, ok := node["oneOf"].([]any); ok {
		for _, b := range branches {
			if bm, ok := b.(map[string]any); ok {
				if t, ok := bm["title"].(string); ok {
					titles = append(titles, t)
				}
			}
		}
	}
	if len(k.Subschemas) == 0 {
		if len(titles) == 0 {
			return "matches none of the allowed forms"
		}
		return "matches none of the allowed forms; use exactly one of: " + strings.Join(titles, " | ")
	}
	if len(titles) == 0 {
		return "matches more than one of the allowed forms"
	}
	return "matches more than one of the allowed forms; use exactly one of: " + strings.Join(titles, " | ")
}

// schemaNode resolves a schema URL's fragment (a JSON pointer) in the
// document lookup returns.
func schemaNode(u string, lookup func(string) any) map[string]any {
	if lookup == nil {
		return nil
	}
	doc := lookup(u)
	_, frag, _ := strings.Cut(u, "#")
	cur := doc
	if frag != "" {
		for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			if t, err := url.PathUnescape(tok); err == nil {
				tok = t
			}
			switch c := cur.(type) {
			case map[string]any:
				cur = c[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(c) {
					return nil
				}
				cur = c[i]
			default:
				return nil
			}
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

func propertyNames(node map[string]any) []string {
	props, _ := node["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func propertyDescription(node map[string]any, name string, deref func(map[string]any) map[string]any) string {
	props, _ := node["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	if p == nil {
		return ""
	}
	if d, ok := deref(p)["description"].(string); ok {
		return firstSentence(d)
	}
	return ""
}
