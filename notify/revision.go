package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
)

// Reviser is a channel that tells approvers again when an approval's action
// is edited: the edit made a new revision, the approvals of the one before
// no longer count, and every eligible approver must see what changed before
// voting on it (e-mail: a new message; Slack: the message rewritten with new
// buttons; Web Push: a new notification). A channel that is not a Reviser
// gets Update.
type Reviser interface {
	Revise(ctx context.Context, a *rein.Approval, targets []string) error
}

// Args are the arguments of a's current revision, as they will run: the
// last edit's, else the agent's request. It is a.CurrentArgs, except that
// an approval read back from JSON (an event, an API answer) has
// "approved_args": null when never edited, which is no edit.
func Args(a *rein.Approval) json.RawMessage {
	if len(a.ApprovedArgs) > 0 && string(a.ApprovedArgs) != "null" {
		return a.ApprovedArgs
	}
	return a.Args
}

// Edited reports whether a's latest change is an edit of its action: it is
// pending and its newest vote is the edit that made its current revision.
func Edited(a *rein.Approval) bool {
	if a.Status != rein.StatusPending || a.Revision < 2 || len(a.Votes) == 0 {
		return false
	}
	v := a.Votes[len(a.Votes)-1]
	return v.Vote == approval.Edit && v.Revision == a.Revision
}

// Editor is who made the approval's current revision by an edit ("" for
// the agent's request).
func Editor(a *rein.Approval) string {
	for i := len(a.Votes) - 1; i >= 0; i-- {
		if v := a.Votes[i]; v.Vote == approval.Edit {
			if v.Revision == 0 || v.Revision == a.Revision {
				return v.By
			}
			return ""
		}
	}
	return ""
}

// VotedOnCurrent reports whether the key has voted on the approval's current
// revision (since its last edit, the edit included): who voted on an earlier
// revision may vote again, and is told again.
func VotedOnCurrent(a *rein.Approval, k *rein.Key) bool {
	start := 0
	for i, v := range a.Votes {
		if v.Vote == approval.Edit {
			start = i
		}
	}
	for _, v := range a.Votes[start:] {
		if v.ByKey == k.ID {
			return true
		}
	}
	return false
}

// changeMax bounds each value of a change as a line shows it; the whole
// value is in the arguments shown with it.
const changeMax = 200

// ChangeLines says what the approval's current revision changed from the
// agent's request, one line per argument, in path order:
//
//	to: "acct-a" → "acct-mallory"
//	note: added "urgent"
//	cc: removed "bob"
//
// Values are JSON, their hidden characters written out (Visible). An
// approval never edited has none; one edited back to the request has none
// either (its revision still says it was edited).
func ChangeLines(a *rein.Approval) []string {
	if a.Revision < 2 {
		return nil
	}
	out := make([]string, 0, len(a.Changes))
	for _, c := range a.Changes {
		path := c.Path
		if path == "" {
			path = "(arguments)"
		}
		path = Visible(path)
		switch {
		case len(c.From) == 0:
			out = append(out, fmt.Sprintf("%s: added %s", path, changeValue(c.To)))
		case len(c.To) == 0:
			out = append(out, fmt.Sprintf("%s: removed %s", path, changeValue(c.From)))
		default:
			out = append(out, fmt.Sprintf("%s: %s → %s", path, changeValue(c.From), changeValue(c.To)))
		}
	}
	return out
}

func changeValue(raw []byte) string {
	s := Visible(string(raw))
	if len(s) <= changeMax {
		return s
	}
	n := changeMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
