package openapitools

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// route returns the operation's kin-openapi route, built on first use.
func (op *operation) route() *Route {
	op.kinOnce.Do(func() { op.kinRoute = op.wireRoute() })
	return op.kinRoute
}

// wireRoute returns the route kin-openapi validates one operation's
// requests against, built from what projection already holds for that
// operation alone: its parameters (location, style, explode, required) and
// its request body's media type, each with its schema cut down to what
// decoding the wire form needs (type, format, items, properties,
// additionalProperties), in a one-path document that declares OpenAPI 3.0.
//
// A request is validated once. The schemas' rules (enums, bounds,
// patterns, compositions, every 2020-12 keyword) are checked by the
// argument validator, resolved from the same converted schemas; kin checks
// only what the serialized request shows — required parameters are
// present, each value decodes to its declared type and format from its
// style, the content type is the one the operation takes, a required body
// is there and parses. With only those keywords left, 3.0 and 3.1
// semantics agree, so kin's 3.0 validator, which compiles nothing, does it
// for every dialect.
//
// Nothing here reads the document: loading a large API's whole document
// into kin-openapi on a first call took seconds and doubled the memory a
// server keeps. The route is small (a few KiB) and built per operation on
// its first call; nil when the operation's input schema cannot be read.
func (op *operation) wireRoute() *Route {
	var input struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(op.input, &input); err != nil {
		return nil
	}
	sk := &skeletons{defs: input.Defs, named: map[string]*openapi3.Schema{}}
	schemaOf := func(arg string) *openapi3.SchemaRef {
		var node any
		if err := json.Unmarshal(input.Properties[arg], &node); err != nil {
			return nil
		}
		return sk.ref(node, 0)
	}
	kop := &openapi3.Operation{OperationID: op.operationID, Responses: openapi3.NewResponses()}
	for _, pr := range op.params {
		explode := pr.explode
		p := &openapi3.Parameter{Name: pr.name, In: pr.in, Required: pr.required, Style: pr.style, Explode: &explode, AllowReserved: pr.allowReserved}
		if pr.contentType != "" {
			p.Content = openapi3.Content{pr.contentType: &openapi3.MediaType{Schema: schemaOf(pr.arg)}}
		} else {
			p.Schema = schemaOf(pr.arg)
			// kin-openapi reads an untyped parameter (const, a boolean
			// schema, a composition) as no value at all: read it as what
			// the serializer sends, a string unless it is structured.
			if v := p.Schema.Value; v.Type == nil {
				typed := *v // a $defs copy may be shared
				typed.Type = &openapi3.Types{cmp.Or(pr.kind, openapi3.TypeString)}
				p.Schema = &openapi3.SchemaRef{Value: &typed}
			}
		}
		kop.Parameters = append(kop.Parameters, &openapi3.ParameterRef{Value: p})
	}
	if b := op.body; b != nil {
		kop.RequestBody = &openapi3.RequestBodyRef{Value: &openapi3.RequestBody{
			Required: b.required,
			Content:  openapi3.Content{b.contentType: &openapi3.MediaType{Schema: schemaOf("body")}},
		}}
	}
	item := &openapi3.PathItem{}
	item.SetOperation(op.method, kop)
	doc := &openapi3.T{OpenAPI: "3.0.3", Info: &openapi3.Info{Title: op.iface.name, Version: "0"},
		Paths: openapi3.NewPaths(openapi3.WithPath(op.path, item))}
	return &Route{Doc: doc, PathItem: item, Operation: kop,
		Kin: &routers.Route{Spec: doc, Path: op.path, PathItem: item, Method: op.method, Operation: kop}}
}

// maxSkeletonDepth bounds how deep a skeleton follows nested schemas; what
// lies deeper is left untyped (kin-openapi then accepts any value there,
// which the argument validator has checked).
const maxSkeletonDepth = 64

// skeletons copies JSON Schema 2020-12 nodes of one input schema down to
// their wire shape. A schema of $defs is copied once, so recursive schemas
// stay finite.
type skeletons struct {
	defs  map[string]json.RawMessage
	named map[string]*openapi3.Schema
}

func (sk *skeletons) ref(node any, depth int) *openapi3.SchemaRef {
	if s := sk.schema(node, depth); s != nil {
		return &openapi3.SchemaRef{Value: s}
	}
	return &openapi3.SchemaRef{Value: &openapi3.Schema{}}
}

// schema returns the wire shape of node; nil when it has none to check.
func (sk *skeletons) schema(node any, depth int) *openapi3.Schema {
	m, ok := node.(map[string]any)
	if !ok || depth > maxSkeletonDepth {
		return nil
	}
	if _, typed := m["type"]; !typed {
		if ref, ok := m["$ref"].(string); ok {
			return sk.def(ref, depth)
		}
		// A composition of one branch (a $ref with siblings, converted)
		// has that branch's shape.
		if all, ok := m["allOf"].([]any); ok {
			for _, branch := range all {
				if s := sk.schema(branch, depth+1); s != nil && s.Type != nil {
					return s
				}
			}
		}
		return nil
	}
	s := &openapi3.Schema{}
	switch t := m["type"].(type) {
	case string:
		s.Type = &openapi3.Types{t}
	case []any:
		var types openapi3.Types
		for _, v := range t {
			if name, _ := v.(string); name == "null" {
				s.Nullable = true
			} else if name != "" {
				types = append(types, name)
			}
		}
		if len(types) == 1 {
			s.Type = &types
		}
	}
	s.Format, _ = m["format"].(string)
	if items, ok := m["items"].(map[string]any); ok {
		s.Items = sk.ref(items, depth+1)
	}
	if props, ok := m["properties"].(map[string]any); ok && len(props) > 0 {
		s.Properties = make(openapi3.Schemas, len(props))
		for name, p := range props {
			s.Properties[name] = sk.ref(p, depth+1)
		}
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		s.AdditionalProperties.Schema = sk.ref(ap, depth+1)
	}
	return s
}

// def returns the wire shape of the $defs schema ref names ("#/$defs/…").
func (sk *skeletons) def(ref string, depth int) *openapi3.Schema {
	key, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil
	}
	key = strings.NewReplacer("~1", "/", "~0", "~").Replace(key)
	if s, seen := sk.named[key]; seen {
		return s
	}
	raw, ok := sk.defs[key]
	if !ok {
		return nil
	}
	var node any
	if err := json.Unmarshal(raw, &node); err != nil {
		return nil
	}
	// Entered before its children: a reference back to it finds it.
	s := &openapi3.Schema{}
	sk.named[key] = s
	if got := sk.schema(node, depth+1); got != nil {
		*s = *got
	}
	return s
}
