package controllers

// The live fleet's read path (the fleetgraph/kube feed, the Builder it
// drives, the MCP server answering from its snapshots) runs on every
// replica and is wired by the operator command; only the reconciler here
// is leader-elected. Its permissions are the operator's, generated from
// this package with the rest: the feed reads Pacto's own CRs when their
// CRD is installed.
// +kubebuilder:rbac:groups=pacto.trianalab.io,resources=pactos,verbs=get;list;watch
