package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is a family a program adds to the server beside kubepact's
// own, through [Options.Extensions]: tools, and optionally resources,
// prompts and server options. hack/conformance/server serves the MCP
// conformance suite's fixtures this way. It is listed, switched on by
// --families and described in the instructions like any family, and its
// tools go through the same assembly: strict argument decoding, the error
// envelope, the audit line and metrics. Its tools' names must not start
// with pacto_, which is kubepact's.
type Extension struct {
	// Name is the family's name, as --families takes it.
	Name Family
	// Summary describes the family in one sentence for the instructions.
	Summary string
	// Tools are the family's tools.
	Tools []ExtensionTool
	// Configure adjusts the SDK server options before the SDK server is
	// made (capabilities, handlers).
	Configure func(*sdk.ServerOptions)
	// Register adds resources, prompts and middleware once the SDK server
	// exists.
	Register func(*sdk.Server)
}

// ExtensionTool is one tool of an [Extension].
type ExtensionTool struct {
	// Name, Title and Description are the tool's public text.
	Name, Title, Description string
	// ReadOnly, Destructive, Idempotent and OpenWorld are its four MCP
	// annotations, which every tool states.
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Input is the input schema (type object); Output the success shape.
	Input, Output *jsonschema.Schema
	// Call answers a call with arguments already checked against Input
	// (re-encoded, without unknown or duplicate names). An error becomes
	// the error envelope (a [ToolError] keeps its code).
	Call func(ctx context.Context, args json.RawMessage) (*sdk.CallToolResult, error)
}

// SessionOf is the client session of the tool call ctx belongs to (nil
// outside a call), for a tool that talks back to its client (logging,
// progress, sampling, elicitation).
func SessionOf(ctx context.Context) *sdk.ServerSession {
	return sessionOf(ctx)
}

// CallRequestOf is the tools/call request the tool call ctx belongs to
// (nil outside a call), for a tool that reads what the request carries
// beside its arguments: the input responses and request state of a
// 2026-07-28 retry, and the client capabilities the request declares.
func CallRequestOf(ctx context.Context) *sdk.CallToolRequest {
	req, _ := ctx.Value(callRequestKey{}).(*sdk.CallToolRequest)
	return req
}

// family makes x one more family of the server.
func (x *Extension) family() *family {
	return &family{name: x.Name, summary: x.Summary, build: func(context.Context, *familyEnv) (*familyParts, error) {
		tools := make([]*tool, 0, len(x.Tools))
		for _, et := range x.Tools {
			if strings.HasPrefix(strings.ToLower(et.Name), reservedPrefix) {
				return nil, fmt.Errorf("tool %s: the %s prefix is kubepact's own tools'", et.Name, reservedPrefix)
			}
			dec, err := newArgDecoder(et.Input)
			if err != nil {
				return nil, fmt.Errorf("tool %s: %w", et.Name, err)
			}
			call := et.Call
			tools = append(tools, &tool{
				name: et.Name, title: et.Title, description: et.Description,
				hints:  hints{readOnly: et.ReadOnly, destructive: et.Destructive, idempotent: et.Idempotent, openWorld: et.OpenWorld},
				input:  et.Input,
				output: et.Output,
				call: func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult {
					var clean json.RawMessage
					if err := dec.decode(args, &clean); err != nil {
						return errorResult(err)
					}
					res, err := call(ctx, clean)
					if err != nil {
						return errorResult(err)
					}
					return res
				},
			})
		}
		return &familyParts{tools: tools, configure: x.Configure, register: x.Register, extension: true}, nil
	}}
}
