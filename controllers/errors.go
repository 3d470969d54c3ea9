package controllers

import (
	"errors"
	"fmt"
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
