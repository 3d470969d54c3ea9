//go:build !conformance

package mcp

// FamilyConformance is the MCP conformance suite's fixture tools,
// resources and prompts. Only a binary built with -tags conformance knows
// it (see conformance_fixtures.go); this build ships no fixtures and
// refuses the name like any unknown family.
const FamilyConformance Family = "conformance"

// fixtureFamilies adds no family to [families] in the product build.
var fixtureFamilies []*family
