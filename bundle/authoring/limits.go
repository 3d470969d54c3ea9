package authoring

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxArgumentValues bounds one structured argument (metadata, interfaces,
// config_properties, …): the keys, items and values it holds, counted
// before anything is decoded or any YAML produced. Real contracts hold a
// few dozen; the bound keeps a call's work small whatever a client sends.
const MaxArgumentValues = 10_000

// checkArgumentSize counts the values of a structured argument in one
// pass over its tokens and refuses one over MaxArgumentValues.
func checkArgumentSize(field string, raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	n := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // malformed JSON is reported by the decoding that follows
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			continue
		}
		if n++; n > MaxArgumentValues {
			return argError(field, fmt.Sprintf("%q holds more than %d keys, items and values; the limit is %d per argument", field, MaxArgumentValues, MaxArgumentValues))
		}
	}
}
