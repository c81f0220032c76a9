// Package audit tests rein's audit log end to end: bundles exported and
// verified offline (and failing once tampered with), a crash in the middle
// of writing, the database tampered with, key rotation, receipts and
// witnesses, proofs checked by a second implementation and traces checked
// from the bundle alone, against a real rein. It is a package of its own so
// that go test runs it beside the rest of the suite, each far from go
// test's time limit.
package audit

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
