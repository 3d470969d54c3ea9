package fleetgraph

import (
	"slices"
	"testing"
)

// TestPickRanksLikeDidYouMean: fleet candidates use the argument
// did-you-mean rule (internal/didyoumean), after names that contain the
// query or that it contains.
func TestPickRanksLikeDidYouMean(t *testing.T) {
	names := map[string]string{
		"shop/orders":   "orders",
		"shop/payments": "payments",
		"shop/ledger":   "ledger",
		"shop/order-ui": "order-ui",
	}
	all := func(yield func(key, name string) bool) {
		for k, n := range names {
			if !yield(k, n) {
				return
			}
		}
	}
	for _, tt := range []struct {
		q    string
		want []string
	}{
		{"ordres", []string{"shop/orders"}},                 // a transposition is one edit
		{"order", []string{"shop/order-ui", "shop/orders"}}, // containment first, by key
		{"ledgr", []string{"shop/ledger"}},                  // one edit
		{"ordr", []string{}},                                // two edits in four letters: not offered
		{"pymnts", []string{"shop/payments"}},               // two edits in six letters
		{"zzz", []string{}},                                 // nothing alike
	} {
		if got := pick(tt.q, all); !slices.Equal(got, tt.want) {
			t.Errorf("pick(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}
