// Package gateway tests `rein mcp`, the MCP gateway, end to end: the
// official TypeScript and Go SDK clients and the MCP Inspector (from
// e2e/mcp and e2e/mcp-inspector) through the gateway over stdio and HTTP,
// to the reference filesystem server and a Go SDK server, with approvals,
// elicitation, tasks and rein's faults. It is a package of its own so that
// go test runs it beside the rest of the suite, each far from go test's
// time limit.
package gateway

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
