package contract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Limits applied to every document this package decodes. They exist so that
// hostile input fails fast with a clear error instead of exhausting memory.
const (
	// MaxBytes is the largest pacto.yaml accepted (4 MiB). Real contracts
	// are a few KiB.
	MaxBytes = 4 << 20
	// MaxAliasNodes caps how many nodes YAML aliases may expand to in one
	// document: enough for ordinary reuse of anchors, far too few for a
	// "billion laughs" bomb.
	MaxAliasNodes = 10_000
	// MaxDepth caps the nesting of mappings and sequences.
	MaxDepth = 64
)

// ParseError is a document that could not be decoded. Line and Column are
// 1-based; 0 means the position is unknown (e.g. the input is too large).
type ParseError struct {
	Line, Column int
	Message      string
}

func (e *ParseError) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	default:
		return e.Message
	}
}

func nodeError(n *yaml.Node, format string, args ...any) *ParseError {
	return &ParseError{Line: n.Line, Column: n.Column, Message: fmt.Sprintf(format, args...)}
}

// Parse decodes a pacto.yaml document into a Contract.
//
// Decoding is strict: unknown fields, values of the wrong kind (a number
// where a string belongs, a list where a mapping belongs), duplicate keys,
// YAML merge keys, custom tags, more than one document and a root that is
// not a mapping are all errors. Every error is a *ParseError carrying the
// line and column of the offending node. Parse does not check required
// fields, enums or cross-field rules; package bundle/validate does.
func Parse(data []byte) (*Contract, error) {
	d := ParseDocument(data)
	return d.Contract, d.Err
}

// Document is one decode of a pacto.yaml, both ways it is read: the
// JSON-compatible tree DecodeGeneric returns (what schema validation
// runs on) and the typed Contract Parse returns, from a single YAML
// parse. Tree and Contract share their free-form sections: read them,
// never modify them.
type Document struct {
	// Tree and TreeErr are what DecodeGeneric returns for the bytes.
	Tree    any
	TreeErr error
	// Contract and Err are what Parse returns for them.
	Contract *Contract
	Err      error

	raw []byte
}

// Of reports whether d is the decode of data.
func (d *Document) Of(data []byte) bool {
	return d != nil && bytes.Equal(d.raw, data)
}

// ParseDocument decodes data once into both its generic tree and its
// contract: the same results, errors included, as DecodeGeneric and
// Parse, for half the YAML decoding.
func ParseDocument(data []byte) *Document {
	return parseDocument(data, MaxBytes)
}

func parseDocument(data []byte, maxBytes int) *Document {
	d := &Document{raw: data}
	root, err := parseRoot(data, maxBytes)
	if err != nil {
		d.TreeErr, d.Err = err, err
		return d
	}
	generic, err := toGeneric(root)
	if err != nil {
		d.TreeErr, d.Err = err, err
		return d
	}
	d.Tree = generic
	d.Contract, d.Err = typed(root, generic)
	return d
}

// typed decodes the contract from its node tree, whose generic tree is
// generic.
func typed(root *yaml.Node, generic any) (*Contract, error) {
	if err := checkShape(root, reflect.TypeFor[Contract](), ""); err != nil {
		return nil, err
	}
	// The free-form sections are taken from the generic tree below, so the
	// typed decode skips them: the YAML decoder compares every key of a
	// mapping it decodes into a Go map with every other key (quadratic: 100k
	// metadata keys took 80 s), while the generic tree is built in one pass
	// with a hash set.
	dropFreeForm(root, reflect.TypeFor[Contract]())
	var c Contract
	if err := root.Decode(&c); err != nil {
		// checkShape has already verified every kind Decode cares about;
		// this is a backstop that still reports a position when it can.
		return nil, yamlError(err)
	}
	// Free-form sections come from the generic tree so that they hold the
	// same JSON-compatible values DecodeGeneric returns (int64, not int;
	// dates as written).
	doc, _ := generic.(map[string]any)
	c.Metadata = asMap(doc["metadata"])
	c.Extensions = asMap(doc["extensions"])
	if cfgs, ok := doc["configurations"].([]any); ok {
		for i := range c.Configurations {
			if i < len(cfgs) {
				if item, ok := cfgs[i].(map[string]any); ok {
					c.Configurations[i].Values = asMap(item["values"])
				}
			}
		}
	}
	return &c, nil
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// DecodeGeneric decodes a pacto.yaml document into a JSON-compatible tree:
// map[string]any, []any, string, bool, int64, float64 and nil. It applies
// the same limits as Parse (size, depth, alias expansion, one document,
// mapping root) and keeps YAML dates and timestamps as their literal text.
// The tree is what JSON Schema validation runs on.
func DecodeGeneric(data []byte) (any, error) {
	return DecodeGenericLimit(data, MaxBytes)
}

// DecodeGenericLimit is DecodeGeneric with a caller-chosen size limit, for
// YAML or JSON documents other than pacto.yaml (interface specs, schemas).
// The root must still be a mapping.
func DecodeGenericLimit(data []byte, maxBytes int) (any, error) {
	root, err := parseRoot(data, maxBytes)
	if err != nil {
		return nil, err
	}
	return toGeneric(root)
}

// parseRoot decodes exactly one YAML document whose root is a mapping and
// returns that mapping node.
func parseRoot(data []byte, maxBytes int) (*yaml.Node, error) {
	if len(data) > maxBytes {
		return nil, &ParseError{Message: fmt.Sprintf("document is %d bytes; the limit is %d bytes", len(data), maxBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ParseError{Message: "document is empty; expected a YAML mapping with pactoVersion and service"}
		}
		pe := yamlError(err)
		if strings.Contains(pe.Message, "cannot start any token") && bytes.ContainsRune(data, '\t') {
			pe.Message += " (YAML does not allow tabs for indentation; use spaces)"
		}
		return nil, pe
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, yamlError(err)
	default:
		return nil, nodeError(&next, "found a second YAML document; exactly one document is allowed")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, nodeError(&doc, "expected one YAML document")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nodeError(root, "the document root must be a mapping (key: value pairs), got %s", describe(root))
	}
	return root, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)(?:, column (\d+))?: (.*)`)

// yamlError turns a decoder error into a *ParseError, lifting the line
// (and column, when the decoder gives one) out of its text.
func yamlError(err error) *ParseError {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		return &ParseError{Line: line, Column: col, Message: m[3]}
	}
	return &ParseError{Message: msg}
}

// generic converts a YAML node tree into JSON-compatible values while
// enforcing the depth and alias limits.
type generic struct {
	aliasNodes int // nodes produced so far by expanding aliases
}

func toGeneric(root *yaml.Node) (any, error) {
	var g generic
	return g.value(root, 0, false)
}

func (g *generic) value(n *yaml.Node, depth int, inAlias bool) (any, error) {
	if inAlias {
		g.aliasNodes++
		if g.aliasNodes > MaxAliasNodes {
			return nil, nodeError(n, "YAML aliases expand to more than %d nodes; the document looks like an alias bomb", MaxAliasNodes)
		}
	}
	if depth > MaxDepth {
		return nil, nodeError(n, "nesting is deeper than %d levels", MaxDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nodeError(n, "alias %q refers to no anchor", n.Value)
		}
		return g.value(n.Alias, depth, true)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := g.key(n.Content[i], inAlias)
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, nodeError(n.Content[i], "key %q appears twice in the same mapping", k)
			}
			v, err := g.value(n.Content[i+1], depth+1, inAlias)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := g.value(c, depth+1, inAlias)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalar(n)
	default:
		return nil, nodeError(n, "unexpected YAML node")
	}
}

func (g *generic) key(k *yaml.Node, inAlias bool) (string, error) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		if inAlias {
			g.aliasNodes++
		}
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", nodeError(k, "mapping keys must be plain scalars, got %s", describe(k))
	}
	if k.ShortTag() == "!!merge" {
		return "", nodeError(k, "YAML merge keys (<<) are not supported; write the fields out")
	}
	return k.Value, nil
}

// scalar resolves one scalar to a JSON-compatible value. Timestamps are
// re-tagged as strings in place so a later typed decode keeps their text.
func scalar(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!binary":
		return n.Value, nil
	case "!!timestamp":
		n.Tag = "!!str"
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, nodeError(n, "invalid boolean %q", n.Value)
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, nodeError(n, "integer %q is out of range", n.Value)
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, nodeError(n, "invalid number %q", n.Value)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, nodeError(n, "number %q has no JSON representation", n.Value)
		}
		return f, nil
	default:
		return nil, nodeError(n, "YAML tag %s is not supported; use plain strings, numbers, booleans, lists and mappings", tag)
	}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str", "!!timestamp":
			return fmt.Sprintf("the string %q", clip(n.Value))
		case "!!null":
			return "null"
		case "!!bool":
			return "the boolean " + n.Value
		case "!!int", "!!float":
			return "the number " + clip(n.Value)
		}
		return "a " + n.ShortTag() + " scalar"
	}
	return "a document"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// checkShape verifies that the node tree fits the Go type t: known field
// names only, and the right kind of node for every typed field. It runs
// after toGeneric, so aliases are known to be bounded.
func checkShape(n *yaml.Node, t reflect.Type, path string) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	where := path
	if where == "" {
		where = "the document root"
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return nodeError(n, "%s must be a mapping, got %s", where, describe(n))
		}
		fields := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			f, ok := fields.byName[k.Value]
			if !ok {
				return nodeError(k, "unknown field %q in %s; allowed fields: %s", k.Value, where, strings.Join(fields.names, ", "))
			}
			if err := checkShape(n.Content[i+1], f.Type, join(path, k.Value)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return nodeError(n, "%s must be a list, got %s", where, describe(n))
		}
		for i, c := range n.Content {
			if err := checkShape(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return nodeError(n, "%s must be a mapping, got %s", where, describe(n))
		}
		return nil
	case reflect.String:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!timestamp") {
			hint := ""
			if n.Kind == yaml.ScalarNode && n.ShortTag() != "!!null" {
				hint = fmt.Sprintf(" (quote it: %q)", n.Value)
			}
			return nodeError(n, "%s must be a string, got %s%s", where, describe(n), hint)
		}
		return nil
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			return nodeError(n, "%s must be true or false, got %s", where, describe(n))
		}
		return nil
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			return nodeError(n, "%s must be an integer, got %s", where, describe(n))
		}
		var i int
		if err := n.Decode(&i); err != nil {
			return nodeError(n, "%s: integer %s is out of range", where, clip(n.Value))
		}
		return nil
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
			return nodeError(n, "%s must be a number, got %s", where, describe(n))
		}
		return nil
	}
	return nil
}

// dropFreeForm replaces, in the tree n of Go type t, every value decoded
// into a Go map by an empty mapping. It runs after checkShape, so struct
// mappings hold known fields only. The value node is replaced in its
// parent, never emptied in place: an alias may share it.
func dropFreeForm(n *yaml.Node, t reflect.Type) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := structFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			f, ok := fields.byName[k.Value]
			if !ok {
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Map {
				n.Content[i+1] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Content[i+1].Line, Column: n.Content[i+1].Column}
				continue
			}
			dropFreeForm(n.Content[i+1], f.Type)
		}
	case reflect.Slice:
		for _, c := range n.Content {
			dropFreeForm(c, t.Elem())
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

type fieldSet struct {
	byName map[string]reflect.StructField
	names  []string
}

var fieldCache sync.Map // reflect.Type → fieldSet

func structFields(t reflect.Type) fieldSet {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.(fieldSet)
	}
	fs := fieldSet{byName: make(map[string]reflect.StructField, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fs.byName[name] = f
		fs.names = append(fs.names, name)
	}
	slices.Sort(fs.names)
	fieldCache.Store(t, fs)
	return fs
}
