package mcp

import (
	"fmt"
	"math"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// TestResultTextLine holds the successful call's line, built without
// Sprintf, to the Sprintf it replaced.
func TestResultTextLine(t *testing.T) {
	ct := &openapitools.Tool{Method: "GET", Path: "/products/{productId}"}
	for _, res := range []invoke.Result{
		{Status: 200, DurationMs: 0.34},
		{Status: 404, DurationMs: 12345.678},
		{Status: 599, DurationMs: 0.05, Truncated: true},
		{Status: 200, DurationMs: math.Inf(1)},
		{Status: 200, DurationMs: math.NaN()},
		{Status: 100000, DurationMs: -1.25},
	} {
		want := fmt.Sprintf("%s %s → %d (%.1f ms)", ct.Method, ct.Path, res.Status, res.DurationMs)
		if res.Truncated {
			want += "; cut to the response byte cap"
		}
		want += "; the response is in structuredContent {status, headers, body, bodyEncoding, truncated, timedOut, durationMs, failure}"
		if got := resultText(ct, &res); got != want {
			t.Errorf("resultText(%+v):\n got %q\nwant %q", res, got, want)
		}
	}
}
