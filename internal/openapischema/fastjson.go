package openapischema

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kubepact/kubepact/bundle/contract"
)

// errFastJSON stops fastJSON at anything it does not take: the document is
// then decoded again by contract.DecodeJSONStream, which says what is wrong
// and where (or takes what fastJSON only declined, such as a \u escape's
// edge cases).
var errFastJSON = errors.New("fastjson: declined")

// fastJSON decodes a JSON document from r into the tree and key order
// contract.DecodeJSONStream returns for the same document, without
// encoding/json's Decoder.Token: Token runs the scanner over every scalar
// two or three times and allocates a SyntaxError value for each one it ends
// (GitHub's REST API description: about a third of kubepact's start-up
// CPU). It takes valid documents only; on anything else (a syntax error, a
// duplicate key, nesting deeper than contract.MaxDepth, a number out of
// range, more than maxBytes) it returns errFastJSON and the caller decodes
// the document the slow way, for the error message. What it accepts,
// DecodeJSONStream accepts and decodes the same (TestFastJSONMatches).
func fastJSON(r io.Reader, maxBytes, orderDepth int) (any, map[string][]string, error) {
	d := &fastDecoder{r: bufio.NewReaderSize(io.LimitReader(r, int64(maxBytes)+1), 64<<10), orderDepth: orderDepth, max: int64(maxBytes)}
	if orderDepth > 0 {
		d.order = map[string][]string{}
	}
	if bom, err := d.r.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = d.r.Discard(3)
		d.n += 3
	}
	if c, err := d.next(); err != nil || c != '{' {
		return nil, nil, errFastJSON
	}
	root, err := d.object(0, "")
	if err != nil {
		return nil, nil, err
	}
	if _, err := d.next(); !errors.Is(err, io.EOF) || d.n > d.max {
		return nil, nil, errFastJSON
	}
	return root, d.order, nil
}

type fastDecoder struct {
	r          *bufio.Reader
	n, max     int64 // bytes read; the limit
	orderDepth int
	order      map[string][]string
	buf        []byte // a string's bytes as they are read
}

// next returns the next byte that is not white space.
func (d *fastDecoder) next() (byte, error) {
	for {
		c, err := d.r.ReadByte()
		if err != nil {
			return 0, err
		}
		d.n++
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c, nil
	}
}

// object reads the members of an object whose "{" was just read, as
// contract's jsonDecoder.object does.
func (d *fastDecoder) object(depth int, ptr string) (map[string]any, error) {
	if depth > contract.MaxDepth {
		return nil, errFastJSON
	}
	m := map[string]any{}
	var keys []string
	c, err := d.next()
	if err != nil {
		return nil, errFastJSON
	}
	if c != '}' {
		for {
			if c != '"' {
				return nil, errFastJSON
			}
			k, err := d.str()
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup {
				return nil, errFastJSON
			}
			if c, err = d.next(); err != nil || c != ':' {
				return nil, errFastJSON
			}
			var child string
			if depth < d.orderDepth {
				keys = append(keys, k)
			}
			if depth+1 < d.orderDepth {
				child = ptr + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			}
			if c, err = d.next(); err != nil {
				return nil, errFastJSON
			}
			v, err := d.value(c, depth+1, child)
			if err != nil {
				return nil, err
			}
			m[k] = v
			if c, err = d.next(); err != nil {
				return nil, errFastJSON
			}
			if c == '}' {
				break
			}
			if c != ',' {
				return nil, errFastJSON
			}
			if c, err = d.next(); err != nil {
				return nil, errFastJSON
			}
		}
	}
	if depth < d.orderDepth {
		d.order[ptr] = keys
	}
	return m, nil
}

// value reads the value whose first byte c was just read.
func (d *fastDecoder) value(c byte, depth int, ptr string) (any, error) {
	switch c {
	case '{':
		return d.object(depth, ptr)
	case '[':
		if depth > contract.MaxDepth {
			return nil, errFastJSON
		}
		s := []any{}
		c, err := d.next()
		if err != nil {
			return nil, errFastJSON
		}
		if c == ']' {
			return s, nil
		}
		for {
			v, err := d.value(c, depth+1, "")
			if err != nil {
				return nil, err
			}
			s = append(s, v)
			if c, err = d.next(); err != nil {
				return nil, errFastJSON
			}
			if c == ']' {
				return s, nil
			}
			if c != ',' {
				return nil, errFastJSON
			}
			if c, err = d.next(); err != nil {
				return nil, errFastJSON
			}
		}
	case '"':
		return d.str()
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	if c == '-' || c >= '0' && c <= '9' {
		return d.number(c)
	}
	return nil, errFastJSON
}

// literal reads the rest of word (true, false or null), whose first byte
// was just read, and checks the byte after it.
func (d *fastDecoder) literal(word string) error {
	for i := 1; i < len(word); i++ {
		c, err := d.r.ReadByte()
		if err != nil || c != word[i] {
			return errFastJSON
		}
		d.n++
	}
	return d.endOfScalar()
}

// endOfScalar declines a scalar run on into a letter or digit ("truex",
// "1a"), which the byte-at-a-time reading would otherwise split.
func (d *fastDecoder) endOfScalar() error {
	b, err := d.r.Peek(1)
	if err != nil {
		return nil //nolint:nilerr // end of input: whoever reads next sees it
	}
	switch b[0] {
	case ' ', '\t', '\r', '\n', ',', '}', ']':
		return nil
	}
	return errFastJSON
}

// number reads a number whose first byte c was just read, checking it
// against JSON's grammar, and converts it as contract's jsonDecoder does:
// int64 for an integer that fits, float64 otherwise.
func (d *fastDecoder) number(c byte) (any, error) {
	d.buf = append(d.buf[:0], c)
	for {
		b, err := d.r.Peek(1)
		if err != nil || !strings.ContainsRune("0123456789+-.eE", rune(b[0])) {
			break
		}
		d.buf = append(d.buf, b[0])
		_, _ = d.r.Discard(1)
		d.n++
	}
	if !validNumber(d.buf) {
		return nil, errFastJSON
	}
	if err := d.endOfScalar(); err != nil {
		return nil, err
	}
	s := string(d.buf)
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, errFastJSON
	}
	return f, nil
}

// validNumber reports whether b is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// str reads a string whose opening quote was just read. Strings of valid
// UTF-8 with no escape but the one-letter ones are decoded here; one with a
// \u escape or invalid UTF-8 goes to encoding/json, whose replacement of
// bad sequences and lone surrogates is what the slow path does.
func (d *fastDecoder) str() (string, error) {
	d.buf = d.buf[:0]
	raw := false // \u escape seen: decode the quoted bytes with encoding/json
	ascii := true
	for {
		// Take the run of plain bytes buffered ahead in one step.
		if d.r.Buffered() == 0 {
			if _, err := d.r.Peek(1); err != nil {
				return "", errFastJSON
			}
		}
		ahead, _ := d.r.Peek(d.r.Buffered())
		run := 0
		for run < len(ahead) {
			if c := ahead[run]; c == '"' || c == '\\' || c < 0x20 {
				break
			} else if c >= 0x80 {
				ascii = false
			}
			run++
		}
		if run > 0 {
			d.buf = append(d.buf, ahead[:run]...)
			_, _ = d.r.Discard(run)
			d.n += int64(run)
			continue
		}
		c, err := d.r.ReadByte()
		if err != nil {
			return "", errFastJSON
		}
		d.n++
		switch {
		case c == '"':
			if raw {
				var s string
				if err := json.Unmarshal(append(append([]byte{'"'}, d.buf...), '"'), &s); err != nil {
					return "", errFastJSON
				}
				return s, nil
			}
			if !ascii && !utf8.Valid(d.buf) {
				var s string
				if err := json.Unmarshal(append(append([]byte{'"'}, d.buf...), '"'), &s); err != nil {
					return "", errFastJSON
				}
				return s, nil
			}
			return string(d.buf), nil
		case c < 0x20:
			return "", errFastJSON
		case c >= 0x80:
			ascii = false
			d.buf = append(d.buf, c)
		case c == '\\':
			e, err := d.r.ReadByte()
			if err != nil {
				return "", errFastJSON
			}
			d.n++
			if raw {
				d.buf = append(d.buf, '\\', e)
				continue
			}
			switch e {
			case '"', '\\', '/':
				d.buf = append(d.buf, e)
			case 'b':
				d.buf = append(d.buf, '\b')
			case 'f':
				d.buf = append(d.buf, '\f')
			case 'n':
				d.buf = append(d.buf, '\n')
			case 'r':
				d.buf = append(d.buf, '\r')
			case 't':
				d.buf = append(d.buf, '\t')
			case 'u':
				// Re-escape what was decoded so far and hand the whole
				// string to encoding/json.
				q, _ := json.Marshal(string(d.buf))
				d.buf = append(append(d.buf[:0], q[1:len(q)-1]...), '\\', 'u')
				raw = true
			default:
				return "", errFastJSON
			}
		default:
			d.buf = append(d.buf, c)
		}
	}
}
