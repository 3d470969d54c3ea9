package openapitools

import (
	"strings"

	"github.com/kubepact/kubepact/internal/openapischema"
)

// securityScheme is what applying a credential needs from a declared
// scheme.
type securityScheme struct {
	typ    string // apiKey, http, oauth2, openIdConnect, mutualTLS
	scheme string // for http: bearer, basic, …
	in     string // for apiKey: header, query, cookie
	name   string // for apiKey: the header, query or cookie name
}

func securitySchemes(d *openapischema.Document) map[string]securityScheme {
	comps, _ := d.Root()["components"].(map[string]any)
	raw, _ := comps["securitySchemes"].(map[string]any)
	out := map[string]securityScheme{}
	for name, v := range raw {
		n, _ := d.Deref(d.File(), v)
		m, _ := n.(map[string]any)
		if m == nil {
			continue
		}
		out[name] = securityScheme{typ: openapischema.StringAt(m, "type"), scheme: strings.ToLower(openapischema.StringAt(m, "scheme")), in: openapischema.StringAt(m, "in"), name: openapischema.StringAt(m, "name")}
	}
	return out
}

// effectiveSecurity returns the operation's security requirements (its own
// when it declares them, else the document's) and every scheme they name.
func effectiveSecurity(d *openapischema.Document, opNode map[string]any) ([]map[string][]string, map[string]bool) {
	raw, ok := opNode["security"]
	if !ok {
		raw = d.Root()["security"]
	}
	list, _ := raw.([]any)
	schemes := map[string]bool{}
	var reqs []map[string][]string
	for _, r := range list {
		rm, _ := r.(map[string]any)
		req := map[string][]string{}
		for name := range rm {
			req[name] = nil
			schemes[name] = true
		}
		reqs = append(reqs, req)
	}
	for name := range securitySchemes(d) {
		schemes[name] = true
	}
	return reqs, schemes
}

// credentialRequirement chooses the security requirement whose
// credentials a call sends: the first that the credentials present (have)
// satisfy completely and, unless Options.AllowCredentialsInQuery, that
// puts no credential in the URL query. A requirement naming no scheme
// ({}: anonymous access) is satisfied by nothing sent. blocked names the
// first scheme of a requirement the credentials satisfy but that was
// passed over for its query placement, when no other requirement was
// satisfied; it is "" otherwise.
func (op *operation) credentialRequirement(have func(name string) bool) (chosen map[string][]string, blocked string) {
	for _, r := range op.security {
		ok := true
		for name := range r {
			_, known := op.iface.schemes[name]
			if !known || !have(name) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		if q := op.queryScheme(r); q != "" && !op.opts.AllowCredentialsInQuery {
			if blocked == "" {
				blocked = q
			}
			continue
		}
		return r, ""
	}
	return nil, blocked
}

// queryScheme returns a scheme of the requirement that puts its credential
// in the URL query, or "".
func (op *operation) queryScheme(r map[string][]string) string {
	for _, name := range openapischema.SortedKeys(r) {
		if s := op.iface.schemes[name]; s.typ == "apiKey" && s.in == "query" {
			return name
		}
	}
	return ""
}
