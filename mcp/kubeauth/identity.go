package kubeauth

import (
	"cmp"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/internal/tokenbucket"
	"github.com/kubepact/kubepact/mcp"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Identity defaults.
const (
	DefaultTokenTTL         = 10 * time.Second
	DefaultNegativeTokenTTL = 2 * time.Second
	DefaultAccessTTL        = 30 * time.Second
	DefaultMaxTokens        = 4096
	DefaultMaxAccess        = 16384
	// DefaultTokenReviewRate and DefaultTokenReviewBurst bound the
	// TokenReviews of tokens not accepted lately: 20 a second, in bursts
	// of up to 100. DefaultKnownTokenTTL is how long an accepted token
	// is reviewed again outside that bound.
	DefaultTokenReviewRate  = 20
	DefaultTokenReviewBurst = 100
	DefaultKnownTokenTTL    = time.Hour
	// accessParallelism bounds the SubjectAccessReviews one caller's
	// first query sends at once.
	accessParallelism = 8
)

// IdentityOptions configure a [KubeIdentity]; nil or zero fields mean
// defaults.
type IdentityOptions struct {
	// TokenTTL is how long a token TokenReview accepted stays accepted
	// without asking again (default 10s); NegativeTokenTTL how long a
	// refused one stays refused (default 2s: shorter, so a token refused
	// just before it became valid is not held against its owner).
	TokenTTL         time.Duration
	NegativeTokenTTL time.Duration
	// MaxTokens bounds the cached token results (default 4096), least
	// recently used dropped first; tokens are kept as SHA-256 digests.
	MaxTokens int
	// AccessTTL is how long an access decision (may this identity list
	// ServiceContracts in this namespace, or in all) is reused (default
	// 30s): an RBAC change shows within it. MaxAccess bounds the cached
	// decisions and per-snapshot visibilities (default 16384).
	AccessTTL time.Duration
	MaxAccess int
	// TokenReviewRate (per second) and TokenReviewBurst bound the
	// TokenReviews sent for tokens not accepted within KnownTokenTTL
	// (defaults 20, 100 and 1h): /mcp is reachable by anything on the Pod
	// network, and every made-up token is a TokenReview sent as the
	// operator's own identity, in the API server's flow of its other
	// requests (reconciling, leader election). Past the bound such a
	// token is answered 503 (retry) without asking; a token accepted
	// lately is always asked about.
	TokenReviewRate  float64
	TokenReviewBurst int
	KnownTokenTTL    time.Duration
	// Audiences, when set, are the audiences a token must be issued for
	// (TokenReview's spec.audiences).
	Audiences []string
	// Clock is the caches' clock (default time.Now).
	Clock func() time.Time
}

// KubeIdentity authenticates /mcp callers with TokenReview and decides
// what of the fleet they see with SubjectAccessReview: the namespaces in
// which they may list servicecontracts.kubepact.dev, or everything when
// they may list them cluster-wide. It implements mcp.Authenticator and
// mcp.Scoper.
//
// Every answer is cached (bounded, least recently used dropped first):
// token results by digest for TokenTTL (refusals for NegativeTokenTTL),
// access decisions per identity and namespace for AccessTTL, and each
// identity's visibility per snapshot, so the query path makes no API
// call once an identity's decisions are warm. The namespaces asked about
// are the snapshot's own (fleetgraph.Snapshot.Scopes), never listed from
// the API server. A failure to ask is not cached: the caller is refused
// (503, or UNAVAILABLE) and the next request asks again.
type KubeIdentity struct {
	opts  IdentityOptions
	authn authnclient.TokenReviewInterface
	authz authzclient.SubjectAccessReviewInterface

	tokens  *ttlLRU[tokenResult]
	known   *ttlLRU[struct{}]   // tokens accepted within KnownTokenTTL
	reviews *tokenbucket.Bucket // TokenReviews of the other tokens
	access  *ttlLRU[bool]
	visible *ttlLRU[fleetgraph.Visibility]
	flight  singleflight.Group
}

type tokenResult struct {
	id mcp.Identity
	ok bool
}

var (
	_ mcp.Authenticator = (*KubeIdentity)(nil)
	_ mcp.Scoper        = (*KubeIdentity)(nil)
)

// NewKubeIdentity returns a KubeIdentity asking the API server cfg
// reaches, as cfg's identity (the operator's ServiceAccount, whose role
// grants create on tokenreviews and subjectaccessreviews).
func NewKubeIdentity(cfg *rest.Config, opts *IdentityOptions) (*KubeIdentity, error) {
	k := &KubeIdentity{}
	if opts != nil {
		k.opts = *opts
	}
	o := &k.opts
	o.TokenTTL = cmp.Or(o.TokenTTL, DefaultTokenTTL)
	o.NegativeTokenTTL = cmp.Or(o.NegativeTokenTTL, DefaultNegativeTokenTTL)
	o.AccessTTL = cmp.Or(o.AccessTTL, DefaultAccessTTL)
	o.MaxTokens = cmp.Or(o.MaxTokens, DefaultMaxTokens)
	o.MaxAccess = cmp.Or(o.MaxAccess, DefaultMaxAccess)
	o.TokenReviewRate = cmp.Or(o.TokenReviewRate, DefaultTokenReviewRate)
	o.TokenReviewBurst = cmp.Or(o.TokenReviewBurst, DefaultTokenReviewBurst)
	o.KnownTokenTTL = cmp.Or(o.KnownTokenTTL, DefaultKnownTokenTTL)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	switch {
	case o.TokenTTL < 0 || o.NegativeTokenTTL < 0 || o.AccessTTL < 0 || o.KnownTokenTTL < 0:
		return nil, errors.New("IdentityOptions: TokenTTL, NegativeTokenTTL, AccessTTL and KnownTokenTTL must not be negative")
	case o.MaxTokens < 0 || o.MaxAccess < 0:
		return nil, errors.New("IdentityOptions: MaxTokens and MaxAccess must not be negative")
	case o.TokenReviewRate < 0 || o.TokenReviewBurst < 0:
		return nil, errors.New("IdentityOptions: TokenReviewRate and TokenReviewBurst must not be negative")
	}
	an, err := authnclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("TokenReview client: %w", err)
	}
	az, err := authzclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("SubjectAccessReview client: %w", err)
	}
	k.authn, k.authz = an.TokenReviews(), az.SubjectAccessReviews()
	k.tokens = newTTLLRU[tokenResult](o.MaxTokens, o.Clock)
	k.known = newTTLLRU[struct{}](o.MaxTokens, o.Clock)
	k.reviews = tokenbucket.New(o.TokenReviewRate, o.TokenReviewBurst, o.Clock)
	k.access = newTTLLRU[bool](o.MaxAccess, o.Clock)
	k.visible = newTTLLRU[fleetgraph.Visibility](o.MaxAccess, o.Clock)
	return k, nil
}

// Authenticate implements mcp.Authenticator with TokenReview.
func (k *KubeIdentity) Authenticate(ctx context.Context, token string) (mcp.Identity, error) {
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:])
	if r, ok := k.tokens.get(key); ok {
		return r.result()
	}
	v, err, _ := k.flight.Do("t"+key, func() (any, error) {
		if _, known := k.known.get(key); !known && !k.reviews.Allow() {
			return nil, fmt.Errorf("more new tokens than %g a second (bursts of %d) to review: %w", k.opts.TokenReviewRate, k.opts.TokenReviewBurst, mcp.ErrAuthenticatorBusy)
		}
		tr, err := k.authn.Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token, Audiences: k.opts.Audiences}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("TokenReview: %w", err)
		}
		r := tokenResult{ok: tr.Status.Authenticated && tr.Status.User.Username != ""}
		ttl := k.opts.NegativeTokenTTL
		if r.ok {
			u := tr.Status.User
			r.id = mcp.Identity{User: u.Username, UID: u.UID, Groups: u.Groups}
			ttl = k.opts.TokenTTL
			k.known.put(key, struct{}{}, k.opts.KnownTokenTTL)
		}
		k.tokens.put(key, r, ttl)
		return r, nil
	})
	if err != nil {
		return mcp.Identity{}, err
	}
	return v.(tokenResult).result()
}

func (r tokenResult) result() (mcp.Identity, error) {
	if !r.ok {
		return mcp.Identity{}, mcp.ErrUnauthenticated
	}
	return r.id, nil
}

// Visibility implements mcp.Scoper: everything when id may list
// ServiceContracts cluster-wide, else the namespaces of snap where it
// may.
func (k *KubeIdentity) Visibility(ctx context.Context, id mcp.Identity, snap *fleetgraph.Snapshot) (fleetgraph.Visibility, error) {
	who := identityKey(id)
	vkey := who + "\x00" + snap.ID()
	if v, ok := k.visible.get(vkey); ok {
		return v, nil
	}
	v, err, _ := k.flight.Do("v"+vkey, func() (any, error) {
		all, err := k.mayList(ctx, id, who, "")
		if err != nil {
			return nil, err
		}
		if all {
			k.visible.put(vkey, fleetgraph.AllScopes(), k.opts.AccessTTL)
			return fleetgraph.AllScopes(), nil
		}
		scopes := snap.Scopes()
		allowed := make([]bool, len(scopes))
		errs := make([]error, len(scopes))
		sem := make(chan struct{}, accessParallelism)
		var wg sync.WaitGroup
		for i, ns := range scopes {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				allowed[i], errs[i] = k.mayList(ctx, id, who, ns)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		var seen []string
		for i, ns := range scopes {
			if allowed[i] {
				seen = append(seen, ns)
			}
		}
		v := fleetgraph.OnlyScopes(seen...)
		k.visible.put(vkey, v, k.opts.AccessTTL)
		return v, nil
	})
	if err != nil {
		return fleetgraph.Visibility{}, err
	}
	return v.(fleetgraph.Visibility), nil
}

// mayList asks (or remembers) whether id may list ServiceContracts in
// namespace ns ("" for all namespaces).
func (k *KubeIdentity) mayList(ctx context.Context, id mcp.Identity, who, ns string) (bool, error) {
	key := who + "\x00" + ns
	if ok, hit := k.access.get(key); hit {
		return ok, nil
	}
	v, err, _ := k.flight.Do("a"+key, func() (any, error) {
		sar, err := k.authz.Create(ctx, &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: id.User, UID: id.UID, Groups: id.Groups,
			ResourceAttributes: &authzv1.ResourceAttributes{
				Namespace: ns, Verb: "list", Group: v1alpha1.GroupVersion.Group, Resource: "servicecontracts",
			},
		}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("SubjectAccessReview: %w", err)
		}
		allowed := sar.Status.Allowed && !sar.Status.Denied
		k.access.put(key, allowed, k.opts.AccessTTL)
		return allowed, nil
	})
	if err != nil {
		return false, err
	}
	return v.(bool), nil
}

// identityKey is the cache key of everything an authorization decision
// depends on: user, uid and groups.
func identityKey(id mcp.Identity) string {
	h := sha256.New()
	for _, s := range append([]string{id.User, id.UID}, id.Groups...) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ttlLRU is a bounded map whose entries expire: at most max entries, the
// least recently used dropped first, each with its own time to live.
type ttlLRU[V any] struct {
	mu  sync.Mutex
	max int
	now func() time.Time
	ll  *list.List // front: most recently used
	m   map[string]*list.Element
}

type ttlItem[V any] struct {
	key     string
	val     V
	expires time.Time
}

func newTTLLRU[V any](maxEntries int, now func() time.Time) *ttlLRU[V] {
	return &ttlLRU[V]{max: maxEntries, now: now, ll: list.New(), m: map[string]*list.Element{}}
}

func (c *ttlLRU[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	e, ok := c.m[key]
	if !ok {
		return zero, false
	}
	it := e.Value.(*ttlItem[V])
	if !c.now().Before(it.expires) {
		c.ll.Remove(e)
		delete(c.m, key)
		return zero, false
	}
	c.ll.MoveToFront(e)
	return it.val, true
}

func (c *ttlLRU[V]) put(key string, val V, ttl time.Duration) {
	if c.max == 0 || ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	it := &ttlItem[V]{key: key, val: val, expires: c.now().Add(ttl)}
	if e, ok := c.m[key]; ok {
		e.Value = it
		c.ll.MoveToFront(e)
		return
	}
	c.m[key] = c.ll.PushFront(it)
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.m, last.Value.(*ttlItem[V]).key)
	}
}
