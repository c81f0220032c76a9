package storesql

import (
	"encoding/json"

	"github.com/reinhq/rein"
)

// EncodeCheck encodes what recording rec writes, before the write
// transaction (outside SQLite's single writer and PostgreSQL's batches,
// where the cost is shared out): its audit entries, its record and its
// review's record (nil without a review).
func EncodeCheck(rec *rein.CheckRecord, entries []*rein.Entry) (encs []*rein.EntryEncoding, body, review []byte, err error) {
	if encs, err = rein.EncodeEntries(entries); err != nil {
		return nil, nil, nil, err
	}
	if body, err = json.Marshal(rec); err != nil {
		return nil, nil, nil, err
	}
	if rec.Review != nil {
		if review, err = json.Marshal(rec.Review); err != nil {
			return nil, nil, nil, err
		}
	}
	return encs, body, review, nil
}
