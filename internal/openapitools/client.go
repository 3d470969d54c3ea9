package openapitools

import (
	"net/http"

	"github.com/kubepact/kubepact/internal/tracing"
)

// newHTTPClient is the client every tool of one projection sends with;
// each request carries the trace context of the call that sends it.
func newHTTPClient(rt http.RoundTripper) *http.Client {
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		rt = t
	}
	return &http.Client{
		Transport: tracing.Transport(rt),
		// No redirect is ever followed, same origin included: a 3xx is the
		// result, and credentials never reach another host.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
