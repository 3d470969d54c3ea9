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
// send requests of its own while serving one (elicitation becomes the
// input-required / retry flow, which kubepact does not offer yet).
const protocolMRTR = "2026-07-28"

// confirmByElicitation asks the user at the client, through
// elicitation/create on the calling session, to confirm a pending call.
// It refuses (a NOT_CONFIRMED ToolError) unless the user accepted.
func confirmByElicitation(ctx context.Context, call *capability.PendingCall) error {
	refuse := func(reason, msg string) error {
		return &ToolError{Code: CodeNotConfirmed, Reason: reason, Remedy: confirmRemedy,
			Message: fmt.Sprintf("%s was not called: %s. Nothing was sent to the service", call.Tool, msg)}
	}
	ss, _ := ctx.Value(sessionKey{}).(*sdk.ServerSession)
	if ss == nil {
		return refuse(notConfirmedNoAsk, "it needs the user's confirmation and there is no client session to ask through")
	}
	init := ss.InitializeParams()
	switch {
	case init == nil || init.Capabilities == nil || init.Capabilities.Elicitation == nil:
		return refuse(notConfirmedNoAsk, "it needs the user's confirmation and this client did not declare the elicitation capability, so the server cannot ask")
	case init.ProtocolVersion >= protocolMRTR:
		return refuse(notConfirmedNoAsk, fmt.Sprintf("it needs the user's confirmation and this session speaks protocol %s, on which kubepact cannot ask yet (the input-required flow is not offered)", init.ProtocolVersion))
	}
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{
		Mode:            "form",
		Message:         confirmMessage(call),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	})
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
	switch res.Action {
	case "accept":
		return nil
	case "decline":
		return refuse(notConfirmedDeclined, "the user declined it")
	default:
		return refuse(notConfirmedCancelled, fmt.Sprintf("the user dismissed the confirmation (%s)", orNone([]string{res.Action})))
	}
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
