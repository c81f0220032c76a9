// Package decisions tests, in Chromium (playwright-core from e2e/browser),
// what an approver needs to decide at night on a phone: the console's
// approval pages for a whole script and a transfer two rules ask for,
// press-and-hold, narrow viewports, offline and ended sessions, badges and
// accessibility, against a real rein. This one long browser test is a
// package of its own so that go test runs it beside the rest of the
// console's tests (e2e/console), each far from go test's time limit.
package decisions

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
