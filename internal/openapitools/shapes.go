package openapitools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/schemacycle"
)

// Shape is one OpenAPI operation's request and response shapes in JSON
// Schema 2020-12, each a self-contained document (its references in its
// own $defs), for checking a payload against the contract without calling
// the service (package internal/payload). Names are the tool names Project
// gives, whatever the exposure policy.
type Shape struct {
	Name        string
	Interface   string
	Method      string // upper case
	Path        string // as written in the spec
	OperationID string
	Summary     string
	// Parameters is an object schema of the operation's parameters by
	// argument name (path-item and operation level merged), admitting no
	// other property; nil when the operation takes none.
	Parameters json.RawMessage
	// Body is the request body's schema; nil when there is none.
	Body         json.RawMessage
	BodyRequired bool
	// BodyType is the body's media type as chosen for a call.
	BodyType string
	// Responses are the declared responses, in status order.
	Responses []ResponseShape
	// Problem says why no request shape could be built (an unresolvable
	// reference, a schema no validator can evaluate); the request fields
	// are then nil.
	Problem string
}

// ResponseShape is one declared response.
type ResponseShape struct {
	// Status is as written: "200", "2XX" or "default".
	Status      string
	Description string
	// MediaType is the JSON media type whose schema Schema is; empty when
	// the response declares no JSON body.
	MediaType string
	// Schema is the body's schema; nil when the response has no JSON
	// body, and for a response whose schema cannot be converted (Problem).
	Schema  json.RawMessage
	Problem string
}

// Shapes reads every openapi interface of b and returns each operation's
// shapes, in document order. Unlike Project it needs no base URL and
// applies no exposure policy: it describes the contract, it calls nothing.
func Shapes(ctx context.Context, b *bundle.Bundle) ([]*Shape, error) {
	if b.Contract == nil {
		return nil, fmt.Errorf("bundle %s: the contract does not parse: %w", b.Source, b.ParseErr)
	}
	var specs []spec
	for _, in := range b.Contract.Interfaces {
		if in.Type == "openapi" && in.Ref != "" {
			specs = append(specs, spec{name: in.Name, file: path.Clean(strings.TrimPrefix(in.Ref, "./"))})
		}
	}
	p := &projector{opts: (&Options{AllowWrites: true}).withDefaults(), shapesOnly: true}
	var all []*operation
	for _, s := range specs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ops, _, err := p.projectSpec(b.FS, s, len(specs) > 1)
		if err != nil {
			return nil, fmt.Errorf("interface %q: %w", s.name, err)
		}
		all = append(all, ops...)
	}
	// Tool names are given across every interface at once, as Project
	// gives them, so a shape names the tool an agent would call.
	if err := nameAll(all); err != nil {
		return nil, err
	}
	out := make([]*Shape, 0, len(all))
	for _, op := range all {
		out = append(out, op.shape())
	}
	return out, nil
}

// shape is the operation's Shape; the responses were converted by
// responseShapes while the document was loaded.
func (op *operation) shape() *Shape {
	s := &Shape{Name: op.name, Interface: op.iface.name, Method: op.method, Path: op.path, OperationID: op.operationID,
		Summary: op.title, Responses: op.responses}
	if op.err != nil {
		s.Problem = op.err.Error()
		return s
	}
	var input map[string]any
	if json.Unmarshal(op.input, &input) != nil {
		s.Problem = "the operation's input schema does not decode"
		return s
	}
	props, _ := input["properties"].(map[string]any)
	defs := input["$defs"]
	withDefs := func(sch any) json.RawMessage {
		m, ok := sch.(map[string]any)
		if !ok {
			m = map[string]any{"allOf": []any{sch}}
		}
		if defs != nil {
			m = cloneMap(m)
			m["$defs"] = defs
		}
		raw, _ := json.Marshal(m)
		return raw
	}
	if op.body != nil {
		s.Body, s.BodyRequired, s.BodyType = withDefs(props["body"]), op.body.required, op.body.sentType()
	}
	if len(op.params) > 0 {
		pp := map[string]any{}
		var required []any
		for _, pr := range op.params {
			pp[pr.arg] = props[pr.arg]
			if pr.required {
				required = append(required, pr.arg)
			}
		}
		ps := map[string]any{"type": "object", "properties": pp, "additionalProperties": false}
		if len(required) > 0 {
			ps["required"] = required
		}
		s.Parameters = withDefs(ps)
	}
	return s
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// responseShapes converts the operation's declared responses, each with
// a converter of its own so that its $defs hold only what it reaches.
func responseShapes(d *document, opNode map[string]any, file string) (out []ResponseShape) {
	defer func() {
		if p := recover(); p != nil {
			out = []ResponseShape{{Status: "default", Problem: fmt.Sprintf("the responses could not be read: %v", p)}}
		}
	}()
	responses, _ := opNode["responses"].(map[string]any)
	statuses := make([]string, 0, len(responses))
	for st := range responses {
		statuses = append(statuses, st)
	}
	slices.SortFunc(statuses, func(a, b string) int {
		// "default" last; otherwise as written, which sorts 2XX after 201.
		switch {
		case a == b:
			return 0
		case a == "default":
			return 1
		case b == "default":
			return -1
		}
		return strings.Compare(a, b)
	})
	for _, st := range statuses {
		n, rfile := d.deref(file, responses[st])
		m, _ := n.(map[string]any)
		r := ResponseShape{Status: st, Description: strings.TrimSpace(str(m, "description"))}
		content, _ := m["content"].(map[string]any)
		var media []string
		for mt := range content {
			if encodingOf(mt) == "json" {
				media = append(media, mt)
			}
		}
		if len(media) == 0 {
			out = append(out, r)
			continue
		}
		jsonOnly := map[string]any{}
		for _, mt := range media {
			jsonOnly[mt] = content[mt]
		}
		r.MediaType = pickMedia(jsonOnly)
		mt, _ := content[r.MediaType].(map[string]any)
		raw, ok := mt["schema"]
		if !ok {
			raw = map[string]any{}
		}
		c := newConverter(d)
		sch := c.schema(raw, rfile, 0)
		if c.err != nil {
			r.Problem = c.err.Error()
			out = append(out, r)
			continue
		}
		sm, ok := sch.(map[string]any)
		if !ok {
			sm = map[string]any{}
			if sch == false {
				sm["not"] = map[string]any{}
			}
		}
		if len(c.defs) > 0 {
			sm = cloneMap(sm)
			sm["$defs"] = c.defs
		}
		// A schema that applies itself to the same value forever would
		// overflow a validator's stack: described, never evaluated.
		if err := schemacycle.Check(sm); err != nil {
			var se *schemacycle.Error
			if errors.As(err, &se) {
				err = errors.New(se.Describe(c.origin))
			}
			r.Problem = err.Error()
			out = append(out, r)
			continue
		}
		if r.Schema, _ = json.Marshal(sm); r.Schema == nil {
			r.Problem = "the response schema does not encode"
		}
		out = append(out, r)
	}
	return out
}
