// Package chart tests the syncd Helm chart in syncd/: it renders the
// chart with Helm's Go SDK, decodes every manifest strictly into the
// Kubernetes API types, runs Helm's linter, and checks each rendered
// syncd.yaml with syncd's own configuration parser. It is a Go module of
// its own so that the daemon's go.mod does not take on Kubernetes'
// dependencies.
package chart
