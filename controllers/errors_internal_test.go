package controllers

import (
	"testing"

	"github.com/kubepact/kubepact/bundle/failure"
)

// TestEveryFailureKindHasAReason: a Kind added to bundle/failure gets a
// condition reason here too, so it cannot reach a ServiceContract as the
// fallback by being forgotten.
func TestEveryFailureKindHasAReason(t *testing.T) {
	for _, k := range failure.Kinds() {
		if pullReasons[k].reason == "" {
			t.Errorf("pullReasons has no row for %s", k)
		}
	}
	if len(pullReasons) != len(failure.Kinds()) {
		t.Errorf("pullReasons has %d rows for %d kinds", len(pullReasons), len(failure.Kinds()))
	}
}
