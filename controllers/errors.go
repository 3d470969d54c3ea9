package controllers

import (
	"errors"
	"fmt"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/failure"
)

// stepKind says how a failed sub-step affects the conditions and the retry.
type stepKind int

const (
	// transient: the world may heal on its own (a registry that cannot be
	// reached). The last good digest and summary are kept, Ready is left as
	// it was, Reconciling explains, and the request is retried with backoff.
	transient stepKind = iota
	// stalled: nothing changes until the spec or the bundle does (an invalid
	// contract, a tag that does not exist). Ready=False, Stalled=True, and
	// the object is looked at again after its interval.
	stalled
	// waiting: an object the contract names does not exist yet. Ready=False,
	// Reconciling=True; a watch (or a short requeue, for objects read by name
	// only) brings the reconciler back when it appears.
	waiting
)

// stepError is a sub-step's failure: the condition it turns False, the reason
// (an api/v1alpha1 constant) and how to retry.
type stepError struct {
	condition string
	reason    string
	kind      stepKind
	err       error
}

func (e *stepError) Error() string { return e.err.Error() }

func (e *stepError) Unwrap() error { return e.err }

func newStepError(condition, reason string, kind stepKind, format string, args ...any) *stepError {
	return &stepError{condition: condition, reason: reason, kind: kind, err: fmt.Errorf(format, args...)}
}

// asStepError returns err as a *stepError; any other error is a transient
// failure of the given condition.
func asStepError(err error, condition, reason string) *stepError {
	if se, ok := errors.AsType[*stepError](err); ok {
		return se
	}
	return &stepError{condition: condition, reason: reason, kind: transient, err: err}
}

// pullReasons is the one table of the BundleResolved reasons a failed pull
// gets: each bundle/failure Kind (the same kinds `kubepact check -o json`
// and the MCP answers name, in their words) with its CamelCase reason and
// how it is retried. A Kind missing here fails TestEveryFailureKindHasAReason.
var pullReasons = map[failure.Kind]struct {
	reason string
	kind   stepKind
}{
	failure.Unavailable:      {v1alpha1.ReasonRegistryUnavailable, transient},
	failure.Cancelled:        {v1alpha1.ReasonRegistryUnavailable, transient},
	failure.NotFound:         {v1alpha1.ReasonArtifactNotFound, stalled},
	failure.AuthFailed:       {v1alpha1.ReasonAuthenticationFailed, stalled},
	failure.NotAllowed:       {v1alpha1.ReasonRegistryNotAllowed, stalled},
	failure.InvalidReference: {v1alpha1.ReasonInvalidReference, stalled},
	failure.Unreadable:       {v1alpha1.ReasonBundleUnreadable, stalled},
	failure.TooLarge:         {v1alpha1.ReasonBundleUnreadable, stalled},
	failure.Unsafe:           {v1alpha1.ReasonBundleUnreadable, stalled},
}
