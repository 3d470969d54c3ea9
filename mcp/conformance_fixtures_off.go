//go:build !conformance

package mcp

import (
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FamilyConformance is the MCP conformance suite's fixture tools,
// resources and prompts. Only a binary built with -tags conformance knows
// it (see conformance_fixtures.go); this build ships no fixtures and
// refuses the name like any unknown family.
const FamilyConformance Family = "conformance"

// fixtureFamilies adds no family to knownFamilies in the product build.
var fixtureFamilies []Family

// fixtureState is empty in the product build: [New] never creates one, so
// its methods are only here to keep server.go free of build tags.
type fixtureState struct{}

func (s *Server) fixtureTools() ([]*tool, error) {
	return nil, errors.New("this binary was built without the conformance fixtures (go build -tags conformance)")
}

func (*fixtureState) configure(*sdk.ServerOptions) {}
func (*fixtureState) register(*sdk.Server)         {}
func (*fixtureState) owns(string) bool             { return false }
