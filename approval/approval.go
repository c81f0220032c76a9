// Package approval is the approval state machine: who may vote, what a vote
// does, when an approval resolves, expires, is consumed, cancelled or
// invalidated. It is pure: an approval and a clock in, the changed approval
// and the transition out. Storage serialises the calls (one transaction per
// change), so two votes or two consumers never see the same state.
//
//	pending  -> approved | rejected | expired | cancelled | invalidated
//	approved -> consumed | expired
//
// Every other state is terminal and never changes.
package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reinhq/rein"
)

// Vote kinds.
const (
	Approve = "approve"
	Reject  = "reject"
	Edit    = "edit"
)

// Causes recorded when an approval leaves pending or approved.
const (
	CauseQuorum        = "quorum"         // enough approvals
	CauseRejected      = "rejected"       // enough rejections
	CauseTimeout       = "timeout"        // nobody decided before expires_at
	CauseGrantTimeout  = "grant_timeout"  // approved, but not used before grant_expires_at
	CauseCancelled     = "cancelled"      // the asking agent or an admin withdrew it
	CausePolicyChanged = "policy_changed" // the new policy denies the action
	CauseLocked        = "locked"         // a lock matches the action
)

// Errors of the state machine. The HTTP layer maps ErrNotPending and
// ErrVoted to 409, ErrSelfVote and ErrNotApprover to 403, ErrBadVote to 400.
var (
	ErrNotPending  = errors.New("the approval is no longer pending")
	ErrSelfVote    = errors.New("the key that asked cannot vote on its own request")
	ErrNotApprover = errors.New("the voter matches none of the approval's approvers")
	ErrVoted       = errors.New("this voter has already voted")
	ErrBadVote     = errors.New(`vote must be "approve", "reject" or "edit", and only "edit" carries args`)
	ErrNoGrant     = errors.New("the approval has no grant to use")
)

// Voter is who casts a vote: a key with its name, roles and groups.
type Voter struct {
	KeyID  string
	Name   string
	Roles  []rein.Role
	Groups []string
	// Client marks the user of an MCP client, voting through rein's MCP
	// gateway (integrations.md). It matches the selector "client" and no
	// other.
	Client bool
}

// ClientKeyPrefix marks a client user's vote: its ByKey is the prefix and
// the gateway key's id, so that it is never the asking key's own vote and
// one client user votes once.
const ClientKeyPrefix = "client:"

// ClientVoter is the user of the MCP client behind gateway key k.
func ClientVoter(k *rein.Key) Voter {
	return Voter{KeyID: ClientKeyPrefix + k.ID, Name: "client", Client: true}
}

// AsksClient reports whether the approval names the MCP client's user
// ("client") among its approvers.
func AsksClient(a *rein.Approval) bool {
	for _, set := range sets(a) {
		if slices.Contains(set, "client") {
			return true
		}
	}
	return false
}

// VoterOf is the voter behind a key.
func VoterOf(k *rein.Key) Voter {
	return Voter{KeyID: k.ID, Name: k.Name, Roles: k.Roles, Groups: k.Groups}
}

// Matches reports whether the voter is one the selector names:
// group:<g> (the key is in group g), user:<name> (the key's name),
// role:<r> (the key holds role r). "client" is the MCP client's user, whom no
// key is: it matches only a client voter, and a client voter matches nothing else.
func Matches(selector string, v Voter) bool {
	if selector == "client" || v.Client {
		return selector == "client" && v.Client
	}
	kind, name, ok := strings.Cut(selector, ":")
	if !ok || name == "" {
		return false
	}
	switch kind {
	case "group":
		return slices.Contains(v.Groups, name)
	case "user":
		return v.Name == name
	case "role":
		return slices.Contains(v.Roles, rein.Role(name))
	}
	return false
}

// sets are the approver sets that must each be satisfied: the combined sets
// when several rules asked, else the one list of approvers.
func sets(a *rein.Approval) [][]string {
	if len(a.ApproverSets) > 0 {
		return a.ApproverSets
	}
	return [][]string{a.Approvers}
}

// eligible reports whether the voter matches a selector of any set.
func eligible(a *rein.Approval, v Voter) bool {
	for _, set := range sets(a) {
		for _, s := range set {
			if Matches(s, v) {
				return true
			}
		}
	}
	return false
}

// CanVote says whether v may vote on a now, without changing it.
func CanVote(a *rein.Approval, v Voter, now time.Time) error {
	if a.Status != rein.StatusPending || !now.Before(a.ExpiresAt) {
		return ErrNotPending
	}
	if v.KeyID != "" && v.KeyID == a.AgentKeyID {
		return ErrSelfVote
	}
	if !eligible(a, v) {
		return fmt.Errorf("%w (%s)", ErrNotApprover, strings.Join(a.Approvers, ", "))
	}
	for _, x := range a.Votes {
		if x.ByKey == v.KeyID {
			return ErrVoted
		}
	}
	return nil
}

// Transition is what a change did: the status the approval left and the one
// it entered, and why. Zero when the approval stayed where it was.
type Transition struct {
	From, To string
	Cause    string
}

// Changed reports whether the approval changed state.
func (t Transition) Changed() bool { return t.To != "" && t.To != t.From }

// Vote records v's vote at now and resolves the approval when the vote
// completes a quorum. An edit carries the edited arguments (which the caller
// has already had policy check): it counts as an approval of the edited
// action, and approvals cast before it no longer count, since their voters
// approved something else.
func Vote(a *rein.Approval, v Voter, kind, message string, args json.RawMessage, now time.Time) (Transition, error) {
	if (kind == Edit) != (len(args) > 0) || (kind != Approve && kind != Reject && kind != Edit) {
		return Transition{}, ErrBadVote
	}
	if err := CanVote(a, v, now); err != nil {
		return Transition{}, err
	}
	a.Votes = append(a.Votes, rein.Vote{By: v.Name, ByKey: v.KeyID, Roles: v.Roles, Groups: v.Groups,
		Vote: kind, Message: message, Args: args, At: now})
	if kind == Edit {
		a.ApprovedArgs = args
	}
	t := Transition{From: a.Status}
	switch {
	case rejections(a) >= max(a.RejectQuorum, 1):
		resolve(a, rein.StatusRejected, now)
		t.To, t.Cause = rein.StatusRejected, CauseRejected
	case satisfied(a):
		resolve(a, rein.StatusApproved, now)
		grant := now.Add(a.GrantTTL)
		a.GrantExpiresAt = &grant
		t.To, t.Cause = rein.StatusApproved, CauseQuorum
	}
	return t, nil
}

func rejections(a *rein.Approval) int {
	n := 0
	for _, x := range a.Votes {
		if x.Vote == Reject {
			n++
		}
	}
	return n
}

// satisfied: quorum approvals from different voters, and every approver set
// has at least one approving voter who matches it.
func satisfied(a *rein.Approval) bool {
	votes := a.Counting()
	if len(votes) < max(a.Quorum, 1) {
		return false
	}
	for _, set := range sets(a) {
		ok := false
		for _, x := range votes {
			v := Voter{Name: x.By, Roles: x.Roles, Groups: x.Groups, Client: strings.HasPrefix(x.ByKey, ClientKeyPrefix)}
			for _, s := range set {
				ok = ok || Matches(s, v)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

func resolve(a *rein.Approval, status string, now time.Time) {
	a.Status = status
	at := now
	a.ResolvedAt = &at
}

// Expire moves an approval whose time ran out to expired: a pending one past
// expires_at (cause timeout, never a rejection), an approved one whose grant
// was not used before grant_expires_at (cause grant_timeout).
func Expire(a *rein.Approval, now time.Time) Transition {
	t := Transition{From: a.Status}
	switch {
	case a.Status == rein.StatusPending && !now.Before(a.ExpiresAt):
		resolve(a, rein.StatusExpired, now)
		t.To, t.Cause = rein.StatusExpired, CauseTimeout
	case a.Status == rein.StatusApproved && a.GrantExpiresAt != nil && !now.Before(*a.GrantExpiresAt):
		a.Status = rein.StatusExpired
		t.To, t.Cause = rein.StatusExpired, CauseGrantTimeout
	}
	return t
}

// Consume uses the grant of an approved approval: the one allow it yields.
// Past its grant TTL the approval expires instead and ErrNoGrant says so.
func Consume(a *rein.Approval, now time.Time) (Transition, error) {
	if t := Expire(a, now); t.Changed() {
		return t, ErrNoGrant
	}
	if a.Status != rein.StatusApproved {
		return Transition{}, ErrNoGrant
	}
	a.Status = rein.StatusConsumed
	at := now
	a.ConsumedAt = &at
	return Transition{From: rein.StatusApproved, To: rein.StatusConsumed, Cause: "used"}, nil
}

// Withdraw ends a pending approval early: cancelled (the asking agent or an
// admin) or invalidated (policy changed, a lock). An approved, unused grant
// can also be invalidated. Terminal approvals are left alone.
func Withdraw(a *rein.Approval, status, cause string, now time.Time) Transition {
	t := Transition{From: a.Status}
	switch {
	case a.Status == rein.StatusPending:
		resolve(a, status, now)
	case a.Status == rein.StatusApproved && status == rein.StatusInvalidated:
		a.Status = status
	default:
		return t
	}
	t.To, t.Cause = status, cause
	return t
}

// Terminal reports whether an approval can no longer change.
func Terminal(status string) bool {
	return status != rein.StatusPending && status != rein.StatusApproved
}
