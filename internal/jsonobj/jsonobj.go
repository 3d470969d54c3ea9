// Package jsonobj inspects JSON objects for what encoding/json silently
// accepts: a key given twice, where decoding keeps the last value. Tool
// arguments are untrusted, and a proxy or an approval prompt that reads the
// first value would see a different call from the one made. It also
// resolves JSON pointers in decoded trees (Pointer), for the OpenAPI
// projection and the schema-cycle check alike, and finds numbers written
// with more digits or a larger exponent than exact arithmetic on them can
// afford (LongNumber).
//
// It imports the standard library only, so any package may use it.
package jsonobj

import (
	"bytes"
	"encoding/json"
)

// DuplicateKey returns the first top-level key that the JSON object raw
// gives twice, and whether there is one. It reports none when raw is not a
// JSON object; nested objects are left to whoever decodes them.
func DuplicateKey(raw []byte) (key string, found bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := tok.(string)
		if seen[name] {
			return name, true
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}
