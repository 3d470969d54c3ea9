package jsonobj

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// frame is one open object or array while DuplicateKeyPath walks a document.
type frame struct {
	object bool
	seen   map[string]struct{} // member names so far (objects)
	key    string              // the current member's name (objects)
	index  int                 // the current element's index (arrays)
}

// DuplicateKeyPath returns where the JSON document raw first gives a key
// twice in one object, at any depth, as a path such as
// `params.arguments.name` or `[1].method`, and whether there is one. It
// reports none when raw is not valid JSON: whoever decodes it says what is
// wrong. It walks tokens with an explicit stack, so nesting depth costs
// heap, never goroutine stack.
func DuplicateKeyPath(raw []byte) (path string, found bool) {
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(raw))
	expectKey := false // the next token is a member name or '}'
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false // io.EOF at the end, or invalid JSON
		}
		if expectKey {
			if tok == json.Delim('}') {
				stack = stack[:len(stack)-1]
				expectKey = valueEnded(stack)
				continue
			}
			top := stack[len(stack)-1]
			name, _ := tok.(string)
			top.key = name
			if _, dup := top.seen[name]; dup {
				return pathOf(stack), true
			}
			top.seen[name] = struct{}{}
			expectKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, seen: map[string]struct{}{}})
			expectKey = true
		case json.Delim('['):
			stack = append(stack, &frame{index: -1})
			expectKey = valueStarts(stack)
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			expectKey = valueEnded(stack)
		default: // a scalar
			expectKey = valueEnded(stack)
		}
	}
}

// valueStarts notes that the array just opened may hold an element.
func valueStarts(stack []*frame) bool {
	stack[len(stack)-1].index = 0
	return false
}

// valueEnded moves the innermost container past one complete value and
// reports whether a member name comes next.
func valueEnded(stack []*frame) bool {
	if len(stack) == 0 {
		return false
	}
	top := stack[len(stack)-1]
	if top.object {
		return true
	}
	top.index++
	return false
}

// pathOf renders the open containers as a path: names joined by dots,
// array indexes in brackets.
func pathOf(stack []*frame) string {
	var b []byte
	for _, f := range stack {
		if f.object {
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
			continue
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(f.index), 10)
		b = append(b, ']')
	}
	return string(b)
}
