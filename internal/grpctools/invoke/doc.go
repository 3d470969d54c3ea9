// Package invoke calls the live gRPC service behind a tool of package
// internal/grpctools: it decodes the tool's JSON arguments into the RPC's
// request message (dynamicpb, no generated code and no server reflection:
// the bundle's .proto is the pinned truth), sends it over plaintext HTTP/2
// to the configured target with the call's deadline, message size bounds
// and configured metadata, and maps the answer to a [Result]: the
// response as proto3 JSON (server-streaming: the messages, bounded, with
// truncated), or the status code, message and google.rpc.Status details.
//
// Calls that need a person's confirmation (grpctools Tool.NeedsConfirmation)
// ask the Confirmer of package internal/openapitools/invoke, so the MCP
// server confirms OpenAPI and gRPC writes alike; without one such a call is
// refused and nothing is sent.
//
// It must not import MCP or Kubernetes packages.
package invoke
