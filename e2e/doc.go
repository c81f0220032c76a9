// Package e2e drives the real rein binary the way a user does: it starts
// `rein serve`, runs the command line against it and speaks raw HTTP to it.
// Run the whole suite with `go test ./e2e/...`: besides this package, the
// audit log (e2e/audit), e-mail, Slack and webhooks (e2e/notify), the web
// console (e2e/console, e2e/decisions), the MCP gateway (e2e/gateway), the
// agents' entry points (e2e/hooks), replicas on PostgreSQL (e2e/replicas),
// the README and the release (e2e/release), the SDKs (e2e/sdk), rein run
// and rein exec (e2e/contained, e2e/profiles, e2e/execstop) are packages
// that go test runs side by side; all share e2e/internal/harness.
package e2e
