package audit

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"
)

// The C2SP tlog-witness add-checkpoint request (https://c2sp.org/tlog-witness):
// the size the witness is believed to have cosigned, a consistency proof
// from that size to the checkpoint's, and the signed checkpoint. The I/O
// lives with the callers; these are the bytes on the wire.

// AddCheckpointRequest is the body of a POST to <witness>/add-checkpoint.
func AddCheckpointRequest(oldSize int64, proof []tlog.Hash, signed []byte) []byte {
	var b bytes.Buffer
	b.WriteString("old " + strconv.FormatInt(oldSize, 10) + "\n")
	for _, h := range proof {
		b.WriteString(base64.StdEncoding.EncodeToString(h[:]) + "\n")
	}
	b.WriteString("\n")
	b.Write(signed)
	return b.Bytes()
}

// WitnessSize reads the body of a 409 Conflict answer (text/x.tlog.size):
// the size of the latest checkpoint the witness has cosigned for the log.
func WitnessSize(body []byte) (int64, error) {
	s := string(bytes.TrimSpace(body))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("the witness sent %q where a tree size belongs", s)
	}
	return n, nil
}

// WitnessStatus explains an answer of the add-checkpoint endpoint other
// than 200 and 409, in the words of tlog-witness.
func WitnessStatus(status int) string {
	switch status {
	case 400:
		return "the witness rejected the request as malformed (400)"
	case 403:
		return "the witness does not trust the log's key for this origin (403)"
	case 404:
		return "the witness does not know this log's origin (404)"
	case 422:
		return "the consistency proof does not verify: the checkpoint does not extend the one the witness cosigned (422)"
	case 429:
		return "the witness is overloaded; retry later (429)"
	}
	return fmt.Sprintf("the witness answered %d", status)
}
