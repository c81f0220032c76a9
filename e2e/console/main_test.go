// Package console tests rein's web console end to end in Chromium
// (playwright-core from e2e/browser): the pages, approvals and decisions,
// reviews, policy revisions, push notifications, step-up and single sign-on,
// against a real rein. It is a package of its own so that go test runs it
// beside the rest of the suite, each far from go test's time limit.
package console

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
