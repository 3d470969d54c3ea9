package catalog

import (
	"testing"

	"github.com/kubepact/kubepact/bundle/failure"
)

// TestEveryFailureKindHasAMessage: a Kind added to bundle/failure gets a
// message of the catalog's for registry and local bundles alike.
func TestEveryFailureKindHasAMessage(t *testing.T) {
	for _, k := range failure.Kinds() {
		if registryMessages[k] == "" {
			t.Errorf("registryMessages has no row for %s", k)
		}
		if localMessages[k] == "" {
			t.Errorf("localMessages has no row for %s", k)
		}
	}
}
