//go:build !conformance

package mcp

import (
	"slices"
	"strings"
	"testing"
)

// TestProductBuildHasNoFixtures: without -tags conformance the fixture
// family is unknown, so no flag can switch it on.
func TestProductBuildHasNoFixtures(t *testing.T) {
	if slices.Contains(knownFamilies(), FamilyConformance) {
		t.Errorf("knownFamilies %v include %s", knownFamilies(), FamilyConformance)
	}
	_, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyAuthoring, FamilyConformance}})
	if err == nil || !strings.Contains(err.Error(), `unknown family "conformance"`) {
		t.Errorf("NewServer with the conformance family: %v, want unknown family", err)
	}
}
