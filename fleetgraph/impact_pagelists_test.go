package fleetgraph_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestImpactPageListsAreTheConsumers: every consumer on a page has a path
// and a targets list of its own: [] when it runs on no target (never
// null), and appending to one consumer's list leaves the next one's as it
// was. The page hands those lists out of shared blocks.
func TestImpactPageListsAreTheConsumers(t *testing.T) {
	s := riskFleet(t) // no targets at all
	res, err := s.Impact(t.Context(), payBundle(t, "1.0.0", true), payBundle(t, "1.1.0", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Consumers) < 2 {
		t.Fatalf("%d consumers, want the fleet's 8", len(res.Consumers))
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"targets":null`) || strings.Contains(string(raw), `"path":null`) {
		t.Errorf("a consumer's list encodes as null: %s", raw)
	}
	want := make([][]string, len(res.Consumers))
	for i, c := range res.Consumers {
		want[i] = slices.Clone(c.Path)
	}
	for i := range res.Consumers {
		c := &res.Consumers[i]
		c.Path = append(c.Path, "appended")
		c.Targets = append(c.Targets, "appended")
	}
	for i, c := range res.Consumers {
		if got := c.Path[:len(c.Path)-1]; !slices.Equal(got, want[i]) {
			t.Errorf("consumer %s: path %v after appending to the others', want %v", c.Service, got, want[i])
		}
		if !slices.Equal(c.Targets, []string{"appended"}) {
			t.Errorf("consumer %s: targets %v after appending to the others', want only its own append", c.Service, c.Targets)
		}
	}
}
