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
	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/schemacycle"
)

// Shapes reads every openapi interface of b and returns each operation's
// shapes (see openapischema.Shape), in document order; each is named as
// Project names the operation's tool, whatever the exposure policy. Unlike Project it needs no base URL and
// applies no exposure policy: it describes the contract, it calls nothing.
func Shapes(ctx context.Context, b *bundle.Bundle) ([]*openapischema.Shape, error) {
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
	if err := nameAll(all, p.opts.MaxNameLength, nil); err != nil {
		return nil, err
	}
	out := make([]*openapischema.Shape, 0, len(all))
	for _, op := range all {
		out = append(out, op.shape())
	}
	return out, nil
}

// shape is the operation's Shape; the responses were converted by
// responseShapes while the document was loaded.
func (op *operation) shape() *openapischema.Shape {
	s := &openapischema.Shape{Name: op.name, Interface: op.iface.name, Method: op.method, Path: op.path, OperationID: op.operationID,
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
func responseShapes(d *openapischema.Document, opNode map[string]any, file string) (out []openapischema.ResponseShape) {
	defer func() {
		if p := recover(); p != nil {
			out = []openapischema.ResponseShape{{Status: "default", Problem: fmt.Sprintf("the responses could not be read: %v", p)}}
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
		n, rfile := d.Deref(file, responses[st])
		m, _ := n.(map[string]any)
		r := openapischema.ResponseShape{Status: st, Description: strings.TrimSpace(openapischema.StringAt(m, "description"))}
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
		c := openapischema.NewConverter(d)
		sch := c.Schema(raw, rfile, 0)
		if c.Err() != nil {
			r.Problem = c.Err().Error()
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
		if len(c.Defs()) > 0 {
			sm = cloneMap(sm)
			sm["$defs"] = c.Defs()
		}
		// A schema that applies itself to the same value forever would
		// overflow a validator's stack: described, never evaluated.
		if err := schemacycle.Check(sm); err != nil {
			var se *schemacycle.Error
			if errors.As(err, &se) {
				err = errors.New(se.Describe(c.Origin))
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
