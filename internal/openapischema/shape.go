package openapischema

import "encoding/json"

// Shape is one OpenAPI operation's request and response shapes in JSON
// Schema 2020-12, each a self-contained document (its references in its
// own $defs), for checking a payload against the contract without calling
// the service (package internal/payload). Name is the operation's tool
// name, which the caller gives (openapitools.Shapes).
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

// MaxValueDepth bounds the nesting of a JSON value checked against converted
// schemas (a tool's arguments, a payload). Validation recurses once per
// level times the schemas applied at each level, which conversion bounds
// (schemacycle.MaxChain); together they keep the validator's stack small
// whatever the value.
const MaxValueDepth = 64
