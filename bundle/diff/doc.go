// Package diff is the semantic diff of two revisions of a Pacto contract:
// every change to the service identity, interfaces (and their OpenAPI
// operations), configurations, policies, dependencies and capabilities,
// each classified BREAKING, POTENTIAL_BREAKING or NON_BREAKING.
//
// It needs no fleet: fleetgraph projects a diff onto a snapshot's
// dependents (impact), and authoring or CI can use it on two bundles
// alone. It imports only bundle and its contract model.
package diff
