// Package oidcprovider runs a real OpenID provider on loopback for tests:
// zitadel's pkg/op (discovery, JWKS, token endpoint) over an in-memory
// store of client-credentials clients, whose access tokens are JWTs signed
// by a key the test may rotate. Tests get tokens from its token endpoint
// over HTTP, as any client would.
//
// It is test support: only tests import it.
package oidcprovider

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is a client-credentials client of the provider: its tokens name
// Subject (default ID), Audience, Groups and the scopes asked for, and
// expire Lifetime after issue (default 5m; negative: already expired when
// issued).
type Client struct {
	ID, Secret string
	Subject    string
	Audience   []string
	Groups     []string
	Lifetime   time.Duration
}

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is its issuer URL (http://127.0.0.1:PORT).
	Issuer     string
	store      *store
	keyFetches atomic.Int64
}

// KeyFetches is how many times its JWKS (/keys) was fetched.
func (p *Provider) KeyFetches() int64 { return p.keyFetches.Load() }

// Start runs a provider with clients until the test ends.
func Start(t testing.TB, clients ...Client) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := &store{clients: map[string]*Client{}}
	for i := range clients {
		c := clients[i]
		if c.Subject == "" {
			c.Subject = c.ID
		}
		st.clients[c.ID] = &c
	}
	st.rotate(t)
	var key [32]byte
	_, _ = rand.Read(key[:])
	p, err := op.NewProvider(&op.Config{CryptoKey: key, SupportedScopes: []string{"openid", "mcp:read", "mcp:write"}}, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	prov := &Provider{Issuer: issuer, store: st}
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/keys" {
			prov.keyFetches.Add(1)
		}
		p.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: counted, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return prov
}

// Token is an access token for the client id with scopes, from the
// token endpoint over HTTP (client_credentials, client_secret_basic).
func (p *Provider) Token(t testing.TB, id string, scopes ...string) string {
	t.Helper()
	tok, err := p.TokenContext(t.Context(), id, scopes...)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TokenContext is Token for use outside the test's goroutine.
func (p *Provider) TokenContext(ctx context.Context, id string, scopes ...string) (string, error) {
	p.store.mu.Lock()
	c, ok := p.store.clients[id]
	p.store.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("no client %q", id)
	}
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {strings.Join(scopes, " ")}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Issuer+"/oauth/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return "", fmt.Errorf("token endpoint: %s: %w", resp.Status, err)
	}
	if body.AccessToken == "" {
		return "", fmt.Errorf("token endpoint: %s: %s %s", resp.Status, body.Error, body.Description)
	}
	return body.AccessToken, nil
}

// SetAudience makes the tokens of the clients ids (none: every client)
// name aud as their audience.
func (p *Provider) SetAudience(aud string, ids ...string) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	for id, c := range p.store.clients {
		if len(ids) == 0 || slices.Contains(ids, id) {
			c.Audience = []string{aud}
		}
	}
}

// PublicKeyPEM is the current signing key's public half in PEM: what an
// attacker who read the JWKS holds.
func (p *Provider) PublicKeyPEM(t testing.TB) string {
	t.Helper()
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(&p.store.key.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// Rotate replaces the signing key: tokens are signed with a new one, and
// the JWKS publishes it alone, so tokens signed before no longer verify.
func (p *Provider) Rotate(t testing.TB) { p.store.rotate(t) }

// store is the provider's storage: clients and the signing key. Only the
// client-credentials grant is served; every other flow is refused.
type store struct {
	mu      sync.Mutex
	clients map[string]*Client
	key     *signingKey
	n       int
}

type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.id }

type publicKey struct{ *signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func (s *store) rotate(t testing.TB) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	s.key = &signingKey{id: fmt.Sprintf("key-%d-%s", s.n, rand.Text()[:8]), key: k}
}

func (s *store) client(id string) (*Client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	return c, ok
}

// tokenRequest is a client-credentials grant being answered.
type tokenRequest struct {
	c      *Client
	scopes []string
}

func (r *tokenRequest) GetSubject() string    { return r.c.Subject }
func (r *tokenRequest) GetAudience() []string { return r.c.Audience }
func (r *tokenRequest) GetScopes() []string   { return r.scopes }

var errUnsupported = errors.New("only the client_credentials grant is served")

func (s *store) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok || c.Secret != secret {
		return nil, errors.New("wrong client id or secret")
	}
	return opClient{c}, nil
}

func (s *store) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("no such client")
	}
	return &tokenRequest{c: c, scopes: scopes}, nil
}

func (s *store) CreateAccessToken(_ context.Context, r op.TokenRequest) (string, time.Time, error) {
	life := 5 * time.Minute
	if tr, ok := r.(*tokenRequest); ok && tr.c.Lifetime != 0 {
		life = tr.c.Lifetime
	}
	return rand.Text(), time.Now().Add(life), nil
}

func (s *store) GetPrivateClaimsFromScopes(_ context.Context, _, clientID string, scopes []string) (map[string]any, error) {
	claims := map[string]any{"scope": strings.Join(scopes, " ")}
	if c, ok := s.client(clientID); ok && len(c.Groups) > 0 {
		claims["groups"] = c.Groups
	}
	return claims, nil
}

func (s *store) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key, nil
}

func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []op.Key{publicKey{s.key}}, nil
}

func (s *store) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("no such client")
	}
	return opClient{c}, nil
}

func (s *store) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	_, err := s.ClientCredentials(ctx, id, secret)
	return err
}

func (s *store) Health(context.Context) error { return nil }

// The flows the provider does not serve.

func (s *store) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *store) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *store) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errUnsupported
}
func (s *store) SaveAuthCode(context.Context, string, string) error { return errUnsupported }
func (s *store) DeleteAuthRequest(context.Context, string) error    { return errUnsupported }
func (s *store) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errUnsupported
}
func (s *store) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errUnsupported
}
func (s *store) TerminateSession(context.Context, string, string) error { return errUnsupported }
func (s *store) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return oidc.ErrUnsupportedGrantType()
}
func (s *store) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", errUnsupported
}
func (s *store) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}
func (s *store) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return errUnsupported
}
func (s *store) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errUnsupported
}
func (s *store) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errUnsupported
}
func (s *store) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errUnsupported
}

// opClient is a Client as pkg/op sees it: a confidential client of the
// client_credentials grant whose access tokens are JWTs.
type opClient struct{ c *Client }

func (c opClient) GetID() string                       { return c.c.ID }
func (c opClient) RedirectURIs() []string              { return nil }
func (c opClient) PostLogoutRedirectURIs() []string    { return nil }
func (c opClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c opClient) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c opClient) ResponseTypes() []oidc.ResponseType  { return nil }
func (c opClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c opClient) LoginURL(string) string               { return "" }
func (c opClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c opClient) IDTokenLifetime() time.Duration       { return time.Minute }
func (c opClient) DevMode() bool                        { return false }
func (c opClient) IsScopeAllowed(string) bool           { return true }
func (c opClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c opClient) ClockSkew() time.Duration             { return 0 }
func (c opClient) RestrictAdditionalIdTokenScopes() func([]string) []string { //nolint:revive // the name is pkg/op.Client's
	return func(s []string) []string { return s }
}
func (c opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
