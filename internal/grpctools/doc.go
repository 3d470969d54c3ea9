// Package grpctools turns the gRPC interfaces of a Pacto bundle into tools —
// one per unary or server-streaming RPC — and decodes their arguments into
// request messages. Calling the live service is package
// internal/grpctools/invoke's; this package decides what a tool is.
//
// # Compiling
//
// Compile compiles an interface's .proto file with protocompile. Imports
// resolve inside the bundle only (the file's own directory, then the
// bundle root), plus the google/protobuf standard imports; an import with
// .. or a leading /, a missing file, a cycle, or more files, bytes or
// message types than Limits allow is an error that names the file (and,
// for what the compiler reports, its line and column). Bundle content is
// untrusted: nothing here may panic or grow without a bound on any input.
//
// # Projection
//
// Project returns a Capability: the exposed [Tool]s, every withheld RPC
// with its reason (WRITES_NOT_ALLOWED, DENIED, NOT_ALLOWED, RESERVED_NAME,
// UNSUPPORTED, STREAMING) and warning lines. A tool is named
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
