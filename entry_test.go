package rein

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gowebpki/jcs"
)

// TestEntryEncodingPlacesIndex: splicing the index into the canonical bytes
// gives exactly the canonical form of the whole entry, whatever data holds.
func TestEntryEncodingPlacesIndex(t *testing.T) {
	datas := []any{
		nil,
		map[string]any{"kind": "x", "index": 7},
		map[string]any{"secrets": []any{map[string]any{"arg": "a", "kind": "aws"}}, "s": `,"kind":"evil"`},
		map[string]any{"zz": map[string]any{"kind": map[string]any{"kind": 1}}, "text": "\"index\":0,\"kind\":"},
		"plain",
	}
	for i, d := range datas {
		e := &Entry{TS: time.Date(2026, 11, 21, 10, 0, 0, 123456000, time.UTC), Tenant: "acme", Kind: KindCheck,
			Actor: `a"ctor`, Subject: "chk_1", PolicyVersion: "sha256:00", Data: d}
		for _, index := range []int64{0, 9, 1042, 1 << 40} {
			got, err := e.Encode(index)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(map[string]any{"v": 1, "index": index, "ts": "2026-11-21T10:00:00.123456Z", "tenant": "acme",
				"kind": KindCheck, "actor": `a"ctor`, "subject": "chk_1", "policy_version": "sha256:00", "data": d})
			want, _ := jcs.Transform(raw)
			if string(got) != string(want) {
				t.Errorf("data %d index %d:\n got %s\nwant %s", i, index, got, want)
			}
		}
	}
}
