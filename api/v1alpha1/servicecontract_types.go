package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ServiceContractKind is the kind name of ServiceContract.
const ServiceContractKind = "ServiceContract"

// ConfigMapBundleKey is the ConfigMap key (binaryData or data) that holds a
// bundle as `kubepact pack` writes it: the gzip'd tar that is also the
// bundle's OCI layer, so the bundle has the same identity as once pushed.
const ConfigMapBundleKey = "bundle.tar.gz"

// MaxFindings bounds status.findings; status.findingsTotal counts them all.
const MaxFindings = 20

// Condition types. Ready, Reconciling and Stalled are the kstatus triple;
// the others say which step holds Ready back.
const (
	// ConditionReady is True when the bundle is resolved and valid and its
	// target exists.
	ConditionReady = "Ready"
	// ConditionReconciling is True while the reconciler is making progress
	// or retrying a transient failure (kstatus "abnormal-true").
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when no progress is possible until the spec
	// or the referenced objects change (kstatus "abnormal-true").
	ConditionStalled = "Stalled"
	// ConditionBundleResolved is True when the bundle was fetched and
	// pinned to a digest.
	ConditionBundleResolved = "BundleResolved"
	// ConditionContractValid is True when the bundle passed all three
	// validation layers, references followed.
	ConditionContractValid = "ContractValid"
	// ConditionTargetBound is True when the target workload (and the
	// Service, when one is named) exists.
	ConditionTargetBound = "TargetBound"
	// ConditionPodsCurrent is True when every Pod the injection webhook
	// gave a sidecar for this contract runs the current status.digest;
	// False (reason StalePods) while some still run another digest, for
	// instance after a tag moved. It is informational: Ready does not wait
	// for it, and it is absent while no injected Pod exists.
	ConditionPodsCurrent = "PodsCurrent"
)

// Condition reasons.
const (
	// ReasonSucceeded: the step (or, on Ready, the whole reconcile) succeeded.
	ReasonSucceeded = "Succeeded"
	// ReasonProgressing: a reconcile is under way.
	ReasonProgressing = "Progressing"
	// ReasonTagMoved: the tag now names another digest, which was followed.
	ReasonTagMoved = "TagMoved"
	// ReasonInvalidReference: spec.bundle.oci is not a valid reference.
	ReasonInvalidReference = "InvalidReference"
	// ReasonRegistryUnavailable: the registry could not be reached or
	// answered with a server error; retried with backoff.
	ReasonRegistryUnavailable = "RegistryUnavailable"
	// ReasonRegistryNotAllowed: the operator's registry policy
	// (--allowed-registries) refused the registry, a host it sent the
	// request on to, or a redirect; nothing was sent there.
	ReasonRegistryNotAllowed = "RegistryNotAllowed"
	// ReasonAuthenticationFailed: the registry refused the credentials.
	ReasonAuthenticationFailed = "AuthenticationFailed"
	// ReasonArtifactNotFound: the tag or digest does not exist.
	ReasonArtifactNotFound = "ArtifactNotFound"
	// ReasonBundleUnreadable: the artifact or ConfigMap is not a readable
	// Pacto bundle (a foreign artifact, content not matching its digest,
	// larger than the limits, an unsafe entry, no pacto.yaml).
	ReasonBundleUnreadable = "BundleUnreadable"
	// ReasonPullSecretNotFound: spec.pullSecretRef names a Secret that does
	// not exist or holds no .dockerconfigjson.
	ReasonPullSecretNotFound = "PullSecretNotFound"
	// ReasonConfigMapNotFound: spec.bundle.configMapRef names a ConfigMap
	// that does not exist or lacks the bundle key.
	ReasonConfigMapNotFound = "ConfigMapNotFound"
	// ReasonValidationFailed: the contract has validation errors (see
	// status.findings).
	ReasonValidationFailed = "ValidationFailed"
	// ReasonPolicyUnresolved: a policy reference could not be resolved, so
	// the contract is not considered valid (fail closed).
	ReasonPolicyUnresolved = "PolicyUnresolved"
	// ReasonTargetNotFound: the target workload does not exist.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonServiceNotFound: the Service named by spec.serviceRef does not
	// exist.
	ReasonServiceNotFound = "ServiceNotFound"
	// ReasonSuspended: spec.suspend is true; nothing is reconciled.
	ReasonSuspended = "Suspended"
	// ReasonStalePods: some injected Pods run a digest other than
	// status.digest (see status.pods).
	ReasonStalePods = "StalePods"
)

// Bounds of status.pods: at most MaxPodDigests digests, each naming at
// most MaxPodNames Pods; the counts always cover every Pod.
const (
	MaxPodDigests = 8
	MaxPodNames   = 10
)

// ServiceContractSpec says which bundle describes which workload.
type ServiceContractSpec struct {
	// Bundle is where the Pacto bundle is read from.
	// +required
	Bundle BundleSource `json:"bundle"`

	// PullSecretRef names a kubernetes.io/dockerconfigjson Secret in the
	// same namespace holding the registry credentials. It is read by name
	// only when set.
	// +optional
	PullSecretRef *LocalObjectReference `json:"pullSecretRef,omitempty"`

	// TargetRef is the workload, in the same namespace, that serves the
	// contract.
	// +required
	TargetRef TargetReference `json:"targetRef"`

	// ServiceRef optionally names the Service, in the same namespace, that
	// exposes the target.
	// +optional
	ServiceRef *LocalObjectReference `json:"serviceRef,omitempty"`

	// Interval is how often a tag is resolved again, and the target and
	// references re-checked. Minimum 30s.
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('30s')",message="interval must be at least 30s"
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Suspend stops reconciliation; the status is left as it was.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// BundleSource names a bundle: exactly one of OCI and ConfigMapRef.
// +kubebuilder:validation:XValidation:rule="has(self.oci) != has(self.configMapRef)",message="set exactly one of oci and configMapRef"
type BundleSource struct {
	// OCI is an OCI reference, oci://registry/repository:tag or
	// oci://registry/repository@sha256:…; a tag is resolved to a digest and
	// followed when it moves.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	OCI string `json:"oci,omitempty"`

	// ConfigMapRef names a ConfigMap in the same namespace whose
	// "bundle.tar.gz" key holds the bundle as `kubepact pack` writes it, for
	// clusters without a registry.
	// +optional
	ConfigMapRef *LocalObjectReference `json:"configMapRef,omitempty"`
}

// LocalObjectReference names an object in the ServiceContract's namespace.
type LocalObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// TargetReference names a workload in the ServiceContract's namespace.
type TargetReference struct {
	// Kind of the workload.
	// +kubebuilder:validation:Enum=Deployment;StatefulSet;DaemonSet
	// +required
	Kind string `json:"kind"`

	// Name of the workload.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
}

// ServiceContractStatus is what the reconciler observed.
type ServiceContractStatus struct {
	// ObservedGeneration is the generation of the spec last reconciled; -1
	// (the API server's default) until the first reconcile, so that kstatus
	// (kubectl wait, Flux and Argo CD health checks) reads a new object as
	// InProgress rather than Current.
	// +kubebuilder:default=-1
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// ResolvedRef is the bundle reference pinned to its digest
	// (registry/repository[:tag]@sha256:…), or configmap/NAME for a bundle
	// read from a ConfigMap.
	// +optional
	ResolvedRef string `json:"resolvedRef,omitempty"`

	// Digest is the bundle's identity: its OCI manifest digest.
	// +optional
	Digest string `json:"digest,omitempty"`

	// Contract summarizes the last good bundle.
	// +optional
	Contract *ContractSummary `json:"contract,omitempty"`

	// Findings are the first validation findings, errors first (at most 20).
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +optional
	Findings []Finding `json:"findings,omitempty"`

	// FindingsTotal counts all findings, including those left out of
	// Findings.
	// +optional
	FindingsTotal int32 `json:"findingsTotal,omitempty"`

	// ToolSurfaceDigest is the digest of the tool surface (tool names and
	// input and output schemas) the injected sidecar serves from the bundle
	// at Digest in tool mode all, with the arguments the injection webhook
	// writes: the value the sidecar reports as toolSurfaceDigest on
	// /readyz?verbose. It is ToolSurfaces' entry for mode all, kept for
	// the readers written before ToolSurfaces. Empty when the bundle
	// offers no tools to project (see Ready's message).
	// +optional
	ToolSurfaceDigest string `json:"toolSurfaceDigest,omitempty"`

	// ToolSurfaces are the tool surfaces the injected sidecar serves from
	// the bundle at Digest, one per tool mode (kubepact.dev/tool-mode):
	// the value the webhook writes on a Pod of that mode as
	// kubepact.dev/tool-surface, and the one its sidecar reports on
	// /readyz?verbose. Mode auto's digest is that of the mode auto
	// settles to for this bundle. A mode whose tools could not be
	// projected has no entry, and its Pods get no annotation.
	// +kubebuilder:validation:MaxItems=3
	// +listType=map
	// +listMapKey=mode
	// +optional
	ToolSurfaces []ToolSurface `json:"toolSurfaces,omitempty"`

	// Pods says which bundle digest the Pods injected for this contract
	// run, as the webhook pinned them at admission; a digest other than
	// Digest marks Pods left on an older bundle (a moved tag).
	// +optional
	Pods *PodsStatus `json:"pods,omitempty"`

	// LastResolvedAt is when the bundle was last resolved successfully.
	// +optional
	LastResolvedAt *metav1.Time `json:"lastResolvedAt,omitempty"`

	// Conditions: Ready, Reconciling, Stalled, BundleResolved,
	// ContractValid, TargetBound.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ContractSummary is what the bundle says about the service.
type ContractSummary struct {
	// Service is the contract's service name.
	Service string `json:"service,omitempty"`
	// Version is the contract's service version.
	Version string `json:"version,omitempty"`
	// Owner is the contract's owner.
	// +optional
	Owner string `json:"owner,omitempty"`
	// Interfaces are the names of the contract's interfaces.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Interfaces []string `json:"interfaces,omitempty"`
	// Dependencies counts the contract's dependencies.
	// +optional
	Dependencies int32 `json:"dependencies,omitempty"`
	// HTTPPort is the port of the first server URL of the contract's first
	// OpenAPI interface, when that URL names one (http://127.0.0.1:8080):
	// the injected sidecar's upstream port when a Pod does not set
	// kubepact.dev/upstream-port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	HTTPPort int32 `json:"httpPort,omitempty"`
	// HTTPInterface names the interface HTTPPort comes from.
	// +optional
	HTTPInterface string `json:"httpInterface,omitempty"`
	// GRPCInterface names the contract's first grpc interface, if any: an
	// injected sidecar then calls the Pod's gRPC service (kubepact.dev/grpc-port).
	// +optional
	GRPCInterface string `json:"grpcInterface,omitempty"`
}

// PodsStatus counts the injected Pods of a contract by the bundle digest
// their sidecar serves.
type PodsStatus struct {
	// Total counts every injected Pod naming this contract.
	Total int32 `json:"total"`
	// Stale counts the Pods whose digest is not status.digest.
	Stale int32 `json:"stale"`
	// Digests lists the digests the Pods run, the current one first, then
	// by Pod count (at most 8; Total and Stale count the rest too).
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	// +optional
	Digests []DigestPods `json:"digests,omitempty"`
}

// DigestPods is the Pods that run one bundle digest.
type DigestPods struct {
	// Digest is the bundle digest the Pods' sidecars were pinned to.
	Digest string `json:"digest"`
	// Current is true when Digest is status.digest.
	Current bool `json:"current"`
	// ToolSurfaceDigest is the tool surface the webhook recorded for these
	// Pods (the first one seen, when they differ).
	// +optional
	ToolSurfaceDigest string `json:"toolSurfaceDigest,omitempty"`
	// Count counts the Pods.
	Count int32 `json:"count"`
	// Pods names the first Pods, in name order (at most 10).
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	Pods []string `json:"pods,omitempty"`
}

// ToolSurface is the tool surface an injected sidecar serves in one tool
// mode.
type ToolSurface struct {
	// Mode is the sidecar's --tool-mode.
	// +kubebuilder:validation:Enum=all;discover;auto
	// +required
	Mode string `json:"mode"`
	// Digest is the digest of the tool names and input and output
	// schemas, as the sidecar reports it (toolSurfaceDigest).
	// +kubebuilder:validation:Pattern="^sha256:[a-f0-9]{64}$"
	// +kubebuilder:validation:MaxLength=71
	// +required
	Digest string `json:"digest"`
}

// Finding is one validation problem, with Pacto's code.
type Finding struct {
	// Severity is Error or Warning.
	// +kubebuilder:validation:Enum=Error;Warning
	Severity string `json:"severity"`
	// Path points into pacto.yaml (interfaces[0].ref); empty for the whole
	// document.
	// +optional
	Path string `json:"path,omitempty"`
	// Code is Pacto's finding code (SCHEMA_VIOLATION, …).
	Code string `json:"code"`
	// Message says what is wrong.
	Message string `json:"message"`
}

// Finding severities.
const (
	SeverityError   = "Error"
	SeverityWarning = "Warning"
)

// ServiceContract binds a Pacto bundle to the workload that serves it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=svcc,categories=kubepact
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.status.contract.service`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.contract.version`
// +kubebuilder:printcolumn:name="Digest",type=string,JSONPath=`.status.digest`,priority=1
// +kubebuilder:printcolumn:name="Pods",type=integer,JSONPath=`.status.pods.total`,priority=1
// +kubebuilder:printcolumn:name="Stale",type=integer,JSONPath=`.status.pods.stale`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ServiceContract struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ServiceContractSpec `json:"spec,omitempty"`
	// Status is what the reconciler observed; the API server defaults it to
	// {observedGeneration: -1} (see ServiceContractStatus.ObservedGeneration).
	// +kubebuilder:default={}
	Status ServiceContractStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions.
func (in *ServiceContract) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *ServiceContract) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }

// ServiceContractList is a list of ServiceContracts.
//
// +kubebuilder:object:root=true
type ServiceContractList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ServiceContract `json:"items"`
}
