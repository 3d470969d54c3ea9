package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/capability"
)

// CodeNotConfirmed is the code of a generated tool's call that needed the
// user's confirmation (see capability.Options.ConfirmWrites) and did not
// get it; nothing was sent. Reason says why: DECLINED, CANCELLED,
// NO_ELICITATION (the client cannot ask its user) or ELICITATION_FAILED.
const CodeNotConfirmed = "NOT_CONFIRMED"

// Reasons of a NOT_CONFIRMED error.
const (
	notConfirmedDeclined  = "DECLINED"
	notConfirmedCancelled = "CANCELLED"
	notConfirmedNoAsk     = "NO_ELICITATION"
	notConfirmedFailed    = "ELICITATION_FAILED"
)

// confirmRemedy is what an operator changes to let such calls through.
const confirmRemedy = "use a client that supports MCP elicitation and confirm the request there; for unattended use, start the server with --confirm-writes=never"

// maxShownBody bounds the body shown in a confirmation request; a longer
// body is shown cut, with its length and digest.
const maxShownBody = 8 << 10

// protocolMRTR is the first protocol version on which a server may not
// send requests of its own while serving one: elicitation becomes the
// input-required / retry flow (multi round-trip requests, SEP-2322).
const protocolMRTR = "2026-07-28"

// confirmInputID names the confirmation among a result's input requests.
const confirmInputID = "confirm"

// callRequestKey carries the tools/call request in a tool call's context,
// for the input responses of a retried call.
type callRequestKey struct{}

func withCallRequest(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	return context.WithValue(ctx, callRequestKey{}, req)
}

// inputRequired is the confirmer's answer on the 2026-07-28 era: the call
// ends with an input-required result asking the client to confirm, and
// the client retries with the user's answer.
type inputRequired struct {
	ask   *sdk.ElicitParams
	state string
}

func (e *inputRequired) Error() string { return "the user's confirmation is required" }

func (e *inputRequired) result() *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{confirmInputID: e.ask}, RequestState: e.state}
}

// notConfirmed is the error of a call the user did not confirm.
func notConfirmed(call *capability.PendingCall, reason, msg string) error {
	return &ToolError{Code: CodeNotConfirmed, Reason: reason, Remedy: confirmRemedy,
		Message: fmt.Sprintf("%s was not called: %s. Nothing was sent to the service", call.Tool, msg)}
}

// confirmRequest is the elicitation showing call.
func confirmRequest(call *capability.PendingCall) *sdk.ElicitParams {
	return &sdk.ElicitParams{
		Mode:            "form",
		Message:         confirmMessage(call),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
}

// confirmByElicitation asks the user at the client to confirm a pending
// call: through elicitation/create on the calling session (2025-11-25 and
// before), or with an input-required result the client answers by
// retrying (2026-07-28). It refuses (a NOT_CONFIRMED ToolError) unless the
// user accepted.
func confirmByElicitation(ctx context.Context, call *capability.PendingCall) error {
	refuse := func(reason, msg string) error { return notConfirmed(call, reason, msg) }
	if req, _ := ctx.Value(callRequestKey{}).(*sdk.CallToolRequest); req != nil && req.ProtocolVersion() >= protocolMRTR {
		return confirmByRetry(req, call)
	}
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	if ss == nil {
		return refuse(notConfirmedNoAsk, "it needs the user's confirmation and there is no client session to ask through")
	}
	init := ss.InitializeParams()
	switch {
	case init == nil || init.Capabilities == nil || init.Capabilities.Elicitation == nil:
		return refuse(notConfirmedNoAsk, "it needs the user's confirmation and this client did not declare the elicitation capability, so the server cannot ask")
	}
	res, err := ss.Elicit(ctx, confirmRequest(call))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var te *ToolError
		if errors.As(err, &te) {
			return te
		}
		return refuse(notConfirmedFailed, "asking the user for confirmation failed: "+err.Error())
	}
	return answered(call, res)
}

// answered turns the user's answer into the call's verdict.
func answered(call *capability.PendingCall, res *sdk.ElicitResult) error {
	switch res.Action {
	case "accept":
		return nil
	case "decline":
		return notConfirmed(call, notConfirmedDeclined, "the user declined it")
	default:
		return notConfirmed(call, notConfirmedCancelled, fmt.Sprintf("the user dismissed the confirmation (%s)", orNone([]string{res.Action})))
	}
}

// confirmByRetry is the 2026-07-28 flow. The first call answers
// input-required with the confirmation to show and, as request state, the
// digest of the request it shows; the retry carries the user's answer and
// that state, and is sent only when the state is the digest of the
// request the retry would send — a confirmation never covers another
// request than the one the user saw.
func confirmByRetry(req *sdk.CallToolRequest, call *capability.PendingCall) error {
	state := pendingDigest(call)
	if resp, ok := req.Params.InputResponses[confirmInputID]; ok {
		res, ok := resp.(*sdk.ElicitResult)
		if !ok {
			return notConfirmed(call, notConfirmedFailed, fmt.Sprintf("the retry's input response %q is not an elicitation result", confirmInputID))
		}
		if req.Params.RequestState != state {
			return notConfirmed(call, notConfirmedFailed, "the confirmation the retry carries was given for another request than the one this call would send")
		}
		return answered(call, res)
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return notConfirmed(call, notConfirmedNoAsk, "it needs the user's confirmation and this client did not declare the elicitation capability, so the server cannot ask")
	}
	return &inputRequired{ask: confirmRequest(call), state: state}
}

// pendingDigest identifies a pending request: what the user confirms.
func pendingDigest(call *capability.PendingCall) string {
	h := sha256.New()
	for _, part := range []string{call.Tool, call.Method, call.URL} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	names := make([]string, 0, len(call.Header))
	for name := range call.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range call.Header[name] {
			fmt.Fprintf(h, "%d:%s%d:%s", len(name), name, len(v), v)
		}
	}
	fmt.Fprintf(h, "%d:", len(call.Body))
	h.Write(call.Body)
	return "confirm-" + hex.EncodeToString(h.Sum(nil))
}

// confirmMessage shows the request exactly as it will be sent, but for
// credentials, which are added after confirmation.
func confirmMessage(call *capability.PendingCall) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Allow %s to send this request to the live service? It may change or delete data.\n\n%s %s\n", call.Tool, call.Method, call.URL)
	names := make([]string, 0, len(call.Header))
	for name := range call.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range call.Header[name] {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	if len(call.Body) > 0 {
		body := call.Body
		cut := len(body) > maxShownBody
		if cut {
			body = body[:maxShownBody]
		}
		b.WriteString("\n")
		if utf8.Valid(body) || cut {
			b.WriteString(strings.ToValidUTF8(string(body), "\uFFFD"))
		} else {
			fmt.Fprintf(&b, "(%d bytes that are not text)", len(call.Body))
		}
		if cut {
			sum := sha256.Sum256(call.Body)
			fmt.Fprintf(&b, "\n… the body is %d bytes in all; the first %d are shown (sha256 %s)", len(call.Body), maxShownBody, hex.EncodeToString(sum[:]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nCredentials, if the operation takes any, are added after you accept and are not shown. Accept to send it exactly as shown; decline to send nothing.")
	return b.String()
}
