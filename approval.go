package rein

import (
	"context"
	"encoding/json"
	"slices"
	"time"
)

// ApprovalRef is the short view of an approval inside a check response.
type ApprovalRef struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
	Quorum    int       `json:"quorum"`
	Approvals int       `json:"approvals"`
	URL       string    `json:"url"`
}

// Approval statuses (api.md, Approvals).
const (
	StatusPending     = "pending"
	StatusApproved    = "approved"
	StatusRejected    = "rejected"
	StatusExpired     = "expired"
	StatusCancelled   = "cancelled"
	StatusInvalidated = "invalidated"
	StatusConsumed    = "consumed"
)

// Approval is the durable request behind an `ask`.
type Approval struct {
	ID             string          `json:"id"`
	Tenant         string          `json:"tenant"`
	Status         string          `json:"status"`
	CheckID        string          `json:"check_id"`
	ActionHash     string          `json:"action_hash"`
	Agent          string          `json:"agent"`
	AgentKeyID     string          `json:"agent_key_id"` // the key that asked: it never votes
	Session        string          `json:"session"`
	Tool           string          `json:"tool"`
	Args           json.RawMessage `json:"args"`
	Intent         string          `json:"intent"`
	Risk           []string        `json:"risk"`
	Rule           string          `json:"rule"`
	Reason         string          `json:"reason"`
	Approvers      []string        `json:"approvers"`
	ApproverSets   [][]string      `json:"approver_sets"`
	Quorum         int             `json:"quorum"`
	RejectQuorum   int             `json:"reject_quorum"`
	GrantTTL       time.Duration   `json:"-"`
	Votes          []Vote          `json:"votes"`
	ApprovedArgs   json.RawMessage `json:"approved_args"`
	CreatedAt      time.Time       `json:"created_at"`
	ExpiresAt      time.Time       `json:"expires_at"`
	ResolvedAt     *time.Time      `json:"resolved_at"`
	GrantExpiresAt *time.Time      `json:"grant_expires_at"`
	ConsumedAt     *time.Time      `json:"consumed_at"`
	// Grants are the scopes approvers may choose; Grant is the one the
	// approval resolved with ("once" or ""; "session"; a window), and Uses
	// how often a scoped grant was used.
	Grants []string `json:"grants"`
	Grant  string   `json:"grant"`
	Uses   int      `json:"uses"`
	// Batch is the agent turn the asking check belonged to, if it said.
	Batch string `json:"batch,omitempty"`
	// Asks are the rules that asked, each with its reason and the approver
	// set it requires (ApproverSets combines them).
	Asks []AskingRule `json:"asks,omitempty"`
	// Escalations add approvers as time passes (approval: escalate); Escalated
	// is how many of them have been announced.
	Escalations []Escalation `json:"escalations,omitempty"`
	Escalated   int          `json:"escalated,omitempty"`
	// StepUp: an approving or editing vote counts only when the voter
	// confirmed it with a passkey (approval: step_up).
	StepUp bool `json:"step_up,omitempty"`
	// Revision numbers the versions of the action the approval holds: 1 is
	// the agent's request, each edit makes the next. ArgsHash identifies the
	// current revision's arguments as approvers are shown them, and Changes
	// says how they differ from the agent's request. A vote counts only for
	// the revision its voter saw (api.md, Approvals).
	Revision int         `json:"revision"`
	ArgsHash string      `json:"args_hash"`
	Changes  []ArgChange `json:"changes,omitempty"`
}

// ArgChange is one difference between the agent's request and an edited
// revision: the argument's path (keys and indexes joined by dots), its value
// in the request (absent: added) and in the revision (absent: removed).
type ArgChange struct {
	Path string          `json:"path"`
	From json.RawMessage `json:"from,omitempty"`
	To   json.RawMessage `json:"to,omitempty"`
}

// CurrentArgs are the arguments of the approval's current revision: the
// last edit's, else the agent's request.
func (a *Approval) CurrentArgs() json.RawMessage {
	if len(a.ApprovedArgs) > 0 && string(a.ApprovedArgs) != "null" {
		return a.ApprovedArgs
	}
	return a.Args
}

// Upgrade fills what an approval recorded before revisions were kept lacks:
// its revision (1 + its edits), its arguments' hash and an edit's changes.
// Stores call it on every approval they read.
func (a *Approval) Upgrade() {
	if a.Revision == 0 {
		a.Revision = 1
		for _, v := range a.Votes {
			if v.Vote == "edit" {
				a.Revision++
			}
		}
	}
	if a.ArgsHash == "" {
		a.ArgsHash = ArgsHash(a.CurrentArgs())
	}
	if a.Changes == nil && len(a.ApprovedArgs) > 0 && string(a.ApprovedArgs) != "null" {
		a.Changes = ArgChanges(a.Args, a.ApprovedArgs)
	}
}

// AskingRule is one rule that asked for an approval: why, and whom.
type AskingRule struct {
	Rule      string   `json:"rule"`
	Tier      string   `json:"tier"`
	Reason    string   `json:"reason"`
	Approvers []string `json:"approvers"`
}

// Escalation makes more people eligible when an approval has waited After:
// each approver set also accepts Approvers from then on.
type Escalation struct {
	After     time.Duration `json:"after_ns"`
	Approvers []string      `json:"approvers"`
}

// EscalateAt returns when the next of a's escalations becomes due (when
// approval.Escalation first exceeds a.Escalated), or nil when a is not
// pending or has no escalation left. Stores keep it in a column, so that
// the sweep reads only the approvals due.
func (a *Approval) EscalateAt() *time.Time {
	if a.Status != StatusPending || a.Escalated >= len(a.Escalations) {
		return nil
	}
	after := make([]time.Duration, len(a.Escalations))
	for i, e := range a.Escalations {
		after[i] = e.After
	}
	slices.Sort(after)
	at := a.CreatedAt.Add(after[max(a.Escalated, 0)])
	return &at
}

// Vote is one approver's vote on an approval.
// The voter's key, roles and groups are kept with the vote: quorum across
// approver sets is judged on them, and auditors can see who counted as what.
type Vote struct {
	By      string          `json:"by"`
	ByKey   string          `json:"by_key"`
	Roles   []Role          `json:"roles"`
	Groups  []string        `json:"groups"`
	Vote    string          `json:"vote"`
	Message string          `json:"message"`
	Args    json.RawMessage `json:"args,omitempty"`
	Grant   string          `json:"grant,omitempty"` // the scope an approving vote chose
	// OnBehalfOf is the delegator when a delegate voted (By): the vote counts
	// as the delegator's.
	OnBehalfOf string `json:"on_behalf_of,omitempty"`
	// StepUp is set when the voter confirmed the vote with a passkey.
	StepUp bool `json:"step_up,omitempty"`
	// Revision is the revision of the action the vote was cast on (an
	// edit's is the revision it made).
	Revision int       `json:"revision,omitempty"`
	At       time.Time `json:"at"`
}

// Counting returns the approving votes that count: those cast since the
// latest edit (an edit is itself one), since earlier approvals were for
// arguments the edit replaced.
func (a *Approval) Counting() []Vote {
	start := 0
	for i, x := range a.Votes {
		if x.Vote == "edit" {
			start = i
		}
	}
	var out []Vote
	for _, x := range a.Votes[start:] {
		if x.Vote == "approve" || x.Vote == "edit" {
			out = append(out, x)
		}
	}
	return out
}

// ListFilter selects approvals or questions for a list; zero fields do not
// filter.
type ListFilter struct {
	Status  string
	Session string
	Agent   string
	Limit   int
	Before  string // cursor: the id of the last item of the previous page
}

// ApprovalFilter selects approvals for a list.
type ApprovalFilter = ListFilter

// ApprovalChange changes an approval in place and returns the audit entries
// that record what it did (none: nothing changed).
type ApprovalChange func(a *Approval) ([]*Entry, error)

// ApprovalUse is the consumption of an approval's grant by a check.
type ApprovalUse struct {
	ID     string
	Change ApprovalChange
}

// Ref returns the short view of the approval used in check responses.
func (a *Approval) Ref(baseURL string) *ApprovalRef {
	return &ApprovalRef{ID: a.ID, Status: a.Status, ExpiresAt: a.ExpiresAt, Quorum: a.Quorum,
		Approvals: len(a.Counting()), URL: baseURL + "/approvals/" + a.ID}
}

// ApprovalStore keeps approvals; RecordCheck (CheckStore) creates them.
type ApprovalStore interface {
	// LatestApproval returns the newest approval bound to the action hash, or ErrNotFound.
	LatestApproval(ctx context.Context, tenant, actionHash string) (*Approval, error)
	// Approval returns one approval (any tenant: callers scope it), or ErrNotFound.
	Approval(ctx context.Context, id string) (*Approval, error)
	// Approvals lists a tenant's approvals ("*": every tenant), newest first.
	Approvals(ctx context.Context, tenant string, f ApprovalFilter) ([]*Approval, error)
	// ChangeApproval runs change on the current approval inside one write
	// transaction, so that changes to one approval are serialised: when
	// change returns entries, the changed approval and the entries are
	// stored together; when it returns an error, nothing is written.
	ChangeApproval(ctx context.Context, id string, change ApprovalChange) (*Approval, error)
	// DueApprovals returns the ids of approvals whose time ran out at now:
	// pending past expires_at, approved past grant_expires_at.
	DueApprovals(ctx context.Context, now time.Time) ([]string, error)
	// DueEscalations returns up to limit pending approvals whose next
	// escalation (Approval.EscalateAt) is due at now, the longest due
	// first.
	DueEscalations(ctx context.Context, now time.Time, limit int) ([]string, error)
}
