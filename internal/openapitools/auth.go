package openapitools

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// applyCredentials adds the credentials of the requirement
// credentialRequirement chooses for the given credentials. Nothing is
// sent when none is chosen: the service answers for itself.
func (op *operation) applyCredentials(req *http.Request, creds map[string]string) {
	if len(creds) == 0 {
		return
	}
	r, _ := op.credentialRequirement(func(name string) bool { return creds[name] != "" })
	for _, name := range openapischema.SortedKeys(r) {
		apply(req, op.iface.schemes[name], creds[name])
	}
}

// apply sends one credential as its scheme declares: an apiKey in its
// header, query parameter or cookie; http basic as Authorization: Basic
// with the value as given (pre-encoded user:pass); http bearer, oauth2 and
// openIdConnect as Authorization: Bearer.
func apply(req *http.Request, s securityScheme, value string) {
	switch s.typ {
	case "apiKey":
		switch s.in {
		case "query":
			req.URL.RawQuery = strings.TrimPrefix(req.URL.RawQuery+"&"+url.QueryEscape(s.name)+"="+url.QueryEscape(value), "&")
		case "cookie":
			req.AddCookie(&http.Cookie{Name: s.name, Value: value})
		default:
			req.Header.Set(s.name, value)
		}
	case "http":
		if s.scheme == "basic" {
			req.Header.Set("Authorization", "Basic "+value)
		} else {
			req.Header.Set("Authorization", "Bearer "+value)
		}
	case "oauth2", "openIdConnect":
		req.Header.Set("Authorization", "Bearer "+value)
	}
}
