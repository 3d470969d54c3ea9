// Package oauth makes kubepact's HTTP endpoint an OAuth 2.1 resource
// server: Verifier is the mcp.Authenticator that checks a bearer token as
// a JWT access token of one OpenID provider, and ProtectedResource is what
// mcp tells clients about it (RFC 9728 metadata, the scopes for reads and
// for writes).
//
// A token is accepted when it is a JWS of at most MaxTokenBytes, signed
// with an asymmetric algorithm (RS*, PS*, ES*, EdDSA; never none, never
// HS*) by a key the issuer publishes in its JWKS, issued by Issuer for
// Audience (this resource's canonical URL, by default), and within its
// exp and nbf give or take Leeway. Its claims become an mcp.Identity: the
// user from UsernameClaim (sub) after UsernamePrefix, the groups from
// GroupsClaim after GroupsPrefix, the scopes from scope (or scp). A user
// or group in the system: namespace that Kubernetes reserves is refused
// or dropped, so a token cannot speak for a ServiceAccount or
// system:masters in the SubjectAccessReviews that scope the operator's
// fleet answers.
//
// The provider's configuration is discovered (OIDC discovery) on first
// use, and its keys fetched from its jwks_uri and fetched again when a
// token names a key not yet seen (rotation) or the keys are older than
// KeysMaxAge. Every fetch is bounded: https or a loopback address only,
// FetchTimeout, MaxFetchBytes. An issuer that cannot be reached makes the
// request fail 503 with the reason (mcp.UnavailableError); a token that is
// not valid fails 401 with the reason (mcp.RefusalError).
//
// # Imports
//
// It may import mcp and internal/netx; never Kubernetes: the operator
// hands the identities it makes to mcp/kubeauth's SubjectAccessReviews.
package oauth
