package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	grpcinvoke "github.com/kubepact/kubepact/internal/grpctools/invoke"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
	"github.com/kubepact/kubepact/internal/payload"
)

// grpcTools wraps the projected gRPC RPCs of cb; one client (one
// connection, made on the first call) serves them all.
func grpcTools(cb *CapabilityBundle, confirms *confirmations) ([]*tool, error) {
	if cb.GRPC == nil || len(cb.GRPC.Tools) == 0 {
		return nil, nil
	}
	client := grpcinvoke.NewClient(cb.GRPC)
	var out []*tool
	for _, gt := range cb.GRPC.Tools {
		t, err := grpcTool(gt, client, confirms)
		if err != nil {
			return nil, fmt.Errorf("gRPC tool %s: %w", gt.Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// grpcTool is one RPC as a tool: its arguments are checked against the
// request message's schema (every fault at once, nothing sent on a
// fault), decoded under the proto3 JSON mapping, confirmed like an
// OpenAPI write when it needs it, and sent; the status comes back as
// structuredContent {code, response | messages+truncated, error}.
func grpcTool(gt *grpctools.Tool, client *grpcinvoke.Client, confirms *confirmations) (*tool, error) {
	var output jsonschema.Schema
	if err := json.Unmarshal(gt.OutputSchema, &output); err != nil {
		return nil, fmt.Errorf("the output schema: %w", err)
	}
	// An argument refusal carries one diagnostic per fault.
	diagSchema, err := jsonschema.For[[]invoke.Diagnostic](nil)
	if err != nil {
		return nil, err
	}
	output.Properties["diagnostics"] = diagSchema
	return &tool{
		name:        gt.Name,
		title:       gt.Title,
		description: gt.Description,
		hints:       hints{readOnly: gt.Hints.ReadOnly, destructive: gt.Hints.Destructive, idempotent: gt.Hints.Idempotent, openWorld: gt.Hints.OpenWorld},
		inputJSON:   gt.InputSchema,
		output:      &output,
		generated:   true,
		call: generatedCall(callSteps{
			input:             gt.InputSchema,
			refuse:            func(diags []invoke.Diagnostic) *sdk.CallToolResult { return generatedRefusal(gt.Name, nil, diags) },
			confirms:          confirms,
			needsConfirmation: gt.NeedsConfirmation,
			send: func(ctx context.Context, _ *argDecoder, _ map[string]any, args json.RawMessage) (*sdk.CallToolResult, error) {
				res, err := client.Call(ctx, gt, args)
				if re := (*grpctools.RequestError)(nil); errors.As(err, &re) {
					return errorResult(&ToolError{Code: CodeInvalidArgument,
						Message: fmt.Sprintf("%s was not called: %s. Nothing was sent to the service", gt.Name, re.Error())}), nil
				}
				if err != nil && strings.HasPrefix(err.Error(), "no gRPC target is configured") {
					return errorResult(&ToolError{Code: CodeInvalidArgument, Message: err.Error(), cause: err}), nil
				}
				if err != nil {
					return nil, err
				}
				return &sdk.CallToolResult{
					IsError:           res.IsError(),
					Content:           []sdk.Content{&sdk.TextContent{Text: grpcResultText(gt, res)}},
					StructuredContent: res,
				}, nil
			},
		}),
	}, nil
}

// grpcResultText is the one line of outcome beside the structured result.
func grpcResultText(gt *grpctools.Tool, res *grpcinvoke.Result) string {
	head := gt.RPC + " → " + res.Code
	if res.Status != nil {
		head += ": " + res.Status.Message
	}
	if gt.ServerStreaming {
		head += fmt.Sprintf("; %d message(s)", len(res.Messages))
	}
	if res.Truncated {
		head += "; cut at the message or byte bound (truncated)"
	}
	return head + "; the result is in structuredContent {code, response | messages, truncated, status}"
}

// grpcInstructions is the gRPC part of the capability instructions; ""
// without gRPC interfaces.
func grpcInstructions(c *grpctools.Capability) string {
	if c == nil || len(c.Interfaces) == 0 {
		return ""
	}
	var names, targets []string
	for _, t := range c.Tools {
		names = append(names, t.Name)
	}
	for _, in := range c.Interfaces {
		tg := in.Target
		if tg == "" {
			tg = "no target configured (calls fail until one is given)"
		}
		targets = append(targets, fmt.Sprintf("interface %q (gRPC, %s) at %s", in.Name, in.Proto, tg))
	}
	if len(names) == 0 {
		return fmt.Sprintf(" No gRPC method is exposed as a tool (%s); pacto_withheld says why.", strings.Join(targets, "; "))
	}
	return fmt.Sprintf(" The tools %s call gRPC methods of the LIVE service (%s): arguments are the request message in the proto3 JSON mapping (64-bit integers as strings, enums by name); the answer is structuredContent {code, response} or, for a server-streaming method, {code, messages, truncated}; a code other than OK is an isError result with status {message, details}. Only methods declared idempotency_level = NO_SIDE_EFFECTS are read-only.",
		strings.Join(names, ", "), strings.Join(targets, "; "))
}

// grpcMessages adapts grpctools.MessageSchemas for the payload checks.
func grpcMessages(ctx context.Context, b *bundle.Bundle) ([]payload.GRPCMessage, error) {
	ms, err := grpctools.MessageSchemas(ctx, b)
	if err != nil {
		return nil, err
	}
	out := make([]payload.GRPCMessage, len(ms))
	for i, m := range ms {
		out[i] = payload.GRPCMessage{Name: m.Name, Interface: m.Interface, File: m.File, Schema: m.Schema, Problem: m.Problem}
	}
	return out, nil
}
