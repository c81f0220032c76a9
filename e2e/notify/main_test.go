// Package notify tests how rein reaches people and systems end to end:
// e-mail through a real SMTP server (Mailpit) with approval links, Slack's
// Web API and buttons, webhooks, edits of an approval reaching every
// channel, and secrets that never leave in clear through any of them,
// against a real rein. It is a package of its own so that go test runs it
// beside the rest of the suite, each far from go test's time limit.
package notify

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
