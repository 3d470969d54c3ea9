package authoring

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Edits work on yaml.Node trees, never on a decoded map: comments, key order
// and the literal text of untouched scalars (expires: 2099-12-31 stays a
// date-looking plain scalar) survive a round trip.

// topLevelOrder is where a new top-level section is inserted relative to the
// ones already present; existing keys are never moved.
var topLevelOrder = []string{
	"pactoVersion", "service", "interfaces", "configurations", "policies", "dependencies",
	"state", "workload", "capabilities", "readiness", "metadata", "extensions",
}

// parseDocument parses a single-document YAML file whose root is a mapping.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty")
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("the file holds more than one YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the top level is not a mapping")
	}
	return &doc, nil
}

// encodeDocument renders a document with two-space indentation.
func encodeDocument(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// mapNode builds a mapping from alternating keys and values.
func mapNode(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		var v *yaml.Node
		switch t := kv[i+1].(type) {
		case *yaml.Node:
			v = t
		case string:
			v = strNode(t)
		case bool:
			v = boolNode(t)
		default:
			panic(fmt.Sprintf("mapNode: unsupported value %T", t))
		}
		n.Content = append(n.Content, strNode(kv[i].(string)), v)
	}
	return n
}

// keyIndex returns the index in m.Content of the key node named key, or -1.
func keyIndex(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// get returns the value node of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if i := keyIndex(m, key); i >= 0 {
		return resolveAlias(m.Content[i+1])
	}
	return nil
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// scalar returns the text of a scalar node, "" for anything else.
func scalar(n *yaml.Node) string {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// setScalar sets key in m to a scalar, keeping the existing node (and its
// comments and quoting style) when there is one. It reports whether the text
// or type changed.
func setScalar(m *yaml.Node, key string, v *yaml.Node, order []string) bool {
	if old := get(m, key); old != nil && old.Kind == yaml.ScalarNode {
		if old.Value == v.Value && old.ShortTag() == v.Tag {
			return false
		}
		old.Value, old.Tag = v.Value, v.Tag
		if v.Tag != "!!str" {
			old.Style = 0
		}
		return true
	}
	set(m, key, v, order)
	return true
}

// set puts key: v into mapping m. An existing value is replaced in place; a
// new key goes after the last present key that precedes it in order (or at
// the end when order does not name it).
func set(m *yaml.Node, key string, v *yaml.Node, order []string) {
	if i := keyIndex(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	at := len(m.Content)
	if rank := slices.Index(order, key); rank >= 0 {
		at = 0
		for i := 0; i+1 < len(m.Content); i += 2 {
			if r := slices.Index(order, m.Content[i].Value); r >= 0 && r < rank {
				at = i + 2
			}
		}
		if at == 0 && len(m.Content) > 0 && slices.Index(order, m.Content[0].Value) < 0 {
			at = len(m.Content)
		}
	}
	m.Content = slices.Insert(m.Content, at, strNode(key), v)
}

// remove deletes key from mapping m and reports whether it was there.
func remove(m *yaml.Node, key string) bool {
	i := keyIndex(m, key)
	if i < 0 {
		return false
	}
	m.Content = slices.Delete(m.Content, i, i+2)
	return true
}

// ensureSeq returns the sequence under key, creating it when absent.
func ensureSeq(m *yaml.Node, key string, order []string) (*yaml.Node, error) {
	if s := get(m, key); s != nil {
		if s.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%q is not a list", key)
		}
		if s.Style&yaml.FlowStyle != 0 && len(s.Content) == 0 {
			s.Style = 0 // "key: []" grows into a block list
		}
		return s, nil
	}
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	set(m, key, s, order)
	return s, nil
}

// ensureMap returns the mapping under key, creating it when absent.
func ensureMap(m *yaml.Node, key string, order []string) (*yaml.Node, error) {
	if s := get(m, key); s != nil {
		if s.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%q is not a mapping", key)
		}
		if s.Style&yaml.FlowStyle != 0 && len(s.Content) == 0 {
			s.Style = 0
		}
		return s, nil
	}
	s := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	set(m, key, s, order)
	return s, nil
}

// findItem returns the index of the first mapping item of seq whose field
// equals value, or -1.
func findItem(seq *yaml.Node, field, value string) int {
	if seq == nil {
		return -1
	}
	for i, it := range seq.Content {
		if scalar(get(resolveAlias(it), field)) == value {
			return i
		}
	}
	return -1
}

// nodeEqual reports whether two nodes hold the same data (ignoring style and
// comments).
func nodeEqual(a, b *yaml.Node) bool {
	a, b = resolveAlias(a), resolveAlias(b)
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode {
		return a.Value == b.Value && a.ShortTag() == b.ShortTag()
	}
	for i := range a.Content {
		if !nodeEqual(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
