package invoke

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/demoservice"
)

// TestConfirmedCalls checks that a call needing confirmation waits for
// it: refused without a Confirmer, not sent when declined, sent once when
// confirmed, and shown to the person as it will be sent.
func TestConfirmedCalls(t *testing.T) {
	var hits atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			hits.Add(1)
		}
		demoservice.New(nil).ServeHTTP(w, r)
	}))
	t.Cleanup(svc.Close)
	dir := catalogCopy(t)
	c := projectDir(t, dir, &openapitools.Options{AllowWrites: true, BaseURL: svc.URL})
	del := c.Tool("deleteProduct")
	args := map[string]any{"productId": "p-0001"}
	// No confirmer: refused, nothing sent.
	if _, err := Call(t.Context(), del, args); !errors.As(err, new(*NotConfirmedError)) {
		t.Fatalf("a DELETE without a confirmer: %v; want NotConfirmedError", err)
	}
	// Declined: the confirmer's error, nothing sent.
	var seen *PendingCall
	declined := errors.New("declined")
	ctx := WithConfirmer(t.Context(), func(_ context.Context, p *PendingCall) error { seen = p; return declined })
	if _, err := Call(ctx, del, args); !errors.Is(err, declined) {
		t.Fatalf("a declined DELETE: %v; want the confirmer's error", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the service received %d DELETE(s) that were never confirmed", hits.Load())
	}
	if seen == nil || seen.Method != http.MethodDelete || seen.URL != svc.URL+"/products/p-0001" || seen.Target != "/products/p-0001" {
		t.Errorf("the confirmer saw %+v; want DELETE %s/products/p-0001", seen, svc.URL)
	}
	// Accepted: sent once.
	ctx = WithConfirmer(t.Context(), func(context.Context, *PendingCall) error { return nil })
	res, err := Call(ctx, del, args)
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Errorf("the service received %d DELETE(s) after one confirmed call; want 1 (result status %d)", hits.Load(), res.Status)
	}
	// A body is shown as it will be sent.
	create := projectDir(t, dir, &openapitools.Options{AllowWrites: true, BaseURL: svc.URL, ConfirmWrites: openapitools.ConfirmAlways}).Tool("createProduct")
	ctx = WithConfirmer(t.Context(), func(_ context.Context, p *PendingCall) error { seen = p; return declined })
	body := map[string]any{"sku": "SKU-1", "name": "n", "price": map[string]any{"currency": "EUR", "amountMinor": json.Number("100")}}
	if _, err := Call(ctx, create, map[string]any{"body": body}); !errors.Is(err, declined) {
		t.Fatalf("createProduct declined: %v", err)
	}
	if seen == nil || !strings.Contains(string(seen.Body), `"sku":"SKU-1"`) || seen.Header.Get("Content-Type") != "application/json" {
		t.Errorf("the confirmer saw %+v; want the JSON body", seen)
	}
}
