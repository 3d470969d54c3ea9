// Package diff is the semantic diff of two revisions of a Pacto contract:
// every change to the service identity, interfaces (and their OpenAPI
// operations), configurations, policies, dependencies and capabilities,
// each classified BREAKING, POTENTIAL_BREAKING or NON_BREAKING.
//
// The version change is judged last, against every other change
// ([JudgeBump]): a number that announces compatibility (a minor or patch
// bump, or none) on a revision with a BREAKING change is itself listed as
// BREAKING — "breaking change without a major version bump" — with the
// version that would announce it; a major bump is POTENTIAL_BREAKING (it
// keeps consumers whose range stops below it away until they widen it);
// a bump is called compatible only when nothing else may break.
//
// It needs no fleet: fleetgraph projects a diff onto a snapshot's
// dependents (impact), and authoring or CI can use it on two bundles
// alone. Of kubepact it imports only bundle and its contract model, and
// internal/protofiles: a gRPC interface's .proto files are compiled inside
// the bundle, bounded, and compared RPC by RPC and field by
// field (TestProtoClassificationRules); a side that does not compile is
// "the spec changed".
//
// Every classification rule is one row of TestClassificationRules, the
// package's specification: a change to a base revision and the entries
// (path, kind, classification) the diff gives for it.
package diff
