package e2e

import (
	"os"
	"testing"

	"github.com/reinhq/rein/e2e/internal/harness"
)

func TestMain(m *testing.M) { os.Exit(harness.Main(m, nil)) }
