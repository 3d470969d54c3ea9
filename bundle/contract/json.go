package contract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// DecodeDocument decodes an interface document or schema as what it is: a
// JSON document (name ends in .json, or the first byte that is not white
// space is "{") with a JSON decoder, anything else as YAML. YAML is not a
// strict superset of JSON — it forbids escaped surrogate pairs
// ("\ud83d\ude80", how JSON encoders write emoji as ASCII), so a valid JSON
// document must never go through the YAML parser. Both paths give the same
// tree types (map[string]any, []any, string, bool, int64, float64, nil),
// refuse duplicate keys and nest at most MaxDepth levels; the root must be
// an object.
func DecodeDocument(name string, data []byte, maxBytes int) (any, error) {
	if IsJSON(name, data) {
		tree, _, err := DecodeJSON(data, maxBytes, 0)
		return tree, err
	}
	return DecodeGenericLimit(data, maxBytes)
}

// IsJSON reports whether a document is to be read as JSON: by its name, or
// by its first byte that is not white space.
func IsJSON(name string, data []byte) bool {
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		return true
	}
	t := bytes.TrimLeft(data, " \t\r\n\ufeff")
	return len(t) > 0 && t[0] == '{'
}

// DecodeJSON decodes one JSON object into the tree DecodeGeneric returns.
// Integers that fit int64 become int64, other numbers float64 (a number
// out of float64's range is an error, as for encoding/json). Objects
// nested fewer than orderDepth levels deep (0: none) have their key order
// returned, by JSON pointer ("" is the root, "/paths" its paths member).
func DecodeJSON(data []byte, maxBytes, orderDepth int) (any, map[string][]string, error) {
	if len(data) > maxBytes {
		return nil, nil, &ParseError{Message: fmt.Sprintf("document is %d bytes; the limit is %d bytes", len(data), maxBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	d := &jsonDecoder{data: data, dec: json.NewDecoder(bytes.NewReader(data)), orderDepth: orderDepth}
	return d.decode()
}

// decode reads the one object the document is.
func (d *jsonDecoder) decode() (any, map[string][]string, error) {
	orderDepth := d.orderDepth
	d.dec.UseNumber()
	if orderDepth > 0 {
		d.order = map[string][]string{}
	}
	tok, err := d.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, &ParseError{Message: "document is empty; expected a JSON object"}
		}
		return nil, nil, d.syntax(err)
	}
	if tok != json.Delim('{') {
		return nil, nil, d.errorf("the document root must be an object, got %s", describeToken(tok))
	}
	root, err := d.object(0, "")
	if err != nil {
		return nil, nil, err
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, nil, d.syntax(err)
		}
		return nil, nil, d.errorf("found more content after the JSON object; exactly one value is allowed")
	}
	return root, d.order, nil
}

// DecodeJSONStream is DecodeJSON reading the document from r instead of
// a slice, so a large document is decoded without a copy of it held
// beside the tree (a 13 MB API description is about a fifth of what its
// projection holds at its peak). reread returns the document's bytes
// again; it is called only to place an error at its line and column.
func DecodeJSONStream(r io.Reader, maxBytes, orderDepth int, reread func() ([]byte, error)) (any, map[string][]string, error) {
	cr := &countingReader{r: io.LimitReader(r, int64(maxBytes)+1)}
	br := bufio.NewReader(cr)
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	d := &jsonDecoder{dec: json.NewDecoder(br), orderDepth: orderDepth, reread: reread}
	tree, order, err := d.decode()
	if cr.n > int64(maxBytes) {
		return nil, nil, &ParseError{Message: fmt.Sprintf("document is more than %d bytes; the limit is %d bytes", maxBytes, maxBytes)}
	}
	return tree, order, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type jsonDecoder struct {
	data []byte
	// reread returns the document when data is not kept (DecodeJSONStream),
	// for an error's position.
	reread     func() ([]byte, error)
	dec        *json.Decoder
	orderDepth int
	order      map[string][]string
}

// object reads the members of an object whose "{" was just read.
func (d *jsonDecoder) object(depth int, ptr string) (map[string]any, error) {
	if depth > MaxDepth {
		return nil, d.errorf("nesting is deeper than %d levels", MaxDepth)
	}
	m := map[string]any{}
	var keys []string
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntax(err)
		}
		k, _ := tok.(string)
		if _, dup := m[k]; dup {
			return nil, d.errorf("key %q appears twice in the same object", k)
		}
		var child string
		if depth < d.orderDepth {
			keys = append(keys, k)
		}
		if depth+1 < d.orderDepth {
			child = ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		}
		v, err := d.value(depth+1, child)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	if _, err := d.dec.Token(); err != nil { // the closing "}"
		return nil, d.syntax(err)
	}
	if depth < d.orderDepth {
		d.order[ptr] = keys
	}
	return m, nil
}

func (d *jsonDecoder) value(depth int, ptr string) (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return d.object(depth, ptr)
		}
		if depth > MaxDepth {
			return nil, d.errorf("nesting is deeper than %d levels", MaxDepth)
		}
		s := []any{}
		for d.dec.More() {
			v, err := d.value(depth+1, "")
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		if _, err := d.dec.Token(); err != nil { // the closing "]"
			return nil, d.syntax(err)
		}
		return s, nil
	case json.Number:
		return d.number(t)
	default: // string, bool, nil
		return t, nil
	}
}

func (d *jsonDecoder) number(n json.Number) (any, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, d.errorf("number %s is out of range", s)
	}
	return f, nil
}

func (d *jsonDecoder) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(d.source(), se.Offset)
		return &ParseError{Line: line, Column: col, Message: "invalid JSON: " + se.Error()}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &ParseError{Message: "invalid JSON: the document ends early"}
	}
	return &ParseError{Message: "invalid JSON: " + err.Error()}
}

func (d *jsonDecoder) errorf(format string, args ...any) error {
	line, col := position(d.source(), d.dec.InputOffset())
	return &ParseError{Line: line, Column: col, Message: fmt.Sprintf(format, args...)}
}

// source is the document's bytes (BOM removed), read again when only a
// reader was given; nil when they cannot be had.
func (d *jsonDecoder) source() []byte {
	if d.data == nil && d.reread != nil {
		if data, err := d.reread(); err == nil {
			d.data = bytes.TrimPrefix(data, []byte("\ufeff"))
		}
	}
	return d.data
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}
