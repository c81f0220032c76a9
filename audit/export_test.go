package audit_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// TestOTLPLogsReadByOpenTelemetry renders entries as OTLP/JSON and reads
// them back with the OpenTelemetry collector's own decoder: every record
// keeps its index, kind, time and exact entry bytes.
func TestOTLPLogsReadByOpenTelemetry(t *testing.T) {
	l := newTestLog(t, "rein/dep_export")
	l.add(t, 3, "main")
	out, err := audit.OTLPLogs(l.origin, "1.2.3", l.entries)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(out)
	if err != nil {
		t.Fatalf("the collector cannot read rein's OTLP/JSON: %v", err)
	}
	if logs.LogRecordCount() != 3 {
		t.Fatalf("%d records, want 3", logs.LogRecordCount())
	}
	rl := logs.ResourceLogs().At(0)
	if v, _ := rl.Resource().Attributes().Get("rein.audit.origin"); v.Str() != l.origin {
		t.Errorf("origin attribute %q", v.Str())
	}
	recs := rl.ScopeLogs().At(0).LogRecords()
	for i := range 3 {
		r := recs.At(i)
		if !bytes.Equal([]byte(r.Body().Str()), l.entries[i]) {
			t.Errorf("record %d body is not the entry's bytes", i)
		}
		if v, _ := r.Attributes().Get("rein.audit.index"); v.Int() != int64(i) {
			t.Errorf("record %d index %d", i, v.Int())
		}
		h := tlog.RecordHash([]byte(r.Body().Str()))
		if v, _ := r.Attributes().Get("rein.audit.leaf_hash"); v.Str() != base64.StdEncoding.EncodeToString(h[:]) {
			t.Errorf("record %d leaf hash does not match its body", i)
		}
		if r.EventName() != "rein.audit.check" || r.Timestamp().AsTime().IsZero() || r.SeverityText() != "INFO" {
			t.Errorf("record %d: event %q time %v severity %q", i, r.EventName(), r.Timestamp(), r.SeverityText())
		}
	}
}

// TestOCSFClasses: every kind rein writes has an OCSF class, and events
// carry what a SIEM keys on.
func TestOCSFClasses(t *testing.T) {
	kinds := []string{rein.KindCheck, rein.KindCheckResult, rein.KindApprovalCreated, rein.KindApprovalVote,
		rein.KindApprovalResolved, rein.KindApprovalConsumed, rein.KindQuestionCreated, rein.KindQuestionAnswered,
		rein.KindQuestionResolved, rein.KindPolicyUpdated, rein.KindKeyCreated, rein.KindKeyRevoked,
		rein.KindLockCreated, rein.KindLockRemoved, rein.KindServerStarted, rein.KindSigningKeyRotated,
		rein.KindAgentStep, rein.KindSessionEnded}
	want := map[string][2]int{rein.KindCheck: {6003, 99}, rein.KindKeyRevoked: {3004, 4},
		rein.KindServerStarted: {6002, 3}, rein.KindApprovalCreated: {6003, 1}, rein.KindPolicyUpdated: {3004, 3}}
	for i, kind := range kinds {
		e := &rein.Entry{Tenant: "acme", Kind: kind, Actor: "builder", Subject: "x_1", Data: map[string]any{"decision": "deny"}}
		b, err := e.Encode(int64(i))
		if err != nil {
			t.Fatal(err)
		}
		out, err := audit.OCSFEvent("rein/dep", "1.2.3", b)
		if err != nil {
			t.Fatal(err)
		}
		var ev map[string]any
		if err := json.Unmarshal(out, &ev); err != nil {
			t.Fatal(err)
		}
		class, activity := int(ev["class_uid"].(float64)), int(ev["activity_id"].(float64))
		if activity == 99 && kind != rein.KindCheck {
			t.Errorf("%s has no OCSF activity", kind)
		}
		if w, ok := want[kind]; ok && (w[0] != class || w[1] != activity) {
			t.Errorf("%s: class %d activity %d, want %v", kind, class, activity, w)
		}
		if int(ev["type_uid"].(float64)) != class*100+activity || ev["raw_data"] != string(b) {
			t.Errorf("%s: type_uid or raw_data wrong: %s", kind, out)
		}
		md := ev["metadata"].(map[string]any)
		if md["version"] != "1.3.0" || int(md["sequence"].(float64)) != i || md["uid"] != fmt.Sprintf("rein/dep/%d", i) {
			t.Errorf("%s: metadata %v", kind, md)
		}
		if kind == rein.KindCheck && (ev["status_id"] != 2.0 || ev["status"] != "deny") {
			t.Errorf("a denied check has status %v %v", ev["status_id"], ev["status"])
		}
		// The attributes each class requires (OCSF 1.3.0).
		required := map[int][]string{6003: {"actor", "api", "src_endpoint"}, 3004: {"entity"}, 6002: {"app"}}[class]
		for _, f := range append(required, "activity_id", "category_uid", "class_uid", "metadata", "severity_id", "time", "type_uid") {
			if _, ok := ev[f]; !ok {
				t.Errorf("%s: no %s", kind, f)
			}
		}
		if _, ok := ev["cloud"]; ok {
			t.Errorf("%s: cloud is not rein's to claim", kind)
		}
	}
}
