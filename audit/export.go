package audit

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// ExportSchema names the version of the OTLP and OCSF renderings of audit
// entries below; a change to their shape gets a new version.
const ExportSchema = "rein.audit.export/v1"

// exported is the part of an entry the renderings read.
type exported struct {
	Index         int64           `json:"index"`
	TS            string          `json:"ts"`
	Tenant        string          `json:"tenant"`
	Kind          string          `json:"kind"`
	Actor         string          `json:"actor"`
	Subject       string          `json:"subject"`
	PolicyVersion string          `json:"policy_version"`
	Data          json.RawMessage `json:"data"`
	time          time.Time
	leaf          tlog.Hash
	raw           []byte
}

func parseExported(entry []byte) (*exported, error) {
	var e exported
	if err := json.Unmarshal(entry, &e); err != nil {
		return nil, fmt.Errorf("audit entry: %v", err)
	}
	t, err := time.Parse(time.RFC3339Nano, e.TS)
	if err != nil {
		return nil, fmt.Errorf("audit entry %d: bad ts %q", e.Index, e.TS)
	}
	e.time, e.leaf, e.raw = t, tlog.RecordHash(entry), entry
	return &e, nil
}

// decision is the data.decision of a check entry, if any.
func (e *exported) decision() string {
	var d struct {
		Decision string `json:"decision"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return d.Decision
}

// OTLP: OpenTelemetry logs in the OTLP/JSON encoding (an
// ExportLogsServiceRequest, opentelemetry-proto logs/v1), one log record per
// entry. The body is the entry's exact canonical bytes, so that a record
// still proves itself: its leaf hash (attribute rein.audit.leaf_hash) is
// the RFC 6962 hash of the body.

type otlpValue struct {
	StringValue *string `json:"stringValue,omitempty"`
	IntValue    *string `json:"intValue,omitempty"`
}

type otlpKV struct {
	Key   string    `json:"key"`
	Value otlpValue `json:"value"`
}

func otlpString(k, v string) otlpKV { return otlpKV{Key: k, Value: otlpValue{StringValue: &v}} }
func otlpInt(k string, v int64) otlpKV {
	s := strconv.FormatInt(v, 10)
	return otlpKV{Key: k, Value: otlpValue{IntValue: &s}}
}

type otlpRecord struct {
	TimeUnixNano         string    `json:"timeUnixNano"`
	ObservedTimeUnixNano string    `json:"observedTimeUnixNano"`
	SeverityNumber       int       `json:"severityNumber"`
	SeverityText         string    `json:"severityText"`
	EventName            string    `json:"eventName"`
	Body                 otlpValue `json:"body"`
	Attributes           []otlpKV  `json:"attributes"`
}

// OTLPLogs renders entries (canonical bytes) of the log origin as one
// OTLP/JSON ExportLogsServiceRequest.
func OTLPLogs(origin, version string, entries [][]byte) ([]byte, error) {
	records := make([]otlpRecord, 0, len(entries))
	for _, b := range entries {
		e, err := parseExported(b)
		if err != nil {
			return nil, err
		}
		// Severity numbers of the OpenTelemetry logs data model: 9 INFO, 13 WARN.
		sev, sevText := 9, "INFO"
		if e.decision() == "deny" {
			sev, sevText = 13, "WARN"
		}
		ts := strconv.FormatInt(e.time.UnixNano(), 10)
		body := string(b)
		records = append(records, otlpRecord{TimeUnixNano: ts, ObservedTimeUnixNano: ts,
			SeverityNumber: sev, SeverityText: sevText, EventName: "rein.audit." + e.Kind,
			Body: otlpValue{StringValue: &body},
			Attributes: []otlpKV{
				otlpInt("rein.audit.index", e.Index),
				otlpString("rein.audit.kind", e.Kind),
				otlpString("rein.audit.leaf_hash", base64.StdEncoding.EncodeToString(e.leaf[:])),
				otlpString("rein.tenant", e.Tenant),
				otlpString("rein.actor", e.Actor),
				otlpString("rein.subject", e.Subject),
				otlpString("rein.policy_version", e.PolicyVersion),
			}})
	}
	req := map[string]any{"resourceLogs": []any{map[string]any{
		"resource": map[string]any{"attributes": []otlpKV{
			otlpString("service.name", "rein"),
			otlpString("service.version", version),
			otlpString("rein.audit.origin", origin),
		}},
		"schemaUrl": "",
		"scopeLogs": []any{map[string]any{
			"scope":      map[string]any{"name": "rein.audit", "version": ExportSchema},
			"logRecords": records,
		}},
	}}}
	return json.Marshal(req)
}

// OCSF: one Open Cybersecurity Schema Framework event per entry (schema
// 1.3.0). The class of each kind is in ocsfClasses; the entry itself is
// kept in raw_data (exact bytes) and its fields under unmapped.rein.

// ocsfVersion is the OCSF schema version the events follow.
const ocsfVersion = "1.3.0"

// ocsfClass is where an entry kind lands in OCSF.
type ocsfClass struct {
	ClassUID     int
	ClassName    string
	CategoryUID  int
	CategoryName string
	ActivityID   int
	ActivityName string
}

// Class, category and activity ids from the OCSF schema 1.3.0
// (https://schema.ocsf.io/1.3.0/): API Activity (6003) and Application
// Lifecycle (6002) in Application Activity (6); Entity Management (3004)
// in Identity & Access Management (3). Activity ids 1 Create, 3 Update,
// 4 Delete are common to API Activity and Entity Management, 99 is Other
// in every class, and Application Lifecycle 3 is Start. Required
// attributes: API Activity actor, api, src_endpoint; Entity Management
// entity; Application Lifecycle app.
var ocsfClasses = map[string]ocsfClass{
	"check":               {6003, "API Activity", 6, "Application Activity", 99, "Check"},
	"check.result":        {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"approval.created":    {6003, "API Activity", 6, "Application Activity", 1, "Create"},
	"approval.vote":       {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"approval.resolved":   {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"approval.consumed":   {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"question.created":    {6003, "API Activity", 6, "Application Activity", 1, "Create"},
	"question.answered":   {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"question.resolved":   {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"agent.step":          {6003, "API Activity", 6, "Application Activity", 1, "Create"},
	"session.ended":       {6003, "API Activity", 6, "Application Activity", 3, "Update"},
	"policy.updated":      {3004, "Entity Management", 3, "Identity & Access Management", 3, "Update"},
	"key.created":         {3004, "Entity Management", 3, "Identity & Access Management", 1, "Create"},
	"key.revoked":         {3004, "Entity Management", 3, "Identity & Access Management", 4, "Delete"},
	"lock.created":        {3004, "Entity Management", 3, "Identity & Access Management", 1, "Create"},
	"lock.removed":        {3004, "Entity Management", 3, "Identity & Access Management", 4, "Delete"},
	"signing_key.rotated": {3004, "Entity Management", 3, "Identity & Access Management", 3, "Update"},
	"server.started":      {6002, "Application Lifecycle", 6, "Application Activity", 3, "Start"},
}

// otherKind is the class of a kind this build does not know (a newer log).
var otherKind = ocsfClass{6003, "API Activity", 6, "Application Activity", 99, "Other"}

// ocsfStatuses maps a check's decision to the event's status_id (base
// event, OCSF 1.3.0: 1 Success, 2 Failure, 99 Other with the decision as
// its status). API Activity has no disposition in 1.3.0 (the
// security_control profile does not apply to it), so the status carries
// the outcome: the agent's call went ahead, was refused, or neither yet.
var ocsfStatuses = map[string]int{"allow": 1, "deny": 2}

// ocsfEntities is the entity type Entity Management events name.
var ocsfEntities = map[string]string{"policy.updated": "policy", "key.created": "api_key", "key.revoked": "api_key",
	"lock.created": "lock", "lock.removed": "lock", "signing_key.rotated": "audit_signing_key"}

// OCSFEvent renders one entry (canonical bytes) of the log origin as an
// OCSF event.
func OCSFEvent(origin, version string, entry []byte) ([]byte, error) {
	e, err := parseExported(entry)
	if err != nil {
		return nil, err
	}
	c, ok := ocsfClasses[e.Kind]
	if !ok {
		c = otherKind
	}
	var data any
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &data)
	}
	ev := map[string]any{
		"class_uid": c.ClassUID, "class_name": c.ClassName,
		"category_uid": c.CategoryUID, "category_name": c.CategoryName,
		"activity_id": c.ActivityID, "activity_name": c.ActivityName,
		"type_uid": c.ClassUID*100 + c.ActivityID, "type_name": c.ClassName + ": " + c.ActivityName,
		"time": e.time.UnixMilli(), "time_dt": e.time.UTC().Format(time.RFC3339Nano),
		"severity_id": 1, "severity": "Informational",
		"status_id": 1, "status": "Success",
		"message": e.Kind + " " + e.Subject,
		"metadata": map[string]any{
			"version":  ocsfVersion,
			"uid":      origin + "/" + strconv.FormatInt(e.Index, 10),
			"log_name": origin, "sequence": e.Index,
			"tenant_uid": e.Tenant,
			"product":    map[string]any{"name": "rein", "vendor_name": "rein", "version": version},
			"labels":     []string{ExportSchema},
		},
		"actor":    map[string]any{"user": map[string]any{"name": e.Actor, "uid": e.Actor}},
		"raw_data": string(entry),
		"unmapped": map[string]any{"rein": map[string]any{"index": e.Index, "kind": e.Kind, "subject": e.Subject,
			"tenant": e.Tenant, "policy_version": e.PolicyVersion, "data": data,
			"leaf_hash": base64.StdEncoding.EncodeToString(e.leaf[:])}},
	}
	switch c.ClassUID {
	case 6003:
		ev["api"] = map[string]any{"operation": e.Kind, "service": map[string]any{"name": "rein"}}
		ev["resources"] = []any{map[string]any{"uid": e.Subject, "type": e.Kind}}
		ev["src_endpoint"] = map[string]any{"name": e.Actor}
		if e.Kind == "check" {
			d := e.decision()
			id, ok := ocsfStatuses[d]
			if !ok {
				id = 99
			}
			ev["status_id"], ev["status"] = id, d
			var r struct {
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(e.Data, &r)
			ev["status_detail"] = r.Reason
		}
	case 3004:
		ev["entity"] = map[string]any{"uid": e.Subject, "type": ocsfEntities[e.Kind]}
	case 6002:
		ev["app"] = map[string]any{"name": "rein", "vendor_name": "rein", "version": version}
	}
	return json.Marshal(ev)
}
