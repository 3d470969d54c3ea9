package contract_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle/contract"
)

// TestSchemaDocumentsEveryProperty: the MCP server explains fields from the
// schema, so every property must say what it is.
func TestSchemaDocumentsEveryProperty(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(contract.Schema, &doc); err != nil {
		t.Fatalf("Schema is not JSON: %v", err)
	}
	if got := doc["$id"]; got != contract.SchemaID {
		t.Errorf("$id = %v, want %s", got, contract.SchemaID)
	}
	var walk func(path string, node any)
	walk = func(path string, node any) {
		switch n := node.(type) {
		case map[string]any:
			if props, ok := n["properties"].(map[string]any); ok {
				for name, p := range props {
					pm, _ := p.(map[string]any)
					if pm["$ref"] != nil {
						continue
					}
					if d, _ := pm["description"].(string); d == "" && !strings.Contains(path, "oneOf") && !strings.Contains(path, "allOf") {
						t.Errorf("%s/properties/%s has no description", path, name)
					}
				}
			}
			for k, v := range n {
				walk(path+"/"+k, v)
			}
		case []any:
			for i, v := range n {
				walk(fmt.Sprintf("%s/%d", path, i), v)
			}
		}
	}
	walk("#", doc)
}

// TestSchemaMatchesModel keeps the Go model and the schema in step: every
// schema property has a Go field with the same name and vice versa.
func TestSchemaMatchesModel(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(contract.Schema, &doc); err != nil {
		t.Fatal(err)
	}
	defs := doc["$defs"].(map[string]any)
	resolve := func(n map[string]any) map[string]any {
		if ref, ok := n["$ref"].(string); ok {
			return defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		}
		if items, ok := n["items"].(map[string]any); ok {
			return resolveItems(defs, items)
		}
		return n
	}
	var check func(path string, node map[string]any, typ reflect.Type)
	check = func(path string, node map[string]any, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct {
			return
		}
		props, _ := node["properties"].(map[string]any)
		var goNames, schemaNames []string
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			goNames = append(goNames, name)
			if p, ok := props[name].(map[string]any); ok {
				check(path+"."+name, resolve(p), f.Type)
			}
		}
		for n := range props {
			schemaNames = append(schemaNames, n)
		}
		slices.Sort(goNames)
		slices.Sort(schemaNames)
		if !slices.Equal(goNames, schemaNames) {
			t.Errorf("%s: Go fields %v, schema properties %v", path, goNames, schemaNames)
		}
	}
	check("contract", doc, reflect.TypeFor[contract.Contract]())
}

func resolveItems(defs map[string]any, items map[string]any) map[string]any {
	if ref, ok := items["$ref"].(string); ok {
		return defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
	return items
}

// TestSchemaTreeDecodedOnce: every caller gets the one decoded tree.
func TestSchemaTreeDecodedOnce(t *testing.T) {
	a, b := contract.SchemaTree(), contract.SchemaTree()
	if a["$id"] != contract.SchemaID {
		t.Fatalf("SchemaTree()[$id] = %v, want %s", a["$id"], contract.SchemaID)
	}
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("SchemaTree decoded the schema twice")
	}
}
