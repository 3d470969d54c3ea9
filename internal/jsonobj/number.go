package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Bounds on a number written in JSON, for readers that keep numbers exact
// (json.Number) and hand them to arbitrary-precision arithmetic: a JSON
// Schema validator checking multipleOf or minimum turns a number into a
// big.Rat, whose cost grows with the digits written and, worse, with the
// exponent (1e999999 is a million-digit integer). Far larger than any
// quantity a contract describes (a 256-bit integer has 78 digits; float64
// spans exponents of about ±308), far smaller than what costs time.
const (
	MaxNumberDigits   = 100
	MaxNumberExponent = 400
)

// NumberFault is a number past the bounds: where it is and what it writes.
type NumberFault struct {
	// Path is where the number is, as DuplicateKeyPath writes paths
	// (price.amount, lines[3]); empty for a document that is a number.
	Path string
	// Digits counts the digits of its integer and fraction parts.
	Digits int
	// Exponent is its exponent as written, saturated far past the bound.
	Exponent int64
	// Prefix is the start of the number, for a message.
	Prefix string
}

// Reason says in one clause what is wrong with the number, with the
// bounds: "has 500001 digits; a number may have at most 100 digits and
// an exponent of at most ±400".
func (f NumberFault) Reason() string {
	what := fmt.Sprintf("has %d digits", f.Digits)
	if f.Digits <= MaxNumberDigits {
		what = fmt.Sprintf("has the exponent %d", f.Exponent)
	}
	return fmt.Sprintf("%s (%s); a number may have at most %d digits and an exponent of at most ±%d", what, f.Prefix, MaxNumberDigits, MaxNumberExponent)
}

// LongNumber returns the first number in the JSON document raw that is
// written with more than MaxNumberDigits digits or an exponent beyond
// ±MaxNumberExponent, and whether there is one. It converts no number, so
// its cost is linear in len(raw) whatever the numbers say: one pass over
// the bytes, and a second that finds the path only when there is a fault.
// It reports none when raw is not valid JSON: whoever decodes it says
// what is wrong.
func LongNumber(raw []byte) (NumberFault, bool) {
	if !hasLongNumber(raw) {
		return NumberFault{}, false
	}
	return longNumberPath(raw)
}

// hasLongNumber reports whether raw writes a number past the bounds,
// reading its bytes once and allocating nothing: outside strings, a
// number is the run of number characters that starts with '-' or a digit
// (true, false and null start with neither).
func hasLongNumber(raw []byte) bool {
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(raw) && isNumberByte(raw[j]) {
				j++
			}
			if past(measure(raw[i:j])) {
				return true
			}
			i = j - 1
		}
	}
	return false
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// longNumberPath finds the first number past the bounds and its path, by
// the document's tokens.
func longNumberPath(raw []byte) (NumberFault, bool) {
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return NumberFault{}, false
		}
		if expectKey {
			if tok == json.Delim('}') {
				stack = stack[:len(stack)-1]
				expectKey = valueEnded(stack)
				continue
			}
			name, _ := tok.(string)
			stack[len(stack)-1].key = name
			expectKey = false
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{object: true})
				expectKey = true
			case '[':
				stack = append(stack, &frame{})
				expectKey = valueStarts(stack)
			default: // ']'
				stack = stack[:len(stack)-1]
				expectKey = valueEnded(stack)
			}
		case json.Number:
			if f, bad := numberFault(string(t)); bad {
				f.Path = pathOf(stack)
				return f, true
			}
			expectKey = valueEnded(stack)
		default:
			expectKey = valueEnded(stack)
		}
	}
}

// numberFault measures a number literal that encoding/json accepted
// (-?digits(.digits)?([eE][+-]?digits)?) and reports whether it is past
// the bounds.
func numberFault(s string) (NumberFault, bool) {
	f := NumberFault{Prefix: s}
	if len(s) > 24 {
		f.Prefix = s[:20] + "…"
	}
	f.Digits, f.Exponent = measure(s)
	return f, past(f.Digits, f.Exponent)
}

// measure counts a number literal's digits (integer and fraction parts)
// and reads its exponent, saturated far past the bound.
func measure[T string | []byte](s T) (digits int, exponent int64) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	for i < len(s) && s[i] != 'e' && s[i] != 'E' {
		if s[i] != '.' {
			digits++
		}
		i++
	}
	if i < len(s) {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		for ; i < len(s); i++ {
			if exponent < 1e12 {
				exponent = exponent*10 + int64(s[i]-'0')
			}
		}
		if neg {
			exponent = -exponent
		}
	}
	return digits, exponent
}

func past(digits int, exponent int64) bool {
	return digits > MaxNumberDigits || exponent > MaxNumberExponent || exponent < -MaxNumberExponent
}
