package oci

import "github.com/kubepact/kubepact/bundle/archive"

// Limits returns the limits pulled layers are extracted within.
func (c *Client) Limits() archive.Limits { return c.limits }

// WithLimits returns a client that is c (same registries, credentials and
// cache) but extracts pulled layers within lim instead (zero fields: the
// defaults). A caller that may hold only so many bytes for one pull uses
// it, so the pull stops at that bound instead of after it.
func (c *Client) WithLimits(lim archive.Limits) *Client {
	cp := *c
	cp.limits = lim.WithDefaults()
	return &cp
}
