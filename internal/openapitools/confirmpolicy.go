package openapitools

import (
	"fmt"
	"net/http"
	"slices"
)

// Confirmation policies: which calls wait for a person's confirmation
// before they are sent (Options.ConfirmWrites).
const (
	ConfirmDelete = "delete" // DELETE operations (the default)
	ConfirmAlways = "always" // every operation but GET and HEAD
	ConfirmNever  = "never"  // none: for unattended use
)

var confirmPolicies = []string{ConfirmDelete, ConfirmAlways, ConfirmNever}

// checkConfirmPolicy accepts the policies above and "" (the default).
func checkConfirmPolicy(p string) error {
	if p == "" || slices.Contains(confirmPolicies, p) {
		return nil
	}
	return fmt.Errorf("ConfirmWrites %q is not accepted; use %s, %s or %s", p, ConfirmDelete, ConfirmAlways, ConfirmNever)
}

// NeedsConfirmation reports whether a call to t is sent only once a person
// has confirmed it (see Options.ConfirmWrites): package invoke then
// refuses a call made without a Confirmer in its context, and never sends
// it unconfirmed.
func (t *Tool) NeedsConfirmation() bool {
	if t.op == nil || t.op.opts == nil {
		return false
	}
	switch t.op.opts.ConfirmWrites {
	case ConfirmNever:
		return false
	case ConfirmAlways:
		return !readMethod(t.Method)
	default:
		return t.Method == http.MethodDelete
	}
}
