package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// ProtectedResource makes the HTTP endpoint an OAuth 2.1 resource server
// (RFC 9728): its metadata is served at the well-known paths, every 401
// names that metadata in its WWW-Authenticate challenge, and the scopes a
// caller's token grants ([Identity.Scopes]) decide what it may do. The
// Authenticator checks the tokens (package mcp/oauth validates JWTs of an
// OpenID provider); this describes them to clients.
type ProtectedResource struct {
	// Resource is this server's canonical URL, the audience its tokens
	// must name (https://kubepact.example.com/mcp).
	Resource string
	// AuthorizationServers are the issuer URLs a client gets tokens from.
	AuthorizationServers []string
	// ReadScope is the scope every request needs: with it a caller lists
	// and calls the tools that change nothing. Empty: any valid token.
	ReadScope string
	// WriteScope is the scope a call of a tool that can write needs (a
	// tool without readOnlyHint). Empty: ReadScope is enough.
	WriteScope string
}

// ProtectedResourceMetadataPath is where the RFC 9728 metadata of the
// server is served; the same document is served at the path-suffixed form
// for the endpoint, ProtectedResourceMetadataPath+Endpoint, which is the
// one the 401 challenge names.
const ProtectedResourceMetadataPath = "/.well-known/oauth-protected-resource"

// CodeInsufficientScope answers a call of a tool that can write when the
// caller's token lacks the write scope; remedy names the scope.
const CodeInsufficientScope = "INSUFFICIENT_SCOPE"

// validate checks what a client will be told before it is served.
func (p *ProtectedResource) validate() error {
	u, err := url.Parse(p.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("resource %q: want an absolute http(s) URL without query or fragment, such as https://kubepact.example.com/mcp", p.Resource)
	}
	if len(p.AuthorizationServers) == 0 {
		return fmt.Errorf("names no authorization server: want the issuer URL clients get tokens from")
	}
	for _, s := range []string{p.ReadScope, p.WriteScope} {
		if strings.ContainsAny(s, " \t\"\\") {
			return fmt.Errorf("scope %q: a scope is one word, without spaces, quotes or backslashes", s)
		}
	}
	return nil
}

// metadataURL is where a client reads the resource's metadata: the
// well-known path inserted between the resource's host and its path
// (RFC 9728 section 3.1).
func (p *ProtectedResource) metadataURL() string {
	u, _ := url.Parse(p.Resource) // validated
	path := strings.TrimSuffix(u.Path, "/")
	return u.Scheme + "://" + u.Host + ProtectedResourceMetadataPath + path
}

// scopes are the scopes the metadata advertises, in order.
func (p *ProtectedResource) scopes() []string {
	var s []string
	for _, sc := range []string{p.ReadScope, p.WriteScope} {
		if sc != "" && !slices.Contains(s, sc) {
			s = append(s, sc)
		}
	}
	return s
}

// protectedResourceMetadata is the RFC 9728 document.
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// metadataHandler serves the metadata document to anyone: it is what a
// client without a token reads to learn where to get one. It is a fixed
// document, so a caller learns nothing from it but the configuration.
func (p *ProtectedResource) metadataHandler() http.Handler {
	doc, _ := json.Marshal(protectedResourceMetadata{
		Resource:               p.Resource,
		AuthorizationServers:   p.AuthorizationServers,
		ScopesSupported:        p.scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "kubepact",
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed: the protected-resource metadata is read with GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(doc)
	})
}

// challenge is the WWW-Authenticate value of a refusal: errCode is "",
// invalid_token or insufficient_scope (RFC 6750 section 3), scope the
// scope that would have been enough.
func (s *Server) challenge(errCode, scope string) string {
	p := s.opts.ProtectedResource
	if p == nil {
		if errCode == "" {
			return `Bearer realm="kubepact"`
		}
		return `Bearer realm="kubepact", error="` + errCode + `"`
	}
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata="` + p.metadataURL() + `"`)
	if errCode != "" {
		b.WriteString(`, error="` + errCode + `"`)
	}
	if scope == "" && errCode == "" {
		scope = strings.Join(p.scopes(), " ")
	}
	if scope != "" {
		b.WriteString(`, scope="` + scope + `"`)
	}
	return b.String()
}

// allowRead answers 403 insufficient_scope for a valid token that lacks
// the read scope, and returns false; true when the token may read.
func (s *Server) allowRead(w http.ResponseWriter, id Identity) bool {
	p := s.opts.ProtectedResource
	if p == nil || p.ReadScope == "" || slices.Contains(id.Scopes, p.ReadScope) {
		return true
	}
	w.Header().Set("WWW-Authenticate", s.challenge("insufficient_scope", p.ReadScope))
	http.Error(w, "Forbidden: the bearer token does not grant the scope "+p.ReadScope+", which every request needs; ask the authorization server for a token with it", http.StatusForbidden)
	return false
}

// writeScopeRefusal is the answer to a call of t when its caller's token
// lacks the write scope, or nil when the call may go on.
func (s *Server) writeScopeRefusal(ctx context.Context, t *tool) *ToolError {
	p := s.opts.ProtectedResource
	if p == nil || p.WriteScope == "" || !t.writes() {
		return nil
	}
	id, ok := caller(ctx)
	if ok && slices.Contains(id.Scopes, p.WriteScope) {
		return nil
	}
	return &ToolError{
		Code: CodeInsufficientScope,
		Message: fmt.Sprintf("%s can change things and needs the scope %s, which your bearer token does not grant (it grants: %s); nothing was done",
			t.name, p.WriteScope, grantedWords(id.Scopes)),
		Remedy: "ask the authorization server for a token with the scope " + p.WriteScope + ", or call a read-only tool",
	}
}

func grantedWords(scopes []string) string {
	if len(scopes) == 0 {
		return "no scope"
	}
	return strings.Join(scopes, " ")
}
