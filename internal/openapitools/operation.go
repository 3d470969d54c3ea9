package openapitools

import (
	"net/http"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// Operation is the read-only description of the operation behind a tool:
// what a call needs to put it on the wire (package invoke sends it). It
// is projected once and shared by every call of the tool; its accessors
// return copies, except the kin-openapi route, which is shared and must
// not be changed.
type Operation struct{ op *operation }

// Operation describes the operation t calls.
func (t *Tool) Operation() Operation { return Operation{op: t.op} }

// Method is the HTTP method, upper case.
func (o Operation) Method() string { return o.op.method }

// Path is the path as the spec writes it, {name} placeholders included.
func (o Operation) Path() string { return o.op.path }

// BaseURL is where the tool sends requests, without a trailing slash.
func (o Operation) BaseURL() string { return o.op.iface.baseURL }

// Scheme and Host are the base URL's: every request must keep both, so
// credentials never go anywhere else.
func (o Operation) Scheme() string { return o.op.iface.scheme }

// Host is the base URL's host, with its port.
func (o Operation) Host() string { return o.op.iface.host }

// Accept is the Accept header: the media types the responses declare,
// JSON first.
func (o Operation) Accept() string { return o.op.accept }

// Client is the HTTP client of the projection: it never follows a
// redirect.
func (o Operation) Client() *http.Client { return o.op.client }

// Timeout bounds one call, response body included (Options.Timeout).
func (o Operation) Timeout() time.Duration { return o.op.opts.Timeout }

// MaxResponseBytes caps the response kept (Options.MaxResponseBytes).
func (o Operation) MaxResponseBytes() int64 { return o.op.opts.MaxResponseBytes }

// Param describes one parameter of an operation: where it goes and how it
// is serialized, as OpenAPI declares it.
type Param struct {
	// Name is the parameter's name in the request; Arg the tool argument
	// that carries it.
	Name, Arg string
	// In is path, query, header or cookie.
	In string
	// Style is the serialization style, its location's default filled in.
	Style string
	// Explode and AllowReserved are as declared, defaults filled in.
	Explode, AllowReserved bool
	// ContentType is set when the parameter declares content instead of a
	// schema.
	ContentType string
	// Kind is array or object for a structured schema, "" for a primitive.
	Kind string
}

// Params lists the operation's parameters, path item and operation merged.
func (o Operation) Params() []Param {
	out := make([]Param, len(o.op.params))
	for i, pr := range o.op.params {
		out[i] = Param{Name: pr.name, Arg: pr.arg, In: pr.in, Style: pr.style, Explode: pr.explode,
			AllowReserved: pr.allowReserved, ContentType: pr.contentType, Kind: pr.kind}
	}
	return out
}

// Body describes the request body: the one media type a call sends.
type Body struct {
	// ContentType is the media type chosen from the spec's.
	ContentType string
	// Encoding is how the value is written: json, form, multipart, text
	// or raw (see MediaEncoding).
	Encoding string
	// SentType is the Content-Type sent: JSON for a wildcard media type.
	SentType string
}

// Body describes the request body; ok is false when the operation takes
// none.
func (o Operation) Body() (b Body, ok bool) {
	if o.op.body == nil {
		return Body{}, false
	}
	return Body{ContentType: o.op.body.contentType, Encoding: o.op.body.encoding, SentType: o.op.body.sentType()}, true
}

// Route is what kin-openapi's request validator checks a request
// against: the document, the path item and the operation (for OpenAPI
// 3.1, their wire form; see the package doc). It is shared: read it,
// never change it.
type Route struct {
	Doc       *openapi3.T
	PathItem  *openapi3.PathItem
	Operation *openapi3.Operation
	// Kin is the same as kin-openapi's route, with the operation's path
	// and method, made once: the validator only reads it, so every call
	// shares it.
	Kin *routers.Route
}

// Route returns the operation's kin-openapi route, built on first use;
// nil when kin-openapi cannot read the document.
func (o Operation) Route() *Route { return o.op.route() }

// SecurityScheme is what sending a credential needs from a declared
// security scheme.
type SecurityScheme struct {
	// Type is apiKey, http, oauth2, openIdConnect or mutualTLS.
	Type string
	// Scheme is, for http, bearer, basic, ... (lower case).
	Scheme string
	// In and Name are, for apiKey, the header, query or cookie that
	// carries it.
	In, Name string
}

// Credential is one credential a call sends, with the scheme it is sent by.
type Credential struct {
	SchemeName string
	Scheme     SecurityScheme
	Value      string
}

// Credentials returns the credentials a call sends, in scheme name
// order: those of the first security requirement the configured
// credentials (Options.Auth, Options.AuthFiles, files read now) satisfy,
// never one that puts a credential in the URL query unless
// Options.AllowCredentialsInQuery. None when no requirement is met: the
// service then answers for itself.
func (o Operation) Credentials() ([]Credential, error) {
	creds, err := o.op.opts.credentials()
	if err != nil || len(creds) == 0 {
		return nil, err
	}
	r, _ := o.op.credentialRequirement(func(name string) bool { return creds[name] != "" })
	var out []Credential
	for _, name := range openapischema.SortedKeys(r) {
		s := o.op.iface.schemes[name]
		out = append(out, Credential{SchemeName: name, Scheme: SecurityScheme{Type: s.typ, Scheme: s.scheme, In: s.in, Name: s.name}, Value: creds[name]})
	}
	return out, nil
}

// MediaEncoding says how a value of media type mt is written: json (JSON
// media types and wildcards), form, multipart, text, or raw.
func MediaEncoding(mt string) string { return encodingOf(mt) }
