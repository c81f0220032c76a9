package rein

import (
	"encoding/json"
	"testing"
)

func TestArgChanges(t *testing.T) {
	for _, tc := range []struct {
		name, from, to string
		want           string
	}{
		{"same", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, `null`},
		{"changed", `{"amount":50,"to":"acct-a"}`, `{"amount":50,"to":"acct-mallory"}`, `[{"path":"to","from":"acct-a","to":"acct-mallory"}]`},
		{"added and removed", `{"a":1}`, `{"b":2}`, `[{"path":"a","from":1},{"path":"b","to":2}]`},
		{"nested", `{"h":{"x":"1","y":"2"}}`, `{"h":{"x":"1","y":"3"}}`, `[{"path":"h.y","from":"2","to":"3"}]`},
		{"list length", `{"l":[1]}`, `{"l":[1,2]}`, `[{"path":"l","from":[1],"to":[1,2]}]`},
		{"list item", `{"l":[1,{"k":true}]}`, `{"l":[1,{"k":false}]}`, `[{"path":"l.1.k","from":true,"to":false}]`},
		{"type change", `{"a":"1"}`, `{"a":1}`, `[{"path":"a","from":"1","to":1}]`},
	} {
		got, _ := json.Marshal(ArgChanges(json.RawMessage(tc.from), json.RawMessage(tc.to)))
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestApprovalRevisionOfOldRecord(t *testing.T) {
	var a Approval
	old := `{"id":"apr_1","args":{"to":"a"},"approved_args":{"to":"b"},"votes":[{"by":"dave","vote":"edit","args":{"to":"b"}},{"by":"x","vote":"edit","args":{"to":"b"}}]}`
	if err := json.Unmarshal([]byte(old), &a); err != nil {
		t.Fatal(err)
	}
	a.Upgrade()
	if a.Revision != 3 || a.ArgsHash != ArgsHash(json.RawMessage(`{"to":"b"}`)) || len(a.Changes) != 1 || a.Changes[0].Path != "to" {
		t.Fatalf("revision %d, hash %s, changes %+v", a.Revision, a.ArgsHash, a.Changes)
	}
	var fresh Approval
	err := json.Unmarshal([]byte(`{"id":"apr_2","args":{"to":"a"},"revision":1}`), &fresh)
	fresh.Upgrade()
	if err != nil || fresh.Revision != 1 || fresh.Changes != nil {
		t.Fatalf("fresh: %+v %v", fresh, err)
	}
}

// TestCurrentArgsOfAnApprovalReadBack: an approval read back from JSON
// (an event, an API answer) says "approved_args": null when nobody edited.
func TestCurrentArgsOfAnApprovalReadBack(t *testing.T) {
	var a Approval
	if err := json.Unmarshal([]byte(`{"args":{"to":"a"},"approved_args":null}`), &a); err != nil {
		t.Fatal(err)
	}
	a.Upgrade()
	if string(a.CurrentArgs()) != `{"to":"a"}` || a.Changes != nil || a.ArgsHash != ArgsHash(json.RawMessage(`{"to":"a"}`)) {
		t.Fatalf("current %s, changes %v, hash %s", a.CurrentArgs(), a.Changes, a.ArgsHash)
	}
}
