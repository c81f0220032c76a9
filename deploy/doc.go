// Package deploy holds rein's Kubernetes manifests and the test that checks
// them; it is a module of its own so that rein's go.mod does not carry the
// Kubernetes API types.
package deploy
