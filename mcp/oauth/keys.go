package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// fetcher reads the provider's documents: https or loopback http only,
// every fetch within its timeout and byte bound, three redirects at most
// (each to a URL it would fetch itself).
type fetcher struct {
	client   *http.Client
	maxBytes int64
}

func newFetcher(o *Options) *fetcher {
	return &fetcher{
		maxBytes: o.MaxFetchBytes,
		client: &http.Client{
			Timeout: o.FetchTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 3 {
					return errors.New("more than 3 redirects")
				}
				return fetchableURL(req.URL.String())
			},
		},
	}
}

// getJSON decodes the JSON document at raw into v. Its errors are
// written for the caller of the server: what was fetched, what failed.
func (f *fetcher) getJSON(ctx context.Context, raw string, v any) error {
	if err := fetchableURL(raw); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("%s did not answer within %s", raw, f.client.Timeout)
		}
		return fmt.Errorf("%s could not be reached: %w", raw, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s, not 200 OK", raw, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return fmt.Errorf("%s: reading its answer: %w", raw, err)
	}
	if int64(len(body)) > f.maxBytes {
		return fmt.Errorf("%s answered more than %d bytes", raw, f.maxBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s did not answer a JSON document of the expected shape", raw)
	}
	return nil
}

// discovery is what the server reads of the provider's OpenID
// configuration.
type discovery struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// keySet holds the provider's public signing keys, fetched on demand: when
// a token names a key it does not hold, or its keys are older than
// maxAge; never more often than once per refetch.
type keySet struct {
	f       *fetcher
	url     string
	maxAge  time.Duration
	refetch time.Duration

	mu      sync.Mutex // held during a fetch: waiters share its outcome
	keys    []jose.JSONWebKey
	fetched time.Time // of keys
	tried   time.Time // last fetch, whatever its outcome
	err     error     // of the last fetch, while it is the newest
}

// errUnknownKey is a token signed by a key the provider does not publish.
var errUnknownKey = errors.New("unknown key")

// key returns the key that verifies a signature with header h: the one
// named by its kid (or, without a kid, the only key of its algorithm).
// An error wrapping errUnknownKey means the provider does not publish it;
// any other means the keys could not be fetched.
func (k *keySet) key(ctx context.Context, h jose.Header) (*jose.JSONWebKey, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	stale := k.fetched.IsZero() || now.Sub(k.fetched) > k.maxAge
	if key := k.find(h); key != nil && !stale {
		return key, nil
	}
	if !k.tried.IsZero() && now.Sub(k.tried) < k.refetch {
		// Fetched just now: answer from what that gave.
		if key := k.find(h); key != nil {
			return key, nil
		}
		if k.err != nil {
			return nil, k.err
		}
		return nil, errUnknownKey
	}
	k.tried = now
	var set jose.JSONWebKeySet
	if err := k.f.getJSON(ctx, k.url, &set); err != nil {
		k.err = fmt.Errorf("the issuer's keys: %w", err)
		if key := k.find(h); key != nil && now.Sub(k.fetched) <= 2*k.maxAge {
			return key, nil // keep verifying a while with the keys held
		}
		return nil, k.err
	}
	k.keys, k.fetched, k.err = usable(set.Keys), now, nil
	if key := k.find(h); key != nil {
		return key, nil
	}
	return nil, errUnknownKey
}

// find is the held key for h, or nil.
func (k *keySet) find(h jose.Header) *jose.JSONWebKey {
	var only *jose.JSONWebKey
	n := 0
	for i := range k.keys {
		key := &k.keys[i]
		if key.Algorithm != "" && key.Algorithm != h.Algorithm {
			continue
		}
		if h.KeyID != "" {
			if key.KeyID == h.KeyID {
				return key
			}
			continue
		}
		only, n = key, n+1
	}
	if n == 1 {
		return only
	}
	return nil
}

// usable keeps the public signing keys of a JWKS: no symmetric or private
// key, none meant for encryption.
func usable(keys []jose.JSONWebKey) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if k.Valid() && k.IsPublic() && (k.Use == "" || k.Use == "sig") && !strings.HasPrefix(k.Algorithm, "HS") {
			out = append(out, k)
		}
	}
	return out
}
