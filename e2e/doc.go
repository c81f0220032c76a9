// Package e2e drives the real rein binary the way a user does: it starts
// `rein serve`, runs the command line against it and speaks raw HTTP to it.
// Run it with `go test ./e2e/...`: the SDK tests are the package e2e/sdk,
// which go test runs beside this one, and both share e2e/internal/harness.
package e2e
