package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProductKnowsNoFixtures: kubepact's own families do not include the
// conformance fixtures (hack/conformance/server adds them as an
// Extension), so no flag of the product can switch them on.
func TestProductKnowsNoFixtures(t *testing.T) {
	if slices.Contains(knownFamilies(), "conformance") {
		t.Errorf("knownFamilies %v include conformance", knownFamilies())
	}
	_, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyAuthoring, "conformance"}})
	if err == nil || !strings.Contains(err.Error(), `unknown family "conformance"`) {
		t.Errorf("NewServer with the conformance family: %v, want unknown family", err)
	}
}

// TestExtensionRefusesReservedNames: an extension's tool may not take the
// pacto_ prefix of kubepact's own tools.
func TestExtensionRefusesReservedNames(t *testing.T) {
	x := &Extension{Name: "x", Summary: "x", Tools: []ExtensionTool{{
		Name: "pacto_mine", ReadOnly: true, Input: nil,
		Call: func(context.Context, json.RawMessage) (*sdk.CallToolResult, error) { return &sdk.CallToolResult{}, nil },
	}}}
	_, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{"x"}, Extensions: []*Extension{x}})
	if err == nil || !strings.Contains(err.Error(), "pacto_ prefix") {
		t.Errorf("NewServer with an extension tool named pacto_mine: %v, want refused", err)
	}
}
