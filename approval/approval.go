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
	CauseRevoked       = "revoked"        // an approver or admin revoked an unused grant
	CauseUsed          = "used"           // the grant allowed a check
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
	ErrStepUp      = errors.New("this approval needs step-up: an approving vote counts only when confirmed with a passkey")
	// ErrStaleRevision: an approving or editing vote names a revision other
	// than the current one; its voter saw another version of the action.
	ErrStaleRevision = errors.New("the action was edited since this version was shown")
	// ErrNoRevision: an approving or editing vote names no revision on an
	// approval that has been edited, so nothing says which version it is for.
	ErrNoRevision = errors.New("the action has been edited: a vote must name the revision its voter saw")
)

// Ballot is what a voter casts: the vote, its message, an edit's arguments,
// the grant scope an approving voter chooses ("" is once) and the revision
// of the action the voter was shown (0: not said, accepted only while the
// action has never been edited).
type Ballot struct {
	Kind     string
	Message  string
	Args     json.RawMessage
	Grant    string
	Revision int
}

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
	// OnBehalfOf is the delegator a delegate votes for: Roles and Groups
	// are then the delegator's, and the vote counts as the delegator's.
	OnBehalfOf string
	// SteppedUp: the voter confirmed this vote with a passkey just now.
	SteppedUp bool
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
		if v.OnBehalfOf != "" {
			return v.OnBehalfOf == name
		}
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

// setsAt are the approver sets at time at: each set also accepts the
// approvers of every escalation due by then (approval: escalate).
func setsAt(a *rein.Approval, at time.Time) [][]string {
	base := sets(a)
	var more []string
	for _, e := range a.Escalations {
		if !at.Before(a.CreatedAt.Add(e.After)) {
			more = append(more, e.Approvers...)
		}
	}
	if len(more) == 0 {
		return base
	}
	out := make([][]string, len(base))
	for i, set := range base {
		out[i] = append(slices.Clone(set), more...)
	}
	return out
}

// Escalation returns how many of a's escalations are due at now.
func Escalation(a *rein.Approval, now time.Time) int {
	n := 0
	for _, e := range a.Escalations {
		if !now.Before(a.CreatedAt.Add(e.After)) {
			n++
		}
	}
	return n
}

// Names reports whether the approval names the voter among its approvers.
func Names(a *rein.Approval, v Voter) bool { return eligible(a, v, time.Now()) }

// eligible reports whether the voter matches a selector of any set.
func eligible(a *rein.Approval, v Voter, now time.Time) bool {
	for _, set := range setsAt(a, now) {
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
	if v.KeyID != "" && v.KeyID == a.AgentKeyID || !v.Client && v.Name != "" && v.Name == AgentIdentity(a.Agent) ||
		v.OnBehalfOf != "" && v.OnBehalfOf == AgentIdentity(a.Agent) {
		return ErrSelfVote
	}
	if !eligible(a, v, now) {
		return fmt.Errorf("%w (%s)", ErrNotApprover, strings.Join(a.Approvers, ", "))
	}
	// One person, one vote: neither the caster nor the person a delegate
	// votes for may already have voted on these arguments, whether in their
	// own name, as a delegate or through one (a delegate of two people
	// still votes once).
	mine := v.persons()
	for _, x := range sinceEdit(a) {
		for _, p := range persons(x) {
			if slices.Contains(mine, p) {
				return ErrVoted
			}
		}
	}
	return nil
}

// AgentIdentity is the key name behind an agent name: "bot" for "bot" and
// for its sub-agents "bot/n1". Sub-agent names are the caller's choice; the
// key name is who authenticated.
func AgentIdentity(agent string) string {
	name, _, _ := strings.Cut(agent, "/")
	return name
}

// persons are the people a vote involves: the one who cast it and, for a
// delegate's vote, the delegator too. A person keeps their identity when
// their key is revoked and re-issued under the same name; an MCP client's
// user is the gateway key they vote through. No person takes part in two
// votes that count together.
func (v Voter) persons() []string {
	if v.Client {
		return []string{v.KeyID}
	}
	if v.OnBehalfOf != "" {
		return []string{"name:" + v.Name, "name:" + v.OnBehalfOf}
	}
	return []string{"name:" + v.Name}
}

func persons(x rein.Vote) []string {
	if strings.HasPrefix(x.ByKey, ClientKeyPrefix) {
		return []string{x.ByKey}
	}
	if x.OnBehalfOf != "" {
		return []string{"name:" + x.By, "name:" + x.OnBehalfOf}
	}
	return []string{"name:" + x.By}
}

// distinct keeps, in order, the votes whose people took part in no earlier
// vote kept: what a quorum counts.
func distinct(votes []rein.Vote) []rein.Vote {
	var out []rein.Vote
	seen := map[string]bool{}
	for _, x := range votes {
		ps := persons(x)
		if slices.ContainsFunc(ps, func(p string) bool { return seen[p] }) {
			continue
		}
		for _, p := range ps {
			seen[p] = true
		}
		out = append(out, x)
	}
	return out
}

// sinceEdit are the votes cast on the approval's current arguments: those
// from the last edit on (all of them when nobody edited).
func sinceEdit(a *rein.Approval) []rein.Vote {
	start := 0
	for i, x := range a.Votes {
		if x.Vote == Edit {
			start = i
		}
	}
	return a.Votes[start:]
}

// Require adds the approvals another decision asks for to a's: every
// approver set of both, and the larger quorum. An edit is a new decision, so
// the edited action needs what policy asks for it as well as what it asked
// for the original.
func Require(a *rein.Approval, more [][]string, quorum int) {
	merged := slices.Clone(sets(a))
	for _, set := range more {
		if len(set) > 0 && !slices.ContainsFunc(merged, func(m []string) bool { return slices.Equal(m, set) }) {
			merged = append(merged, set)
		}
	}
	a.ApproverSets = merged
	for _, set := range merged {
		for _, s := range set {
			if !slices.Contains(a.Approvers, s) {
				a.Approvers = append(a.Approvers, s)
			}
		}
	}
	a.Quorum = max(a.Quorum, quorum)
}

// Meets reports whether the approving votes of a (since its last edit)
// satisfy the approver sets and quorum given: a grant is used only while it
// would still be granted under the policy in force.
func Meets(a *rein.Approval, need [][]string, quorum int) bool {
	b := *a
	b.ApproverSets, b.Quorum = need, quorum
	at := time.Now()
	if a.ResolvedAt != nil {
		at = *a.ResolvedAt // the votes as they were judged, escalations included
	}
	return satisfied(&b, at)
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
	return Cast(a, v, Ballot{Kind: kind, Message: message, Args: args}, now)
}

// VoteGrant is Vote with the grant scope the voter chooses for an approving
// vote ("" is once).
func VoteGrant(a *rein.Approval, v Voter, kind, message string, args json.RawMessage, grant string, now time.Time) (Transition, error) {
	return Cast(a, v, Ballot{Kind: kind, Message: message, Args: args, Grant: grant}, now)
}

// Cast records ballot b of voter v at now and resolves the approval when
// the vote completes a quorum (or enough rejections). An approve or an edit
// counts only for the revision its voter saw: one naming another revision
// is ErrStaleRevision, one naming none on an edited approval ErrNoRevision.
// A reject always counts: refusing is safe whatever version was shown. The
// grant scope must be one the approval permits; the approval resolves with
// the scope every counting vote chose, else once: the narrowest wins.
func Cast(a *rein.Approval, v Voter, b Ballot, now time.Time) (Transition, error) {
	kind, args, grant := b.Kind, b.Args, b.Grant
	if (kind == Edit) != (len(args) > 0) || (kind != Approve && kind != Reject && kind != Edit) {
		return Transition{}, ErrBadVote
	}
	if grant != "" {
		if kind == Reject {
			return Transition{}, fmt.Errorf("%w: a rejection chooses no grant", ErrBadVote)
		}
		if !slices.Contains(permitted(a), grant) {
			return Transition{}, fmt.Errorf("%w: grant %q is not one this approval permits (%s)", ErrBadVote, grant, strings.Join(permitted(a), ", "))
		}
	}
	if err := CanVote(a, v, now); err != nil {
		return Transition{}, err
	}
	if err := Current(a, kind, b.Revision); err != nil {
		return Transition{}, err
	}
	// A rejection never lets anything run: it needs no step-up.
	if a.StepUp && kind != Reject && !v.SteppedUp {
		return Transition{}, ErrStepUp
	}
	if kind == Edit {
		a.Revision = revision(a) + 1
		a.ApprovedArgs = args
		a.ArgsHash = rein.ArgsHash(args)
		a.Changes = rein.ArgChanges(a.Args, args)
	}
	a.Votes = append(a.Votes, rein.Vote{By: v.Name, ByKey: v.KeyID, Roles: v.Roles, Groups: v.Groups,
		Vote: kind, Message: b.Message, Args: args, Grant: grant, OnBehalfOf: v.OnBehalfOf, StepUp: v.SteppedUp,
		Revision: revision(a), At: now})
	t := Transition{From: a.Status}
	switch {
	case rejections(a) >= max(a.RejectQuorum, 1):
		resolve(a, rein.StatusRejected, now)
		t.To, t.Cause = rein.StatusRejected, CauseRejected
	case satisfied(a, now):
		resolve(a, rein.StatusApproved, now)
		a.Grant = scope(a)
		window, _ := rein.ParseGrant(a.Grant)
		if window == 0 {
			window = a.GrantTTL
		}
		until := now.Add(window)
		a.GrantExpiresAt = &until
		t.To, t.Cause = rein.StatusApproved, CauseQuorum
	}
	return t, nil
}

// Current checks that a vote of kind naming revision seen is for the
// approval's current revision: a reject always is; an approve or an edit
// must name the current revision, or none while the action was never edited.
func Current(a *rein.Approval, kind string, seen int) error {
	cur := revision(a)
	switch {
	case kind == Reject:
		return nil
	case seen == 0 && cur > 1:
		return ErrNoRevision
	case seen != 0 && seen != cur:
		return fmt.Errorf("%w: the vote names revision %d, the current one is %d", ErrStaleRevision, seen, cur)
	}
	return nil
}

// revision is the approval's current revision (1 for one made before
// revisions were numbered and never edited).
func revision(a *rein.Approval) int { return max(a.Revision, 1) }

// Permits reports whether the approval lets approvers choose grant.
func Permits(a *rein.Approval, grant string) bool { return slices.Contains(permitted(a), grant) }

// permitted are the grant scopes an approval allows (once when it names none).
func permitted(a *rein.Approval) []string {
	if len(a.Grants) == 0 {
		return []string{rein.GrantOnce}
	}
	return a.Grants
}

// scope is the grant an approval resolves with: the scope every counting
// vote chose, else once.
func scope(a *rein.Approval) string {
	chosen := ""
	for i, x := range a.Counting() {
		g := x.Grant
		if g == "" {
			g = rein.GrantOnce
		}
		if i > 0 && g != chosen {
			return rein.GrantOnce
		}
		chosen = g
	}
	if chosen == "" {
		return rein.GrantOnce
	}
	return chosen
}

// rejections counts the people who rejected, across edits: a person who
// rejected again after an edit still counts once.
func rejections(a *rein.Approval) int {
	var rejects []rein.Vote
	for _, x := range a.Votes {
		if x.Vote == Reject {
			rejects = append(rejects, x)
		}
	}
	return len(distinct(rejects))
}

// satisfied: quorum approvals from different voters, and every approver set
// has at least one approving voter who matches it.
func satisfied(a *rein.Approval, at time.Time) bool {
	votes := distinct(a.Counting()) // one person counts once, whatever their keys and delegations
	if len(votes) < max(a.Quorum, 1) {
		return false
	}
	for _, set := range setsAt(a, at) {
		ok := false
		for _, x := range votes {
			v := Voter{Name: x.By, Roles: x.Roles, Groups: x.Groups, Client: strings.HasPrefix(x.ByKey, ClientKeyPrefix), OnBehalfOf: x.OnBehalfOf}
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
	a.Uses++
	at := now
	a.ConsumedAt = &at
	if a.Grant != "" && a.Grant != rein.GrantOnce {
		// A session or window grant stays approved until its window closes
		// (or it is revoked); every use is recorded.
		return Transition{From: rein.StatusApproved, To: rein.StatusApproved, Cause: CauseUsed}, nil
	}
	a.Status = rein.StatusConsumed
	return Transition{From: rein.StatusApproved, To: rein.StatusConsumed, Cause: CauseUsed}, nil
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
