package main

import "encoding/json"

// unmarshalExtensions is appended to kin-openapi's openapi3/marsh_jsonv1.go,
// and each of openapi3's UnmarshalJSON methods that reads its Extensions
// calls it in place of unmarshalJSON(data, &x.Extensions), with skip the
// keys the method deletes from Extensions right after (kinExtensions).
//
// Upstream decodes the object's whole subtree into a map[string]any for
// its Extensions, then deletes every key it knows, and each of the types
// below does so again for its own subtree: a schema nested d objects deep
// is decoded into maps d times over, 31% of a cold --local start's CPU.
// This decodes the values of the keys it keeps as upstream does and only
// scans the ones it drops, so the map the method is left with after its
// deletes is upstream's, and so is every error:
//
//   - a dropped key is present, holding nil when its value is null and a
//     placeholder otherwise (the methods read only that, as in Operation's
//     explicitly null responses), until the method deletes it;
//   - a dropped value with a number that might not fit a float64 (one with
//     an exponent or 300 digits) is decoded, since upstream's decoding of
//     it can fail;
//   - anything that does not go as upstream's would, such as data that is
//     not an object or a value that does not decode, is handed to upstream's
//     unmarshalJSON(data, ext), whose result is returned.
func unmarshalExtensions(data []byte, ext *map[string]any, skip ...string) error {
	m, ok := decodeExtensions(data, skip)
	if !ok {
		return unmarshalJSON(data, ext)
	}
	*ext = m
	return nil
}

// decodeExtensions is unmarshalExtensions' decoding of data, valid JSON
// (the methods call it after decoding data into their struct), reading
// the object's members in one pass. It is not ok when data is not an
// object, or a key or a kept value does not decode, or anything else
// looks other than expected: the caller then decodes as upstream does.
func decodeExtensions(data []byte, skip []string) (map[string]any, bool) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	m := map[string]any{}
	i = skipJSONSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, skipJSONSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return nil, false
		}
		kend := jsonValueEnd(data, i)
		if kend < 0 {
			return nil, false
		}
		k, ok := extensionKey(data[i:kend])
		if !ok {
			return nil, false
		}
		i = skipJSONSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, false
		}
		i = skipJSONSpace(data, i+1)
		vend := jsonValueEnd(data, i)
		if vend < 0 {
			return nil, false
		}
		raw := data[i:vend]
		switch {
		case !extensionSkipped(k, skip) || extensionMayOverflow(raw):
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, false
			}
			m[k] = v
		case string(raw) == "null":
			m[k] = nil
		default:
			m[k] = skippedExtension{}
		}
		i = skipJSONSpace(data, vend)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case '}':
			return m, skipJSONSpace(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// extensionKey is the key a quoted JSON string decodes to: its bytes when
// they are plain ASCII without escapes, else what encoding/json makes of it.
func extensionKey(quoted []byte) (string, bool) {
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c == '\\' || c < 0x20 || c >= 0x80 {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return "", false
	}
	return k, true
}

// jsonValueEnd is the offset just past the JSON value that starts at
// data[i], which is valid JSON, or -1 when data ends first. Only strings
// and nesting are tracked: what a value holds was checked before.
func jsonValueEnd(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if i >= len(data) {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return -1
			}
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
	}
	if depth != 0 {
		return -1
	}
	return i
}

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

// skippedExtension stands for a dropped key's value that is not null.
type skippedExtension struct{}

func extensionSkipped(k string, skip []string) bool {
	for _, s := range skip {
		if s == k {
			return true
		}
	}
	return false
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// extensionMayOverflow reports whether raw, valid JSON, holds a number
// that decoding into a float64 might reject: one with an exponent, or
// with 300 digits or more (the largest float64 has 309). Strings are
// skipped; outside them a number is the only token holding a digit.
func extensionMayOverflow(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case c == '-' || (c >= '0' && c <= '9'):
			digits := 0
			for ; i < len(raw); i++ {
				c := raw[i]
				if c == 'e' || c == 'E' {
					return true
				}
				if c >= '0' && c <= '9' {
					digits++
				} else if c != '-' && c != '.' && c != '+' {
					break
				}
			}
			if digits >= 300 {
				return true
			}
			i-- // the byte that ended the number is looked at again
		}
	}
	return false
}

// unmarshalMaplike is openapi3's Paths, Responses and Callback
// UnmarshalJSON's decoding of data into m (kinMaplike), which upstream then
// walks: it keeps each x- member in the Extensions, and re-encodes each
// other member's decoded value with json.Marshal to decode it into a path
// item or response. This decodes only what upstream's walk keeps (the x-
// members), and the members whose re-encoding would not be their own bytes
// (see canonicalJSON); the rest are left as nil in m, with their bytes in
// spans for maplikeValue. Anything unexpected is decoded as upstream does.
func unmarshalMaplike(data []byte) (map[string]any, map[string][]byte, error) {
	if m, spans, ok := splitMaplike(data); ok {
		return m, spans, nil
	}
	var m map[string]any
	err := unmarshalJSON(data, &m)
	return m, nil, err
}

func splitMaplike(data []byte) (map[string]any, map[string][]byte, bool) {
	if !json.Valid(data) {
		return nil, nil, false
	}
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, false
	}
	m, spans := map[string]any{}, map[string][]byte{}
	i = skipJSONSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return m, spans, true
	}
	for {
		kend := jsonValueEnd(data, i)
		if kend < 0 || data[i] != '"' {
			return nil, nil, false
		}
		k, ok := extensionKey(data[i:kend])
		if !ok {
			return nil, nil, false
		}
		i = skipJSONSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return nil, nil, false
		}
		i = skipJSONSpace(data, i+1)
		vend := jsonValueEnd(data, i)
		if vend < 0 {
			return nil, nil, false
		}
		raw := data[i:vend]
		if len(k) >= 2 && k[:2] == "x-" || !canonicalJSON(raw) {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, nil, false
			}
			m[k] = v
			delete(spans, k)
		} else {
			m[k] = nil
			spans[k] = raw
		}
		i = skipJSONSpace(data, vend)
		if i >= len(data) {
			return nil, nil, false
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case '}':
			return m, spans, skipJSONSpace(data, i+1) == len(data)
		default:
			return nil, nil, false
		}
	}
}

// maplikeValue is upstream's json.Marshal(v) of member k, whose decoded
// value is v: a copy of its bytes when unmarshalMaplike kept them, which
// are what json.Marshal would write.
func maplikeValue(spans map[string][]byte, k string, v any) ([]byte, error) {
	if raw, ok := spans[k]; ok {
		return append([]byte(nil), raw...), nil
	}
	return json.Marshal(v)
}

// canonicalJSON reports whether raw, valid JSON, is what json.Marshal
// writes for raw's decoding into an any: no white space; object keys in
// strictly increasing byte order (so no duplicates); strings of printable
// ASCII without escapes or the characters Marshal escapes (<, > and &);
// numbers that are integers of at most 15 digits (a float64 holds them
// exactly, and Marshal writes them back as they are), not -0.
func canonicalJSON(raw []byte) bool {
	end, ok := canonicalValue(raw, 0)
	return ok && end == len(raw)
}

// canonicalValue checks the canonical value at raw[i] and returns the
// offset just past it.
func canonicalValue(raw []byte, i int) (int, bool) {
	if i >= len(raw) {
		return i, false
	}
	switch c := raw[i]; {
	case c == '{':
		i++
		if i < len(raw) && raw[i] == '}' {
			return i + 1, true
		}
		var prev []byte
		for first := true; ; first = false {
			kend, ok := canonicalString(raw, i)
			if !ok || (!first && string(raw[i+1:kend-1]) <= string(prev)) || kend >= len(raw) || raw[kend] != ':' {
				return i, false
			}
			prev = raw[i+1 : kend-1]
			if i, ok = canonicalValue(raw, kend+1); !ok || i >= len(raw) {
				return i, false
			}
			switch raw[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		i++
		if i < len(raw) && raw[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = canonicalValue(raw, i); !ok || i >= len(raw) {
				return i, false
			}
			switch raw[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return canonicalString(raw, i)
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if len(raw)-i >= len(lit) && string(raw[i:i+len(lit)]) == lit {
				return i + len(lit), true
			}
		}
		return i, false
	case c == '-' || (c >= '0' && c <= '9'):
		start := i
		if c == '-' {
			i++
		}
		digits := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		n := i - digits
		if n == 0 || n > 15 || (raw[digits] == '0' && (n > 1 || digits > start)) {
			return i, false
		}
		if i < len(raw) && (raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E') {
			return i, false
		}
		return i, true
	}
	return i, false
}

// canonicalString checks the canonical string at raw[i] and returns the
// offset just past its closing quote.
func canonicalString(raw []byte, i int) (int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return i, false
	}
	for i++; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80 || c == '<' || c == '>' || c == '&':
			return i, false
		}
	}
	return i, false
}
