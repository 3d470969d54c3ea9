package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/oauth"
)

// The --mcp-auth modes of the shapes without Kubernetes identity
// (`kubepact mcp -t http`, `kubepact sidecar`); the operator's are
// kubeauth.Mode.
const (
	authNone  = "none"
	authToken = "token"
	authOAuth = "oauth"
)

// oauthFlags binds the --oauth-* group every HTTP shape shares and, on the
// shapes without Kubernetes identity, --mcp-auth.
type oauthFlags struct {
	mode string
	o    oauth.Options
}

// bindMode binds --mcp-auth for mcp and sidecar (the operator binds its
// own, with kubernetes as its default).
func (f *oauthFlags) bindMode(fs *pflag.FlagSet) {
	fs.StringVar(&f.mode, "mcp-auth", "", "how HTTP callers are authenticated: none (the default on loopback), token (--auth-token-file; the default when it is given) or oauth (a JWT access token of --oauth-issuer for this resource, with "+oauth.DefaultReadScope+" to read and "+oauth.DefaultWriteScope+" to call tools that write; serves /.well-known/oauth-protected-resource)")
}

// chooseMode is the mode of mcp and sidecar: "" picks token with a token
// file, else none.
func (f *oauthFlags) chooseMode(tokenFile string) (string, error) {
	m := f.mode
	if m == "" {
		m = authNone
		if tokenFile != "" {
			m = authToken
		}
	}
	switch {
	case m != authNone && m != authToken && m != authOAuth:
		return "", fmt.Errorf("--mcp-auth %q is not accepted; use %s, %s or %s", f.mode, authNone, authToken, authOAuth)
	case m == authToken && tokenFile == "":
		return "", errors.New("--mcp-auth token needs --auth-token-file")
	case m != authToken && tokenFile != "":
		return "", fmt.Errorf("--auth-token-file is the token of --mcp-auth token, not of --mcp-auth %s: pass one or the other", m)
	}
	return m, nil
}

// oauthFlagNames are the flags of the --oauth-* group.
func oauthFlagNames() []string { return flagsOf((&oauth.Options{}).BindFlags) }

// oauthRule refuses the --oauth-* flags unless --mcp-auth is oauth.
func oauthRule(mode func() string) flagRule {
	return flagRule{flags: oauthFlagNames(), applies: func() bool { return mode() == authOAuth },
		why: "%[1]s configures --mcp-auth oauth, and this server does not authenticate with OAuth: add --mcp-auth oauth, or drop %[1]s"}
}

// rules are the flag rules of `kubepact mcp`'s authentication: --mcp-auth
// is for the HTTP transport, the --oauth-* flags for --mcp-auth oauth.
func (f *oauthFlags) rules(opts *mcp.Options) []flagRule {
	return []flagRule{
		{flags: []string{"mcp-auth"}, applies: func() bool { return opts.Transport != mcp.TransportStdio },
			why: "%[1]s applies to the HTTP transport, and this server speaks stdio (the default): add -t http to serve Streamable HTTP, or drop %[1]s"},
		oauthRule(func() string { return f.mode }),
	}
}

// applyMode checks --mcp-auth against --auth-token-file and, for oauth,
// makes h a resource server (apply).
func (f *oauthFlags) applyMode(h *mcp.HTTPOptions) error {
	m, err := f.chooseMode(h.AuthTokenFile)
	if err != nil || m != authOAuth {
		return err
	}
	return f.apply(h)
}

// apply makes h an OAuth resource server of the flags: the Verifier as
// its Authenticator, and what it tells clients. The resource defaults to
// http://LISTEN:PORT/mcp on loopback; beyond it, it must be given, as
// only the operator of the server knows the URL clients reach it at.
func (f *oauthFlags) apply(h *mcp.HTTPOptions) error {
	o := f.o
	if o.Resource == "" {
		listen := cmp.Or(h.Listen, "127.0.0.1")
		if !netx.IsLoopbackHost(listen) {
			return fmt.Errorf("--oauth-resource is required with --listen %s: the URL clients reach this server at, such as https://kubepact.example.com/mcp (its tokens must be issued for it)", listen)
		}
		port := h.Port
		if port == 0 {
			port = mcp.DefaultOptions().Port
		}
		o.Resource = "http://" + net.JoinHostPort(listen, strconv.Itoa(port)) + mcp.Endpoint
	}
	v, err := oauth.New(&o)
	if fe, ok := errors.AsType[*oauth.FieldError](err); ok {
		return errors.New(fe.Named(oauth.FlagNames))
	}
	if err != nil {
		return err
	}
	h.Authenticator, h.ProtectedResource = v, v.ProtectedResource()
	return nil
}
