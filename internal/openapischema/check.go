package openapischema

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// CheckSchemas checks that each property schema and each definition of an
// input schema decodes as a JSON Schema: what makes a validator fail to
// build once references and patterns are known to be right. Definitions
// are shared by many tools of an API; each distinct one is decoded once
// per document.
func (d *Document) CheckSchemas(input json.RawMessage) error {
	var whole struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(input, &whole); err != nil {
		return err
	}
	if d.decoded == nil {
		d.decoded = map[[sha256.Size]byte]bool{}
	}
	check := func(what, name string, raw json.RawMessage) error {
		sum := sha256.Sum256(raw)
		if d.decoded[sum] {
			return nil
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%s %s: %w", what, name, err)
		}
		d.decoded[sum] = true
		return nil
	}
	for _, name := range SortedKeys(whole.Properties) {
		if err := check("property", name, whole.Properties[name]); err != nil {
			return err
		}
	}
	for _, name := range SortedKeys(whole.Defs) {
		if err := check("definition", name, whole.Defs[name]); err != nil {
			return err
		}
	}
	return nil
}
