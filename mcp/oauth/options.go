package oauth

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/internal/netx"
)

// The defaults of Options.
const (
	// DefaultReadScope is the scope every request needs.
	DefaultReadScope = "mcp:read"
	// DefaultWriteScope is the scope a call of a tool that can write needs.
	DefaultWriteScope = "mcp:write"
	// DefaultUsernameClaim is the claim naming the Kubernetes user.
	DefaultUsernameClaim = "sub"
	// DefaultGroupsClaim is the claim listing the Kubernetes groups.
	DefaultGroupsClaim = "groups"
	// DefaultLeeway is how far exp and nbf may be off the server's clock.
	DefaultLeeway = 30 * time.Second
	// DefaultMaxTokenBytes bounds a bearer token: past it the token is
	// refused before it is decoded.
	DefaultMaxTokenBytes = 16 << 10
	// DefaultFetchTimeout bounds one fetch of the provider's discovery
	// document or keys.
	DefaultFetchTimeout = 5 * time.Second
	// DefaultMaxFetchBytes bounds the discovery document and the JWKS.
	DefaultMaxFetchBytes = 1 << 20
	// DefaultKeysMaxAge is how long fetched keys are used before they are
	// fetched again, so a key the provider withdrew stops verifying.
	DefaultKeysMaxAge = 5 * time.Minute
	// DefaultRefetchInterval is the least time between two fetches of
	// the keys: a flood of tokens naming unknown keys costs the provider
	// one request per interval.
	DefaultRefetchInterval = 5 * time.Second
)

// Options configure a Verifier. The zero value of every field but Issuer
// and Resource means its documented default.
type Options struct {
	// Issuer is the OpenID provider's issuer URL, exactly as its tokens'
	// iss claim and its discovery document say it.
	Issuer string
	// Resource is this server's canonical URL, which clients ask tokens
	// for (RFC 8707) and the metadata names.
	Resource string
	// Audience is the aud a token must name (default Resource).
	Audience string
	// ReadScope and WriteScope are the scopes for reading and for tools
	// that can write (default mcp:read, mcp:write); "-" requires none.
	ReadScope, WriteScope string
	// UsernameClaim names the Kubernetes user (default sub), after
	// UsernamePrefix.
	UsernameClaim, UsernamePrefix string
	// GroupsClaim lists the Kubernetes groups (default groups; a string or
	// an array of strings), each after GroupsPrefix.
	GroupsClaim, GroupsPrefix string

	// Leeway, MaxTokenBytes, FetchTimeout, MaxFetchBytes, KeysMaxAge and
	// RefetchInterval: see their defaults.
	Leeway          time.Duration
	MaxTokenBytes   int
	FetchTimeout    time.Duration
	MaxFetchBytes   int64
	KeysMaxAge      time.Duration
	RefetchInterval time.Duration
}

// BindFlags binds the options every HTTP shape shares as --oauth-* flags.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Issuer, "oauth-issuer", o.Issuer, "with --mcp-auth oauth: the OpenID provider's issuer URL (https, or http on loopback); its discovery document and keys are fetched from it")
	fs.StringVar(&o.Resource, "oauth-resource", o.Resource, "with --mcp-auth oauth: this server's canonical URL, named in its protected-resource metadata (default: http://LISTEN:PORT/mcp)")
	fs.StringVar(&o.Audience, "oauth-audience", o.Audience, "with --mcp-auth oauth: the aud every token must name (default: --oauth-resource)")
	fs.StringVar(&o.ReadScope, "oauth-read-scope", o.ReadScope, "with --mcp-auth oauth: the scope every request needs, to list and call read-only tools (default "+DefaultReadScope+`; "-": none)`)
	fs.StringVar(&o.WriteScope, "oauth-write-scope", o.WriteScope, "with --mcp-auth oauth: the scope a call of a tool that can write needs (default "+DefaultWriteScope+`; "-": none beyond the read scope)`)
	fs.StringVar(&o.UsernameClaim, "oauth-username-claim", o.UsernameClaim, "with --mcp-auth oauth: the claim naming the Kubernetes user (default "+DefaultUsernameClaim+")")
	fs.StringVar(&o.UsernamePrefix, "oauth-username-prefix", o.UsernamePrefix, "with --mcp-auth oauth: put before the username claim (as the API server's --oidc-username-prefix); a user in system: is refused")
	fs.StringVar(&o.GroupsClaim, "oauth-groups-claim", o.GroupsClaim, "with --mcp-auth oauth: the claim listing the Kubernetes groups (default "+DefaultGroupsClaim+")")
	fs.StringVar(&o.GroupsPrefix, "oauth-groups-prefix", o.GroupsPrefix, "with --mcp-auth oauth: put before every group (as the API server's --oidc-groups-prefix); a group in system: is dropped")
}

// FlagNames maps the fields an error of New names to their flags.
var FlagNames = map[string]string{
	"Issuer": "--oauth-issuer", "Resource": "--oauth-resource", "Audience": "--oauth-audience",
	"ReadScope": "--oauth-read-scope", "WriteScope": "--oauth-write-scope",
	"UsernameClaim": "--oauth-username-claim", "UsernamePrefix": "--oauth-username-prefix",
	"GroupsClaim": "--oauth-groups-claim", "GroupsPrefix": "--oauth-groups-prefix",
}

// withDefaults returns o with every zero field at its default.
func (o Options) withDefaults() Options {
	o.Audience = cmp.Or(o.Audience, o.Resource)
	o.ReadScope = noneOr(o.ReadScope, DefaultReadScope)
	o.WriteScope = noneOr(o.WriteScope, DefaultWriteScope)
	o.UsernameClaim = cmp.Or(o.UsernameClaim, DefaultUsernameClaim)
	o.GroupsClaim = cmp.Or(o.GroupsClaim, DefaultGroupsClaim)
	o.Leeway = cmp.Or(o.Leeway, DefaultLeeway)
	o.MaxTokenBytes = cmp.Or(o.MaxTokenBytes, DefaultMaxTokenBytes)
	o.FetchTimeout = cmp.Or(o.FetchTimeout, DefaultFetchTimeout)
	o.MaxFetchBytes = cmp.Or(o.MaxFetchBytes, DefaultMaxFetchBytes)
	o.KeysMaxAge = cmp.Or(o.KeysMaxAge, DefaultKeysMaxAge)
	o.RefetchInterval = cmp.Or(o.RefetchInterval, DefaultRefetchInterval)
	return o
}

// noneOr is def for "", nothing for "-", else s.
func noneOr(s, def string) string {
	switch s {
	case "":
		return def
	case "-":
		return ""
	}
	return s
}

// FieldError is an error of New: Field names the option at fault.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Named is the error with its field written as a flag, from names
// (FlagNames).
func (e *FieldError) Named(names map[string]string) string {
	if f, ok := names[e.Field]; ok {
		return f + ": " + e.Message
	}
	return e.Error()
}

// validate checks o (with its defaults) before anything is fetched.
func (o *Options) validate() error {
	if o.Issuer == "" {
		return &FieldError{"Issuer", "is required: the issuer URL of the OpenID provider whose tokens are accepted, such as https://issuer.example.com"}
	}
	if err := fetchableURL(o.Issuer); err != nil {
		return &FieldError{"Issuer", err.Error()}
	}
	u, err := url.Parse(o.Resource)
	if o.Resource == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return &FieldError{"Resource", fmt.Sprintf("%q: want this server's absolute http(s) URL without query or fragment, such as https://kubepact.example.com/mcp", o.Resource)}
	}
	for field, s := range map[string]string{"ReadScope": o.ReadScope, "WriteScope": o.WriteScope} {
		if strings.ContainsAny(s, " \t\"\\") {
			return &FieldError{field, fmt.Sprintf("%q: a scope is one word, without spaces, quotes or backslashes", s)}
		}
	}
	for field, s := range map[string]string{"UsernameClaim": o.UsernameClaim, "GroupsClaim": o.GroupsClaim} {
		if strings.TrimSpace(s) != s {
			return &FieldError{field, fmt.Sprintf("%q: a claim name has no surrounding spaces", s)}
		}
	}
	if o.MaxTokenBytes < 0 || o.MaxFetchBytes < 0 || o.Leeway < 0 || o.FetchTimeout < 0 || o.KeysMaxAge < 0 || o.RefetchInterval < 0 {
		return &FieldError{"Leeway", "the bounds of token checking are positive durations and sizes (0 means the default)"}
	}
	return nil
}

// fetchableURL accepts an https URL, or an http one on a loopback host:
// what the server fetches the provider's configuration and keys from.
func fetchableURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%q: want an absolute URL, such as https://issuer.example.com", raw)
	case u.User != nil:
		return fmt.Errorf("%q: a URL with credentials in it is not accepted", raw)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && netx.IsLoopbackHost(u.Hostname()):
		return nil
	}
	return fmt.Errorf("%q: want https (http only on a loopback address)", raw)
}
