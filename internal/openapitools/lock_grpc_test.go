package openapitools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLockGRPCEntriesAreCheckedLikeTools(t *testing.T) {
	pin := PinRPC("Inventory_GetItem", LockedCall{Interface: "grpc", Method: "/inventory.v1.Inventory/GetItem", Streaming: "unary"},
		LockedHints{ReadOnly: true, Idempotent: true}, "gRPC Inventory.GetItem", "reads one item", json.RawMessage(`{"type":"object"}`), json.RawMessage(`{"type":"object"}`))
	// Without gRPC entries the document and its lockDigest are what they
	// were before gRPC tools were pinned.
	plain := NewLock(&Capability{Service: "inventory"})
	if want := mustDigest([]any{}); plain.LockDigest != want {
		t.Errorf("lockDigest of an empty lock %s, want %s", plain.LockDigest, want)
	}
	l := NewLock(&Capability{Service: "inventory"}, pin)
	raw, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseLock(raw, "x.lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if back.DriftOf(pin) != "" {
		t.Errorf("the pinned tool drifts: %s", back.DriftOf(pin))
	}
	other := pin
	other.Annotations.ReadOnly = false
	other.Digest = other.digest()
	if d := back.DriftOf(other); !strings.Contains(d, "annotations") {
		t.Errorf("changed annotations: %q", d)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"hand-edited entry", `"readOnlyHint": true`, `"readOnlyHint": false`, "does not cover the entry"},
		{"bad streaming", `"streaming": "unary"`, `"streaming": "bidi"`, "streaming (unary or server)"},
		{"not a digest", `"text": "sha256:`, `"text": "md5:`, "is not a digest"},
		{"unknown field", `"streaming": "unary"`, `"streaming": "unary", "target": "x"`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(string(raw), tc.from, tc.to, 1)
			if doc == string(raw) {
				t.Fatal("edit did not apply")
			}
			if _, err := ParseLock([]byte(doc), "x.lock.json"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
	// One name in tools and in grpc.
	dup := NewLock(&Capability{Service: "inventory"}, pin, pin)
	raw, _ = dup.Marshal()
	if _, err := ParseLock(raw, "x.lock.json"); err == nil || !strings.Contains(err.Error(), "locked twice") {
		t.Errorf("a name twice: %v", err)
	}
}
