package openapitools

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// marshalTree is json.Marshal for a decoded document tree (maps, slices,
// strings, numbers, booleans, nil), byte for byte: keys sorted, the same
// escaping. encoding/json reaches each map through reflection and sorts
// its keys as reflect values, which made the input schemas and response
// digests of GitHub's 1,223 operations a tenth of start-up CPU. Any value
// of another type, and any string that needs an escape other than \" \\
// \n \r \t, is written by encoding/json itself (TestMarshalTreeMatches).
func marshalTree(v any) ([]byte, error) {
	return appendTree(nil, v)
}

func appendTree(b []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendTreeString(b, t)
	case bool:
		return strconv.AppendBool(b, t), nil
	case int64:
		return strconv.AppendInt(b, t, 10), nil
	case int:
		return strconv.AppendInt(b, int64(t), 10), nil
	case map[string]any:
		if t == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTreeString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendTree(b, t[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if t == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, e := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendTree(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

// appendTreeString writes s quoted as encoding/json does (HTML characters
// escaped), handing it to encoding/json when it holds anything but
// printable ASCII, valid UTF-8 other than U+2028 and U+2029, and the
// characters of the short escapes (control characters other than
// newline, return and tab, for one).
func appendTreeString(b []byte, s string) ([]byte, error) {
	start := len(b)
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			case c < 0x20:
				return appendMarshalled(b[:start], s)
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return appendMarshalled(b[:start], s)
		}
		b = append(b, s[i:i+size]...)
		i += size
	}
	return append(b, '"'), nil
}

const hexDigits = "0123456789abcdef"

func appendMarshalled(b []byte, v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}
