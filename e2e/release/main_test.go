// Package release tests what a new user meets first, end to end: the
// README's tour, MCP demo and quick start as written, the release build
// (make release) and its version story, the container image's entrypoint
// and the README's MCP configuration, against a real rein. It is a package
// of its own so that go test runs it beside the rest of the suite, each far
// from go test's time limit.
package release

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
