// Package grpctools turns the gRPC interfaces of a Pacto bundle into tools —
// one per unary or server-streaming RPC — and decodes their arguments into
// request messages. Calling the live service is package
// internal/grpctools/invoke's; this package decides what a tool is.
//
// # Compiling
//
// Compile compiles an interface's .proto file through internal/protofiles:
// imports resolve inside the bundle only, plus the google/protobuf
// standard imports, bounded by Limits; errors name file:line:col. Bundle
// content is untrusted: nothing here may panic or grow without a bound on
// any input.
//
// # Projection
//
// Project returns a Capability: the exposed [Tool]s, every withheld RPC
// with its reason (WRITES_NOT_ALLOWED, DENIED, NOT_ALLOWED, RESERVED_NAME,
// UNSUPPORTED, STREAMING, DRIFT) and warning lines. The tools lock
// (internal/openapitools) pins gRPC tools too ([Tool.Pin]): under a lock
// (Options.Lock) a tool is served only when the lock pins it unchanged,
// any other is withheld with DRIFT. A tool is named
// <Service>_<Method> (prefixed <interface>_ when the bundle has several
// grpc interfaces). Client- and bidi-streaming RPCs are withheld
// (STREAMING); a request that reaches google.protobuf.Any is withheld
// (UNSUPPORTED), as a tool cannot check what it holds.
//
// # Schemas
//
// Input and output schemas are JSON Schema 2020-12 under the proto3 JSON
// mapping: JSON field names, 64-bit integers as decimal strings, enums by
// name, bytes as base64, maps as objects (keys patterned by key type),
// oneof as "at most one of" rules, Timestamp and Duration as strings,
// wrappers as their value, Struct/Value/ListValue as JSON, FieldMask as a
// string. A message met again inside itself is "an object" there: the
// decoding checks its fields. Schemas larger than MaxSchemaBytes withhold
// the RPC.
//
// # Annotations and writes
//
// readOnlyHint only for idempotency_level = NO_SIDE_EFFECTS; IDEMPOTENT
// sets idempotentHint; everything else is destructive, exposed only with
// Options.AllowWrites, and confirmed under Options.ConfirmWrites
// (Tool.NeedsConfirmation).
//
// # Imports
//
// It must not import MCP or Kubernetes packages: package mcp wraps it, and
// the sidecar links it without a Kubernetes client. It never imports its
// call, package invoke, which imports it.
package grpctools
