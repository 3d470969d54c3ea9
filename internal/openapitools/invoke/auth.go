package invoke

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// applyCredentials adds the credentials the operation chose
// (openapitools.Operation.Credentials). Nothing is sent when none was
// chosen: the service answers for itself.
func applyCredentials(req *http.Request, creds []openapitools.Credential) {
	for _, c := range creds {
		apply(req, c.Scheme, c.Value)
	}
}

// apply sends one credential as its scheme declares: an apiKey in its
// header, query parameter or cookie; http basic as Authorization: Basic
// with the value as given (pre-encoded user:pass); http bearer, oauth2 and
// openIdConnect as Authorization: Bearer.
func apply(req *http.Request, s openapitools.SecurityScheme, value string) {
	switch s.Type {
	case "apiKey":
		switch s.In {
		case "query":
			req.URL.RawQuery = strings.TrimPrefix(req.URL.RawQuery+"&"+url.QueryEscape(s.Name)+"="+url.QueryEscape(value), "&")
		case "cookie":
			req.AddCookie(&http.Cookie{Name: s.Name, Value: value})
		default:
			req.Header.Set(s.Name, value)
		}
	case "http":
		if s.Scheme == "basic" {
			req.Header.Set("Authorization", "Basic "+value)
		} else {
			req.Header.Set("Authorization", "Bearer "+value)
		}
	case "oauth2", "openIdConnect":
		req.Header.Set("Authorization", "Bearer "+value)
	}
}
