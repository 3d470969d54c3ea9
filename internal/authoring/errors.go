package authoring

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/validate"
)

// Error codes returned in [Error.Code]. They are stable: the mcp layer maps
// them onto isError results, and agents branch on them.
const (
	// CodeInvalidArgument: an argument is unknown, mistyped or out of range.
	CodeInvalidArgument = "INVALID_ARGUMENT"
	// CodePathOutsideWorkspace: a path resolves outside the workspace root.
	CodePathOutsideWorkspace = "PATH_OUTSIDE_WORKSPACE"
	// CodeAlreadyExists: the target exists and the call may not replace it.
	CodeAlreadyExists = "ALREADY_EXISTS"
	// CodeNotFound: the contract, or a named item to remove, does not exist.
	CodeNotFound = "NOT_FOUND"
	// CodeInvalidContract: the result would not be a valid contract.
	CodeInvalidContract = "INVALID_CONTRACT"
	// CodeInternal: an I/O or other unexpected failure.
	CodeInternal = "INTERNAL"
)

// Error is the error type of every exported operation in this package.
type Error struct {
	// Code is one of the Code* constants.
	Code string `json:"code"`
	// Message says what went wrong in a sentence an agent can act on.
	Message string `json:"message"`
	// Field names the argument at fault (e.g. "add_interfaces[1].type"), if any.
	Field string `json:"field,omitempty"`
	// Accepted lists the accepted names or values when the fault is an
	// unknown name or an out-of-range value.
	Accepted []string `json:"accepted,omitempty"`
	// DidYouMean is the closest accepted name, if one is close enough.
	DidYouMean string `json:"didYouMean,omitempty"`
	// Findings carries validation findings for CodeInvalidContract.
	Findings []validate.Finding `json:"findings,omitempty"`

	err error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.err }

func argError(field, msg string) *Error {
	return &Error{Code: CodeInvalidArgument, Field: field, Message: msg}
}

// internalError wraps an I/O failure. os.Root refusing a symlink that leads
// out of the workspace is reported as PATH_OUTSIDE_WORKSPACE, and a link
// loop as an argument error on "path": the caller's path is at fault, not
// the server ([bundle.RootError] tells them apart).
func internalError(msg string, err error) *Error {
	var pe *fs.PathError
	switch cerr := bundle.RootError(err); {
	case errors.Is(cerr, bundle.ErrOutsideRoot) && errors.As(err, &pe):
		return &Error{Code: CodePathOutsideWorkspace, Message: fmt.Sprintf(
			"%s: %s leads outside the workspace through a symlink", msg, pe.Path), err: err}
	case errors.Is(cerr, bundle.ErrLinkLoop):
		e := argError("path", fmt.Sprintf("%s: the path cannot be used: its symbolic links loop, so it names no file or directory; remove or fix the link", msg))
		e.err = err
		return e
	}
	return &Error{Code: CodeInternal, Message: msg + ": " + err.Error(), err: err}
}
