// Package validate checks a Pacto v2.0 bundle the way Pacto does and reports
// findings with Pacto's codes, as {path, code, message} split into errors and
// warnings.
//
// Validation runs in three layers; each one runs only if the layer before it
// found no errors (warnings do not stop it):
//
//  1. structural: the document parses (YAML_PARSE_ERROR), declares
//     pactoVersion "2.0" (UNSUPPORTED_PACTO_VERSION) and satisfies the
//     embedded JSON Schema (SCHEMA_VIOLATION);
//  2. cross-field: semver, unique names, files that exist in the bundle and
//     parse as what they claim, configuration values against their schema,
//     OCI reference grammar, capabilities, readiness dates and claims;
//  3. policy: every policy schema, local or referenced, is enforced against
//     the contract itself.
//
// References to other bundles (configuration and policy refs) are resolved
// through the Resolver the caller supplies. Without one, or when resolving
// fails: a policy ref fails closed (POLICY_REF_UNRESOLVED, an error); a
// configuration ref is an error (INVALID_CONFIG_REF) when a resolver was
// given and failed, and a warning (CONFIG_REF_NOT_RESOLVED, kubepact's own
// code) when no resolver was given at all, because its schema could not be
// checked. A ref that cannot be fetched because of a network failure (no
// such host, a refused connection, a timeout) is neither: it is
// REF_UNREACHABLE (kubepact's own code), an error that means "could not
// check" — Result.CouldNotCheck tells it apart, and the policy layer still
// runs. Reference chains are followed at most MaxRefDepth deep, with
// cycle detection. Validation stops between its steps when its context
// ends: the result then carries VALIDATION_STOPPED (kubepact's own code),
// "could not check" as well.
//
// Every input is treated as hostile: files are read with size limits, YAML
// aliases are bounded, schemas may not load anything outside the bundle or
// hold a number with more digits or a larger exponent than exact
// arithmetic can afford (internal/jsonobj's bounds), and no input makes
// Validate panic.
//
// This package imports bundle/contract and third-party parsers only; it must
// not import bundle loading, OCI, MCP, fleetgraph or Kubernetes packages.
// Callers that can fetch bundles wire that in through Resolver.
package validate
