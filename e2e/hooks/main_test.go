// Package hooks tests the agents' entry points end to end: Claude Code's
// and Codex's hooks (the CLIs, as the documentation wires them, and the
// real agents from e2e/agents against a model stand-in), the Agent Control
// Standard endpoint, and the conformance of every entry point to the same
// decisions. It is a package of its own so that go test runs it beside the
// rest of the suite, each far from go test's time limit.
package hooks

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
