package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/fleetgraph"
)

// Identity is who sent an HTTP request, as an [Authenticator] established
// it: a Kubernetes user (a ServiceAccount is
// system:serviceaccount:NAMESPACE:NAME), or the one user of a static token.
type Identity struct {
	User   string   `json:"user"`
	UID    string   `json:"uid,omitempty"`
	Groups []string `json:"groups,omitempty"`
	// Scopes are the OAuth scopes the caller's token grants; they matter
	// only with HTTPOptions.ProtectedResource, whose scopes they are
	// checked against.
	Scopes []string `json:"scopes,omitempty"`
}

// key identifies the identity for binding a session to it: a session
// created by one identity answers no other.
func (id Identity) key() string { return id.User + "\x00" + id.UID }

// StaticTokenUser is the identity of a caller holding the static token
// (AuthTokenFile).
const StaticTokenUser = "kubepact:static-token"

// Authenticator checks the bearer token of every HTTP request. The mcp
// package never imports Kubernetes: the operator plugs in one backed by
// TokenReview (package controllers); AuthTokenFile is the static one.
type Authenticator interface {
	// Authenticate returns the identity token stands for. An error
	// wrapping ErrUnauthenticated means the token is not valid: the
	// request is answered 401 with a WWW-Authenticate header and no
	// detail. Any other error means it could not be checked now (the
	// authority is unreachable): 503, and the client may retry.
	Authenticate(ctx context.Context, token string) (Identity, error)
}

// ErrUnauthenticated is wrapped by an Authenticator's error for a token
// that is not valid.
var ErrUnauthenticated = errors.New("unauthenticated")

// RefusalError is an Authenticator's error for a token that is not valid,
// saying why in words fit for the caller (expired, issued for another
// resource): the 401's body carries Reason. It wraps ErrUnauthenticated.
type RefusalError struct{ Reason string }

func (e *RefusalError) Error() string { return "unauthenticated: " + e.Reason }

// Unwrap makes a RefusalError an ErrUnauthenticated.
func (e *RefusalError) Unwrap() error { return ErrUnauthenticated }

// unauthenticatedDetail is ": REASON" of a RefusalError in err, or "".
func unauthenticatedDetail(err error) string {
	if re, ok := errors.AsType[*RefusalError](err); ok {
		return ": " + re.Reason
	}
	return ""
}

// UnavailableError is an Authenticator's error for a token it cannot
// check now because its authority cannot be asked, saying why in words
// fit for the caller (the issuer's keys could not be fetched): the 503's
// body carries Reason.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return "authority unavailable: " + e.Reason }

// unavailableDetail is " (REASON)" of an UnavailableError in err, or "".
func unavailableDetail(err error) string {
	if ue, ok := errors.AsType[*UnavailableError](err); ok {
		return " (" + ue.Reason + ")"
	}
	return ""
}

// ErrAuthenticatorBusy is wrapped by an Authenticator's error for a token
// it will not check now, because it is asked to check more new tokens
// than it may (each costs its authority a request): the request is
// answered 503 with a retry hint, and not logged as a failure.
var ErrAuthenticatorBusy = errors.New("the authenticator is checking as many new tokens as it may")

// Scoper decides what of a fleet snapshot an identity may see. The
// answer is applied inside the snapshot (fleetgraph.Snapshot.Restrict),
// so totals, cursors and misses never reveal what is hidden.
type Scoper interface {
	// Visibility returns the scopes (namespaces) id may see, among
	// snap.Scopes(), or fleetgraph.AllScopes(). An error means it could
	// not be decided now: the call fails UNAVAILABLE, showing nothing.
	Visibility(ctx context.Context, id Identity, snap *fleetgraph.Snapshot) (fleetgraph.Visibility, error)
}

// staticToken is the Authenticator of AuthTokenFile: one token, one
// identity, compared in constant time over digests (so the length leaks
// nothing either).
type staticToken struct{ sum [sha256.Size]byte }

func (s staticToken) Authenticate(_ context.Context, token string) (Identity, error) {
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], s.sum[:]) != 1 {
		return Identity{}, ErrUnauthenticated
	}
	return Identity{User: StaticTokenUser}, nil
}

// identityExtra is the TokenInfo.Extra key the identity travels under
// from the HTTP handler to the tool call (the SDK copies the TokenInfo of
// the request's context into every request's Extra, and binds a session
// to its TokenInfo.UserID).
const identityExtra = "kubepact.identity"

type identityKey struct{}

// authenticate answers 401 (no valid bearer token) or 503 (the token
// could not be checked) and returns false, or returns the request with
// the caller's identity in its context: as the SDK's TokenInfo, which
// binds a session to its creator and reaches every call's Extra.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	fields := strings.Fields(r.Header.Get("Authorization"))
	if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
		w.Header().Set("WWW-Authenticate", s.challenge("", ""))
		http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
		return nil, false
	}
	id, err := s.opts.Authenticator.Authenticate(r.Context(), fields[1])
	switch {
	case errors.Is(err, ErrUnauthenticated):
		s.log.V(1).Info("Refused an HTTP request: invalid bearer token", "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", s.challenge("invalid_token", ""))
		http.Error(w, "Unauthorized: invalid bearer token"+unauthenticatedDetail(err), http.StatusUnauthorized)
		return nil, false
	case errors.Is(err, ErrAuthenticatorBusy):
		s.log.V(1).Info("Refused an HTTP request: too many new bearer tokens to check", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: more new bearer tokens are being presented than the server checks at once; retry shortly", http.StatusServiceUnavailable)
		return nil, false
	case err != nil:
		s.log.Error(err, "Could not check a bearer token", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "5")
		http.Error(w, "Service Unavailable: the bearer token could not be checked now"+unavailableDetail(err)+"; retry", http.StatusServiceUnavailable)
		return nil, false
	}
	if !s.allowRead(w, id) {
		s.log.V(1).Info("Refused an HTTP request: the token lacks the read scope", "remote", r.RemoteAddr, "user", id.User)
		return nil, false
	}
	info := &auth.TokenInfo{UserID: id.key(), Extra: map[string]any{identityExtra: id}}
	return r.WithContext(context.WithValue(r.Context(), identityKey{}, info)), true
}

// withTokenInfo hands the identity authenticate found to the SDK, which
// keeps TokenInfo in a context key of its own: its bearer middleware is
// given a verifier that returns what authenticate stored.
func withTokenInfo(next http.Handler) http.Handler {
	return auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if info, ok := ctx.Value(identityKey{}).(*auth.TokenInfo); ok {
			return info, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
}

// callerOf returns the identity of a call, if it came over authenticated
// HTTP.
func callerOf(extra *sdk.RequestExtra) (Identity, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return Identity{}, false
	}
	id, ok := extra.TokenInfo.Extra[identityExtra].(Identity)
	return id, ok
}

type callerKey struct{}

func withCaller(ctx context.Context, extra *sdk.RequestExtra) context.Context {
	if id, ok := callerOf(extra); ok {
		return context.WithValue(ctx, callerKey{}, id)
	}
	return ctx
}

// caller returns the identity a tool call runs for.
func caller(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(callerKey{}).(Identity)
	return id, ok
}
