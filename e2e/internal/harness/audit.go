package harness

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/reinhq/rein/audit"
)

// SealedCheckpoint waits until the latest checkpoint covers at least n
// entries and returns its size.
func SealedCheckpoint(t testing.TB, s *Server, key string, n int64) int64 {
	t.Helper()
	var size int64
	Eventually(t, 10*time.Second, "a checkpoint covers the entries", func() string {
		code, body := HTTPDo(t, "GET", s.URL+"/v1/audit/checkpoint", key, nil, "")
		if code != 200 {
			return fmt.Sprintf("checkpoint: %d %s", code, body)
		}
		c, err := audit.ParseCheckpoint(NoteText(body))
		if err != nil {
			return err.Error()
		}
		if size = c.Size; size < n {
			return fmt.Sprintf("checkpoint at %d, want %d", size, n)
		}
		return ""
	})
	return size
}

// NoteText is the text of a signed note, without its signatures.
func NoteText(signed []byte) string {
	text, _, _ := bytes.Cut(signed, []byte("\n\n"))
	return string(text) + "\n"
}

// AuditSize is the number of entries in the audit log.
func AuditSize(t *testing.T, s *Server, key string) int64 {
	t.Helper()
	return int64(len(AllEntries(t, s, key)))
}

// AllEntries reads the whole log, one line per entry.
func AllEntries(t testing.TB, s *Server, key string) [][]byte {
	t.Helper()
	var out [][]byte
	for {
		_, body := HTTPDo(t, "GET", fmt.Sprintf("%s/v1/audit/entries?start=%d&limit=10000", s.URL, len(out)), key, nil, "")
		page := bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
		if len(body) == 0 {
			page = nil
		}
		out = append(out, page...)
		if len(page) < 10000 {
			return out
		}
	}
}
