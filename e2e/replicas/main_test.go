// Package replicas tests rein serve's replicas sharing PostgreSQL end to
// end: approvals, events and sessions across replicas, and faults (replicas
// killed under load, PostgreSQL restarted) that must lose no acknowledged
// decision. It is a package of its own so that go test runs it beside the
// rest of the suite, each far from go test's time limit.
package replicas

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
