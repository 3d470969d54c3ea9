// Package payload answers two questions an agent asks about a service's
// contract: does this JSON value fit (Validate), and what does this field
// mean (Explain).
//
// A [Contract] is read once from a loaded bundle: every OpenAPI operation's
// parameters, request body and responses (as internal/openapischema converts
// them to JSON Schema 2020-12, OpenAPI 3.0 and Swagger 2.0 included), every
// AsyncAPI message payload, every gRPC message type (ReadWithGRPC: by full
// name, under the proto3 JSON mapping), and every configuration's schema
// file. Values
// are checked with the JSON Schema validator bundle/validate uses
// (santhosh-tekuri/jsonschema v6); no other validator is involved.
//
// A value that does not fit is a normal answer: Result{Valid: false} with
// one Diagnostic per fault — the field (a dotted path, lines[0].quantity),
// a stable code, what was expected, the offending value and a sentence
// written for an agent, never a library's text. A field refused by an
// allOf branch closed with additionalProperties: false while another
// branch declares it is still UNKNOWN_FIELD, but its sentence names the
// closed branch (allof.go) rather than calling the field undeclared.
//
// A subject without Kind is inferred from the other fields; for an
// operation without a request body, from the value too (kind.go): it is
// the parameters only when every key is a parameter name, and anything
// else is an ambiguity *Error naming both kinds, never a guess. Only a question the
// contract cannot answer (an operation, status, message or configuration
// it does not have, a subject named ambiguously) is an *Error, with the
// accepted names and the nearest one.
//
// Explain walks the same schemas by dotted path and answers the field's
// type, constraints, description, examples and default at every place it
// is defined (which operations, which messages, which configuration); a
// miss is Explanation{Found: false} with did-you-mean candidates.
//
// Values are bounded: at most MaxValueBytes encoded and MaxDepth levels of
// nesting (the MCP argument decoder's bound), refused with an *Error past
// either, before any schema sees them.
//
// The package imports bundle and its sub-packages and the OpenAPI schema
// converter (internal/openapischema); never the tools package (Read is given
// openapitools.Shapes by its caller), never MCP and never Kubernetes.
package payload
