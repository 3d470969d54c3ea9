package mcp

import (
	"strings"
	"testing"
)

// TestImpactOfTwoServicesRefused is the agent that passes revisions of two
// different services to pacto_impact (a slip, or a rename): the fleet's
// consumers are found by name, so the answer would list the new name's
// consumers and call the change harmless to the old name's, which it
// breaks. It is refused, naming both services and how to list the
// consumers a rename breaks.
func TestImpactOfTwoServicesRefused(t *testing.T) {
	s, _, _ := fleetServer(t)
	cs := connect(t.Context(), t, s)
	e := toolErr(t, callTool(t, cs, "pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "examples/bundles/orders"}))
	want := "old_ref is a revision of service payments and new_ref of service orders: pacto_impact compares two revisions of one service. " +
		"Renaming payments breaks every consumer of it, which finds it by name: pacto_fleet_graph with service payments and direction dependents lists them"
	if e["code"] != "INVALID_ARGUMENT" || e["field"] != "new_ref" || e["message"] != want {
		t.Errorf("impact of payments → orders: %v; want INVALID_ARGUMENT on new_ref, %q", e, want)
	}
	if res := callTool(t, cs, "pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "fleetgraph/testdata/impact/payments-v4"}); res.IsError || !strings.HasPrefix(text(res), "payments 3.0.2 → 4.0.0") {
		t.Errorf("impact of two revisions of payments: %s", text(res))
	}
}
