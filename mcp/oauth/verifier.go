package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/kubepact/kubepact/mcp"
)

// Algorithms are the signature algorithms a token may be signed with: the
// asymmetric ones. none and the HMAC algorithms (HS*) never verify, so a
// public key cannot be used as a shared secret.
var Algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// reservedPrefix is the Kubernetes namespace of users and groups a token
// may not claim (ServiceAccounts, system:masters, nodes).
const reservedPrefix = "system:"

// discoveryRetry is how long a failed discovery is the answer before the
// provider is asked again.
const discoveryRetry = 5 * time.Second

// Verifier checks bearer tokens as JWT access tokens of one OpenID
// provider; it is an mcp.Authenticator. It is safe for concurrent use.
type Verifier struct {
	opts Options
	f    *fetcher

	mu       sync.Mutex // guards what discovery found
	verifier *oidc.IDTokenVerifier
	discErr  error
	discAt   time.Time
}

// New returns the Verifier of opts (nil: every default, which fails for
// want of an Issuer). Nothing is fetched until the first token arrives,
// so a server starts while its provider is down and answers 503 until it
// is up. Its errors are *FieldError.
func New(opts *Options) (*Verifier, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Verifier{opts: o, f: newFetcher(&o)}, nil
}

// ProtectedResource is what mcp tells clients of this verifier's tokens.
func (v *Verifier) ProtectedResource() *mcp.ProtectedResource {
	return &mcp.ProtectedResource{
		Resource:             v.opts.Resource,
		AuthorizationServers: []string{v.opts.Issuer},
		ReadScope:            v.opts.ReadScope,
		WriteScope:           v.opts.WriteScope,
	}
}

// callState carries, through go-oidc's verifier, what the key set found
// (go-oidc keeps only the text of its errors).
type callState struct {
	unavailable error  // the keys could not be fetched
	unknownKey  bool   // the provider does not publish the key
	payload     []byte // the signature verified
}

type stateKey struct{}

// Authenticate returns the identity token stands for; see the package doc
// for what is checked. A token that is not valid gets an
// *mcp.RefusalError; one that cannot be checked now (the provider is
// unreachable) an *mcp.UnavailableError.
func (v *Verifier) Authenticate(ctx context.Context, token string) (mcp.Identity, error) {
	if len(token) > v.opts.MaxTokenBytes {
		return mcp.Identity{}, refuse("the token is %d bytes long; at most %d are accepted", len(token), v.opts.MaxTokenBytes)
	}
	alg, err := headerAlgorithm(token)
	if err != nil {
		return mcp.Identity{}, err
	}
	if !slices.Contains(Algorithms, jose.SignatureAlgorithm(alg)) {
		return mcp.Identity{}, refuse("the token is signed with %q; accepted: %s", alg, algorithmWords())
	}
	verifier, err := v.discover(ctx)
	if err != nil {
		return mcp.Identity{}, err
	}
	st := &callState{}
	_, err = verifier.Verify(context.WithValue(ctx, stateKey{}, st), token)
	switch {
	case st.unavailable != nil:
		return mcp.Identity{}, &mcp.UnavailableError{Reason: st.unavailable.Error()}
	case st.unknownKey:
		return mcp.Identity{}, refuse("the token is signed by a key the issuer %s does not publish", v.opts.Issuer)
	case st.payload == nil && err != nil:
		return mcp.Identity{}, refuse("the token's signature does not verify with the issuer's keys")
	}
	var claims map[string]any
	dec := json.NewDecoder(bytes.NewReader(st.payload))
	dec.UseNumber()
	if derr := dec.Decode(&claims); derr != nil {
		return mcp.Identity{}, refuse("the token's claims are not a JSON object")
	}
	if err != nil {
		return mcp.Identity{}, v.claimsRefusal(err, claims)
	}
	if nbf, ok := numericDate(claims["nbf"]); ok && time.Now().Add(v.opts.Leeway).Before(nbf) {
		return mcp.Identity{}, refuse("the token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	return v.identity(claims)
}

// discover returns the go-oidc verifier once the provider's discovery
// document is read, reading it if it is not (at most once per
// discoveryRetry after a failure).
func (v *Verifier) discover(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.verifier != nil {
		return v.verifier, nil
	}
	if v.discErr != nil && time.Since(v.discAt) < discoveryRetry {
		return nil, v.discErr
	}
	v.discAt = time.Now()
	var d discovery
	wellKnown := strings.TrimSuffix(v.opts.Issuer, "/") + "/.well-known/openid-configuration"
	err := v.f.getJSON(ctx, wellKnown, &d)
	switch {
	case err != nil:
		v.discErr = &mcp.UnavailableError{Reason: "the issuer's OpenID configuration: " + err.Error()}
		return nil, v.discErr
	case d.Issuer != v.opts.Issuer:
		v.discErr = &mcp.UnavailableError{Reason: fmt.Sprintf("the OpenID configuration at %s names the issuer %q, not %q (--oauth-issuer)", wellKnown, d.Issuer, v.opts.Issuer)}
		return nil, v.discErr
	}
	if err := fetchableURL(d.JWKSURI); err != nil {
		v.discErr = &mcp.UnavailableError{Reason: "the issuer's jwks_uri " + err.Error()}
		return nil, v.discErr
	}
	keys := &keySet{f: v.f, url: d.JWKSURI, maxAge: v.opts.KeysMaxAge, refetch: v.opts.RefetchInterval}
	leeway := v.opts.Leeway
	v.verifier = oidc.NewVerifier(v.opts.Issuer, oidcKeys{keys}, &oidc.Config{
		ClientID:             v.opts.Audience,
		SupportedSigningAlgs: algorithmNames(),
		Now:                  func() time.Time { return time.Now().Add(-leeway) },
	})
	v.discErr = nil
	return v.verifier, nil
}

// oidcKeys is the go-oidc KeySet over keySet: it verifies the signature
// and records in the call's state what it found.
type oidcKeys struct{ k *keySet }

func (o oidcKeys) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil {
		st = &callState{}
	}
	jws, err := jose.ParseSignedCompact(raw, Algorithms)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errors.New("not one compact JWS")
	}
	key, err := o.k.key(ctx, jws.Signatures[0].Header)
	switch {
	case errors.Is(err, errUnknownKey):
		st.unknownKey = true
		return nil, err
	case err != nil:
		st.unavailable = err
		return nil, err
	}
	payload, err := jws.Verify(key)
	if err != nil {
		return nil, err
	}
	st.payload = payload
	return payload, nil
}

// claimsRefusal says why go-oidc refused a token whose signature
// verified: from its claims, not from go-oidc's words.
func (v *Verifier) claimsRefusal(err error, claims map[string]any) error {
	if te, ok := errors.AsType[*oidc.TokenExpiredError](err); ok {
		return refuse("the token expired at %s", te.Expiry.UTC().Format(time.RFC3339))
	}
	if iss, _ := claims["iss"].(string); iss != v.opts.Issuer {
		return refuse("the token was issued by %q; accepted is %q only", iss, v.opts.Issuer)
	}
	if aud := audiences(claims["aud"]); !slices.Contains(aud, v.opts.Audience) {
		return refuse("the token is for %s, not for this resource %s: ask the authorization server for a token with resource=%s", audienceWords(aud), v.opts.Audience, v.opts.Resource)
	}
	if _, ok := claims["exp"]; !ok {
		return refuse("the token has no exp claim: a token without an expiry is not accepted")
	}
	return refuse("the token's claims are not valid")
}

// identity maps verified claims to the Kubernetes identity.
func (v *Verifier) identity(claims map[string]any) (mcp.Identity, error) {
	name, _ := claims[v.opts.UsernameClaim].(string)
	if name == "" {
		return mcp.Identity{}, refuse("the token has no string claim %q naming its user (--oauth-username-claim)", v.opts.UsernameClaim)
	}
	user := v.opts.UsernamePrefix + name
	if strings.HasPrefix(user, reservedPrefix) {
		return mcp.Identity{}, refuse("the token names the user %q, in the system: namespace Kubernetes reserves; the server puts --oauth-username-prefix before the claim to keep them apart", user)
	}
	var groups []string
	for _, g := range stringsOf(claims[v.opts.GroupsClaim]) {
		if g = v.opts.GroupsPrefix + g; g != v.opts.GroupsPrefix && !strings.HasPrefix(g, reservedPrefix) && !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	scopes := strings.Fields(stringOf(claims["scope"]))
	if len(scopes) == 0 {
		scopes = stringsOf(claims["scp"])
	}
	return mcp.Identity{User: user, Groups: groups, Scopes: scopes}, nil
}

// headerAlgorithm reads the alg of a compact JWS's header, refusing what
// is no such JWS.
func headerAlgorithm(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return "", refuse("the token is not a JWT: want three base64url parts separated by dots (header.claims.signature)")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return "", refuse("the token's header is not base64url")
	}
	var h struct {
		Alg  string `json:"alg"`
		Crit []any  `json:"crit"`
	}
	if json.Unmarshal(raw, &h) != nil {
		return "", refuse("the token's header is not a JSON object")
	}
	if parts[2] == "" {
		return "", refuse("the token is not signed (alg %q, no signature); accepted: %s", h.Alg, algorithmWords())
	}
	return h.Alg, nil
}

func refuse(format string, args ...any) error {
	return &mcp.RefusalError{Reason: fmt.Sprintf(format, args...)}
}

func algorithmNames() []string {
	s := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		s[i] = string(a)
	}
	return s
}

func algorithmWords() string { return strings.Join(algorithmNames(), ", ") }

// audiences is the aud claim: a string or an array of strings.
func audiences(v any) []string { return stringsOf(v) }

func audienceWords(aud []string) string {
	if len(aud) == 0 {
		return "no audience"
	}
	return strings.Join(aud, ", ")
}

// stringsOf is a claim that is a string or an array of strings; other
// elements are skipped.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func stringOf(v any) string { s, _ := v.(string); return s }

// numericDate is a NumericDate claim (seconds since the epoch).
func numericDate(v any) (time.Time, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}
