package validate

// Finding codes. The names and meanings are Pacto's (its validation
// reference), except CodeConfigRefNotResolved, CodeRefUnreachable,
// CodeValidationStopped, CodeSchemaRefCycle, CodeSchemaTooDeep and
// CodeAllOfClosedSchema, which
// are kubepact's.
const (
	// Structural layer.
	CodeYAMLParseError          = "YAML_PARSE_ERROR"
	CodeUnsupportedPactoVersion = "UNSUPPORTED_PACTO_VERSION"
	CodeSchemaViolation         = "SCHEMA_VIOLATION"
	CodeSchemaError             = "SCHEMA_ERROR"

	// Cross-field layer.
	CodeInvalidSemver              = "INVALID_SEMVER"
	CodeDuplicateInterfaceName     = "DUPLICATE_INTERFACE_NAME"
	CodeDuplicateConfigurationName = "DUPLICATE_CONFIGURATION_NAME"
	CodeDuplicatePolicyName        = "DUPLICATE_POLICY_NAME"
	CodeDuplicateDependencyName    = "DUPLICATE_DEPENDENCY_NAME"
	// Deprecated: Pacto 2.0 no longer emits it; the rule is the schema's, reported as SCHEMA_VIOLATION.
	CodeInvalidInterfaceType = "INVALID_INTERFACE_TYPE"
	// Deprecated: Pacto 2.0 no longer emits it; the rule is the schema's, reported as SCHEMA_VIOLATION.
	CodeInterfaceRefRequired = "INTERFACE_REF_REQUIRED"
	CodeFileNotFound         = "FILE_NOT_FOUND"
	CodeInvalidInterfaceSpec = "INVALID_INTERFACE_SPEC"
	CodeSchemaRefCycle       = "SCHEMA_REF_CYCLE" // kubepact's own: a $ref cycle no validator can evaluate
	CodeSchemaTooDeep        = "SCHEMA_TOO_DEEP"  // kubepact's own: schemas nested past schemacycle.MaxChain on one value
	// Deprecated: Pacto 2.0 no longer emits it; the rule is the schema's, reported as SCHEMA_VIOLATION.
	CodeInvalidCapabilityType = "INVALID_CAPABILITY_TYPE"
	// Deprecated: Pacto 2.0 no longer emits it; the rule is the schema's, reported as SCHEMA_VIOLATION.
	CodeCapabilityRefRequired        = "CAPABILITY_REF_REQUIRED"
	CodeCapabilityRefInvalid         = "CAPABILITY_REF_INVALID"
	CodeDuplicateCapability          = "DUPLICATE_CAPABILITY"
	CodeCapabilityInterfaceUnknown   = "CAPABILITY_INTERFACE_UNKNOWN"
	CodeCapabilityPathInvalid        = "CAPABILITY_PATH_INVALID"
	CodeInvalidOCIRef                = "INVALID_OCI_REF"
	CodeInvalidCompatibility         = "INVALID_COMPATIBILITY"
	CodeEmptyCompatibility           = "EMPTY_COMPATIBILITY"
	CodeTagNotDigest                 = "TAG_NOT_DIGEST" // warning
	CodeInvalidConfigRef             = "INVALID_CONFIG_REF"
	CodeConfigRefNotResolved         = "CONFIG_REF_NOT_RESOLVED" // warning; kubepact's own code
	CodeValuesWithoutSchema          = "VALUES_WITHOUT_SCHEMA"
	CodeInvalidConfigJSON            = "INVALID_CONFIG_JSON"
	CodeInvalidConfigSchema          = "INVALID_CONFIG_SCHEMA"
	CodeConfigValuesValidationFailed = "CONFIG_VALUES_VALIDATION_FAILED"
	CodeInvalidPolicyJSON            = "INVALID_POLICY_JSON"
	CodeInvalidPolicySchema          = "INVALID_POLICY_SCHEMA"
	CodeInvalidPolicyRef             = "INVALID_POLICY_REF"
	// Deprecated: Pacto 2.0 no longer emits it; the rule is the schema's, reported as SCHEMA_VIOLATION.
	CodeUnsupportedPolicyTarget     = "UNSUPPORTED_POLICY_TARGET"
	CodeDuplicateReadinessID        = "DUPLICATE_READINESS_ID"
	CodeEmptyReadinessEvidence      = "EMPTY_READINESS_EVIDENCE"
	CodeEmptyReadinessDescription   = "EMPTY_READINESS_DESCRIPTION"
	CodeInvalidReadinessExpires     = "INVALID_READINESS_EXPIRES"
	CodeInvalidReadinessRevision    = "INVALID_READINESS_REVISION"
	CodeStatelessPersistentConflict = "STATELESS_PERSISTENT_CONFLICT"

	// CodeAllOfClosedSchema is a warning, kubepact's own: an allOf in an
	// interface spec has a branch closed by additionalProperties: false
	// that refuses fields the rest of the allOf declares, so no value
	// carrying them fits.
	CodeAllOfClosedSchema = "ALLOF_CLOSED_SCHEMA"

	// Policy layer.
	CodePolicyRefUnresolved    = "POLICY_REF_UNRESOLVED"
	CodePolicyRefCycle         = "POLICY_REF_CYCLE"
	CodePolicyViolation        = "POLICY_VIOLATION"
	CodePolicyEnforcementError = "POLICY_ENFORCEMENT_ERROR"
	CodePolicyRefNotEnforced   = "POLICY_REF_NOT_ENFORCED" // warning; in Pacto's catalogue, not emitted here

	// CodeRefUnreachable is an error that says the bundle could not be
	// checked, not that it is invalid: a configuration or policy ref could
	// not be fetched because of a network failure (no such host, refused,
	// timed out). See [Result.CouldNotCheck]. kubepact's own code.
	CodeRefUnreachable = "REF_UNREACHABLE"
	// CodeValidationStopped is an error that says validation stopped
	// before it finished because its context ended (the call was
	// cancelled or timed out): like REF_UNREACHABLE, "could not check",
	// not "invalid". kubepact's own code.
	CodeValidationStopped = "VALIDATION_STOPPED"
)
