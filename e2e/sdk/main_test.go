// Package sdk tests rein's SDKs end to end: the TypeScript package on the
// Node.js on PATH and on the oldest release it supports, its types with
// tsc, the Python package, and the README's examples in Go, Python and
// TypeScript, each against a real rein. It is a package of its own so that
// go test runs it beside the rest of the suite (e2e), each far from go
// test's time limit.
package sdk

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
