// Package failure is kubepact's one vocabulary of registry and bundle
// failures: why a pull, a tag resolution or a bundle load failed, as one
// [Kind] read from the error's type, and the one code each Kind is
// answered with.
//
// [Classify] is the only classifier of such failures. It reads the typed
// errors of bundle/oci ([oci.RegistryError] and its sentinels), of
// bundle/archive and of package bundle with errors.Is and errors.As, never
// the error's text. Each surface then maps the Kind through one table:
//
//   - [Kind.Code], the codes of `kubepact check -o json` and of the MCP
//     answers (the catalog's reasons, the fleet's source errors, a ref's
//     tool error): one code per Kind, the same words on both;
//   - the ServiceContract condition reasons, CamelCase as Kubernetes has
//     them, in package controllers (classifyPull), keyed by Kind.
//
// A message stays with each surface, which knows what the user is looking
// at; the code comes from here.
//
// This package imports only bundle, bundle/oci and bundle/archive; never MCP,
// Kubernetes or the fleet graph.
package failure

import (
	"context"
	"errors"
	"io/fs"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
)

// Kind is why a registry operation or a bundle load failed. The zero Kind
// is Unavailable: what is not known to be about the reference or the
// bundle is taken as a failure to reach them, which a retry may heal.
type Kind int

// The kinds. A new one needs a row in every surface's table (Kind.Code
// here, the condition reasons in package controllers); tests fail until it
// has them.
const (
	// Unavailable: the registry or the files could not be reached or did
	// not answer (a refused connection, DNS, TLS, a timeout, an HTTP 5xx,
	// 429 or other refusal); nothing is known about the reference.
	Unavailable Kind = iota
	// NotFound: no such repository, tag or digest; no such directory.
	NotFound
	// AuthFailed: the registry refused the credentials or their absence
	// (HTTP 401, 403, unusable credentials), or a file may not be read.
	AuthFailed
	// NotAllowed: the registry policy refused the registry, a host it
	// sent the request on to, or a redirect; nothing was sent there.
	NotAllowed
	// InvalidReference: the reference is malformed, or a local one names
	// a file rather than a bundle directory.
	InvalidReference
	// Unreadable: what the reference names is not a Pacto bundle: a
	// foreign artifact (media types, layer count), content that does not
	// match its digest, a malformed archive, no pacto.yaml.
	Unreadable
	// TooLarge: the bundle, one of its files, or the artifact's manifest,
	// configuration or layer is larger than the limits allow.
	TooLarge
	// Unsafe: an entry is a link, a device or a path leaving the bundle.
	Unsafe
	// Cancelled: the caller cancelled, or its own deadline passed, before
	// the operation finished.
	Cancelled

	numKinds
)

// Kinds returns every Kind, in their order.
func Kinds() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// The codes of Kind.Code.
const (
	CodeUnavailable      = "UNAVAILABLE"
	CodeNotFound         = "NOT_FOUND"
	CodeAuthFailed       = "AUTH_FAILED"
	CodeNotAllowed       = "REGISTRY_NOT_ALLOWED"
	CodeInvalidReference = "INVALID_REFERENCE"
	CodeUnreadable       = "BUNDLE_UNREADABLE"
	CodeTooLarge         = "LIMIT_EXCEEDED"
	CodeUnsafe           = "UNSAFE_BUNDLE"
	CodeCancelled        = "CANCELLED"
)

// codes is the one table of answer codes: `kubepact check -o json` and
// every MCP answer that names a registry or bundle failure.
var codes = [numKinds]string{
	Unavailable:      CodeUnavailable,
	NotFound:         CodeNotFound,
	AuthFailed:       CodeAuthFailed,
	NotAllowed:       CodeNotAllowed,
	InvalidReference: CodeInvalidReference,
	Unreadable:       CodeUnreadable,
	TooLarge:         CodeTooLarge,
	Unsafe:           CodeUnsafe,
	Cancelled:        CodeCancelled,
}

// Code is the code k is answered with, in `kubepact check -o json` and
// in MCP answers alike; UNAVAILABLE for a Kind out of range.
func (k Kind) Code() string {
	if k < 0 || k >= numKinds {
		return CodeUnavailable
	}
	return codes[k]
}

// String is k's code.
func (k Kind) String() string { return k.Code() }

// Classify names why err, from bundle/oci's Client or from loading a
// bundle (package bundle), failed. It reads err by type only. A nil err,
// or one carrying no type it knows, is Unavailable.
func Classify(err error) Kind {
	if re, ok := errors.AsType[*oci.RegistryError](err); ok {
		// The registry failure was classified where it happened; its
		// Problem is the finer word.
		return problemKind(re.Problem)
	}
	switch {
	case err == nil:
		return Unavailable
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Cancelled
	case errors.Is(err, oci.ErrInvalidReference), errors.Is(err, bundle.ErrNotDirectory):
		return InvalidReference
	case errors.Is(err, oci.ErrNotAllowed):
		return NotAllowed
	case errors.Is(err, oci.ErrTooLarge), errors.Is(err, archive.ErrLimit):
		return TooLarge
	case errors.Is(err, archive.ErrUnsafe), errors.Is(err, bundle.ErrOutsideRoot), errors.Is(err, bundle.ErrLinkLoop):
		return Unsafe
	case errors.Is(err, oci.ErrInvalidArtifact), errors.Is(err, archive.ErrFormat), errors.Is(err, bundle.ErrNoContract):
		return Unreadable
	case errors.Is(err, oci.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		return NotFound
	case errors.Is(err, oci.ErrAuthFailed), errors.Is(err, fs.ErrPermission):
		return AuthFailed
	}
	return Unavailable
}

// problemKind is the Kind of a classified registry failure.
func problemKind(p oci.Problem) Kind {
	switch p {
	case oci.ProblemNotAllowed, oci.ProblemAddress, oci.ProblemRedirect:
		return NotAllowed
	case oci.ProblemAuth:
		return AuthFailed
	case oci.ProblemNotFound:
		return NotFound
	case oci.ProblemCancelled:
		return Cancelled
	}
	// TLS, plain HTTP, refused connections, DNS, the client's own timeout,
	// other HTTP statuses: the registry was not usefully reached.
	return Unavailable
}
