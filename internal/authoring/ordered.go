package authoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// JSON values decoded with their object key order kept, so that editing a
// JSON file (a configuration schema) or turning agent-supplied metadata into
// YAML keeps the order the author chose. Values are nil, bool, json.Number,
// string, []any or *object.

type member struct {
	key   string
	value any
}

type object struct{ members []member }

// setAfter sets key like set, but places a new key right after the key
// named after (or at the end when that is absent).
func (o *object) setAfter(key string, v any, after string) {
	if _, ok := o.get(key); ok {
		o.set(key, v)
		return
	}
	for i, m := range o.members {
		if m.key == after {
			o.members = slices.Insert(o.members, i+1, member{key, v})
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

func (o *object) set(key string, v any) {
	for i, m := range o.members {
		if m.key == key {
			o.members[i].value = v
			return
		}
	}
	o.members = append(o.members, member{key, v})
}

// parseOrdered decodes one JSON value from raw, rejecting trailing data and
// duplicate keys.
func parseOrdered(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

const maxJSONDepth = 100

func parseValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, errors.New("JSON nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				if seen[k] {
					return nil, fmt.Errorf("duplicate key %q", k)
				}
				seen[k] = true
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.members = append(o.members, member{k, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // nil, bool, json.Number, string
	}
}

// encodeOrdered renders v as indented JSON with a trailing newline.
func encodeOrdered(v any) []byte {
	var b bytes.Buffer
	writeOrdered(&b, v, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func writeOrdered(b *bytes.Buffer, v any, depth int) {
	pad := func(d int) { b.WriteString(strings.Repeat("  ", d)) }
	switch t := v.(type) {
	case *object:
		if len(t.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range t.members {
			pad(depth + 1)
			k, _ := json.Marshal(m.key)
			b.Write(k)
			b.WriteString(": ")
			writeOrdered(b, m.value, depth+1)
			if i < len(t.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		pad(depth)
		b.WriteByte('}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range t {
			pad(depth + 1)
			writeOrdered(b, e, depth+1)
			if i < len(t)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		pad(depth)
		b.WriteByte(']')
	default:
		s, err := json.Marshal(t)
		if err != nil {
			s = []byte("null")
		}
		b.Write(s)
	}
}

// toNode converts an ordered JSON value into a YAML node.
func toNode(v any) *yaml.Node {
	switch t := v.(type) {
	case *object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, m := range t.members {
			n.Content = append(n.Content, strNode(m.key), toNode(m.value))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range t {
			n.Content = append(n.Content, toNode(e))
		}
		return n
	case string:
		return strNode(t)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(t)}
	case json.Number:
		tag := "!!float"
		if _, err := t.Int64(); err == nil {
			tag = "!!int"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}
	default:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
}
