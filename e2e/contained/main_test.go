// Package contained tests `rein run` end to end: real attacks inside the
// containment against canaries, the documentation's policy, and real agent
// CLIs contained with their hooks wired to rein. It is a package of its own
// so that go test runs it beside the rest of the suite, each far from go
// test's time limit.
package contained

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
