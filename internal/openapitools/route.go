package openapitools

import (
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// route returns the operation's kin-openapi route, built on first use.
func (op *operation) route() *Route {
	op.kinOnce.Do(func() { op.kinRoute = newKinRoute(op.iface.doc, op.path, op.method) })
	return op.kinRoute
}

// newKinRoute returns the route kin-openapi validates an operation's
// requests against, or nil when there is none.
//
// For 3.0 and converted Swagger 2.0 documents, whose schemas the projection
// converts, kin-openapi checks the request against the original dialect.
// For OpenAPI 3.1 it checks the request's wire form against wireRoute's
// copy of the operation; see there.
func newKinRoute(d *openapischema.Document, pth, method string) *Route {
	kin := d.KinDoc()
	if kin == nil || kin.Paths == nil {
		return nil
	}
	item := kin.Paths.Value(pth)
	if item == nil {
		return nil
	}
	kop := item.GetOperation(strings.ToUpper(method))
	if kop == nil {
		return nil
	}
	if kin.IsOpenAPI31OrLater() {
		return wireRoute(kin, item, kop)
	}
	return &Route{Doc: kin, PathItem: item, Operation: kop}
}

// wireRoute returns the route kin-openapi validates an OpenAPI 3.1
// operation's requests against: the operation with every parameter and
// request-body schema cut down to what decoding the wire form needs (type,
// format, items, properties, additionalProperties), in a document that
// declares OpenAPI 3.0.
//
// kin-openapi builds and compiles a new JSON Schema 2020-12 validator for
// every 3.1 value it checks (about 0.3 ms and a few hundred KiB per call),
// and offers no way to keep one. The validation is therefore split, each
// part done once per operation: the 2020-12 keywords are checked by the
// argument validator, resolved at projection from the same schemas; kin
// checks what only the serialized request shows — required parameters are
// present, each value decodes to its declared type from its style, the
// content type is one the operation takes, a required body is there and
// parses. With only those keywords left, 3.0 and 3.1 semantics agree, so
// kin's own 3.0 validator, which compiles nothing, does it.
func wireRoute(doc *openapi3.T, item *openapi3.PathItem, op *openapi3.Operation) *Route {
	sk := skeletons{}
	spec := *doc
	spec.OpenAPI = "3.0.3"
	pi := *item
	pi.Parameters = sk.params(item.Parameters)
	o := *op
	o.Parameters = sk.params(op.Parameters)
	if rb := op.RequestBody; rb != nil && rb.Value != nil {
		body := *rb.Value
		body.Content = sk.content(body.Content)
		o.RequestBody = &openapi3.RequestBodyRef{Value: &body}
	}
	return &Route{Doc: &spec, PathItem: &pi, Operation: &o}
}

// skeletons copies schemas down to their wire shape. It keeps one copy per
// original schema, so recursive schemas stay finite.
type skeletons map[*openapi3.Schema]*openapi3.Schema

func (sk skeletons) params(in openapi3.Parameters) openapi3.Parameters {
	if in == nil {
		return nil
	}
	out := make(openapi3.Parameters, 0, len(in))
	for _, ref := range in {
		if ref == nil || ref.Value == nil {
			out = append(out, ref)
			continue
		}
		p := *ref.Value
		p.Schema = sk.schema(p.Schema)
		p.Content = sk.content(p.Content)
		out = append(out, &openapi3.ParameterRef{Value: &p})
	}
	return out
}

func (sk skeletons) content(in openapi3.Content) openapi3.Content {
	if in == nil {
		return nil
	}
	out := make(openapi3.Content, len(in))
	for mt, m := range in {
		if m == nil {
			out[mt] = nil
			continue
		}
		c := *m
		c.Schema = sk.schema(m.Schema)
		c.ItemSchema = sk.schema(m.ItemSchema)
		out[mt] = &c
	}
	return out
}

func (sk skeletons) schema(ref *openapi3.SchemaRef) *openapi3.SchemaRef {
	if ref == nil || ref.Value == nil {
		return ref
	}
	v := ref.Value
	if c, ok := sk[v]; ok {
		return &openapi3.SchemaRef{Value: c}
	}
	c := &openapi3.Schema{Type: v.Type, Format: v.Format}
	sk[v] = c
	c.Items = sk.schema(v.Items)
	if len(v.Properties) > 0 {
		c.Properties = make(openapi3.Schemas, len(v.Properties))
		for name, p := range v.Properties {
			c.Properties[name] = sk.schema(p)
		}
	}
	c.AdditionalProperties.Schema = sk.schema(v.AdditionalProperties.Schema)
	return &openapi3.SchemaRef{Value: c}
}
