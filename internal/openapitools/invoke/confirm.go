package invoke

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// PendingCall is a call about to be sent, as a person confirms it: the
// request exactly as it will leave, but for the credentials, which are
// added after confirmation and never shown.
type PendingCall struct {
	Tool   string
	Method string
	// URL is the whole request URL, query included.
	URL string
	// Target is the path and query (the request target).
	Target string
	// Header holds the headers the arguments and the operation set
	// (Accept, Content-Type, header and cookie parameters).
	Header http.Header
	// Body is the encoded request body; nil without one.
	Body []byte
}

// Confirmer asks a person to confirm a pending call. It returns nil when
// the call may be sent, and an error saying why not otherwise (declined,
// cancelled, nobody to ask); that error is the call's error.
type Confirmer func(ctx context.Context, call *PendingCall) error

type confirmerKey struct{}

// WithConfirmer returns a context whose calls to tools that need
// confirmation ask confirm first.
func WithConfirmer(ctx context.Context, confirm Confirmer) context.Context {
	return context.WithValue(ctx, confirmerKey{}, confirm)
}

// NotConfirmedError is the error of a call that needed confirmation and
// did not get it; nothing was sent.
type NotConfirmedError struct {
	Tool string
}

func (e *NotConfirmedError) Error() string {
	return fmt.Sprintf("%s needs a person's confirmation before it is sent and no one was asked; nothing was sent", e.Tool)
}

// confirm asks the context's Confirmer about req when t needs
// confirmation; without a Confirmer such a call is refused.
func confirm(ctx context.Context, t *openapitools.Tool, req *http.Request, body []byte) error {
	if !t.NeedsConfirmation() {
		return nil
	}
	ask, _ := ctx.Value(confirmerKey{}).(Confirmer)
	if ask == nil {
		return &NotConfirmedError{Tool: t.Name}
	}
	return ask(ctx, &PendingCall{
		Tool:   t.Name,
		Method: req.Method,
		URL:    req.URL.String(),
		Target: req.URL.RequestURI(),
		Header: req.Header.Clone(),
		Body:   slices.Clone(body),
	})
}

// Confirm asks the context's Confirmer about call, for a caller that sends
// its own requests (the gRPC tools): nil when it may be sent; a
// *NotConfirmedError when the context has no Confirmer.
func Confirm(ctx context.Context, call *PendingCall) error {
	ask, _ := ctx.Value(confirmerKey{}).(Confirmer)
	if ask == nil {
		return &NotConfirmedError{Tool: call.Tool}
	}
	return ask(ctx, call)
}
