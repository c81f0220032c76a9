// Package rein holds the domain of the rein control plane: checks, decisions,
// keys, approvals and audit entries, and the Store interface that the storage
// adapters (sqlite, and later postgres) implement. It does no I/O of its own.
package rein

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"golang.org/x/mod/sumdb/tlog"
)

// DevVersion is the version of a build that was not stamped.
const DevVersion = "0.1.0-dev"

// The release this binary was built as. A release build stamps all three
// with -ldflags "-X github.com/reinhq/rein.Version=... -X ...Commit=...
// -X ...BuildDate=..." (see the Makefile); a plain go build leaves Commit and
// BuildDate empty and `rein version` falls back to what the Go toolchain
// recorded in the binary (runtime/debug.ReadBuildInfo).
var (
	Version   = DevVersion
	Commit    = ""
	BuildDate = ""
)

// Decision is rein's answer to a check.
type Decision string

const (
	Allow    Decision = "allow"
	Deny     Decision = "deny"
	Ask      Decision = "ask"
	Throttle Decision = "throttle"
	Modify   Decision = "modify"
)

// Restrictiveness orders decisions for combination: deny > ask > throttle > modify > allow.
func (d Decision) Restrictiveness() int {
	switch d {
	case Deny:
		return 4
	case Ask:
		return 3
	case Throttle:
		return 2
	case Modify:
		return 1
	case Allow:
		return 0
	}
	return 5 // unknown decisions are treated as stricter than deny: never allow them
}

// Allows reports whether the action may run (allow or modify).
func (d Decision) Allows() bool { return d == Allow || d == Modify }

// Role is what a key may do (api.md, Roles).
type Role string

const (
	RoleAdmin    Role = "admin"
	RoleApprover Role = "approver"
	RoleAgent    Role = "agent"
	RoleAuditor  Role = "auditor"
)

// AllRoles lists the roles in the order they are documented.
var AllRoles = []Role{RoleAdmin, RoleApprover, RoleAgent, RoleAuditor}

// AllTenants is the tenant of keys that administer every tenant.
const AllTenants = "*"

// Key is an API key: the identity (Name) of an agent or a person in one tenant.
type Key struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Tenant     string     `json:"tenant"`
	Roles      []Role     `json:"roles"`
	Groups     []string   `json:"groups"`
	CreatedAt  time.Time  `json:"created_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	SecretHash string     `json:"-"`
}

// Has reports whether the key holds any of the roles.
func (k *Key) Has(roles ...Role) bool {
	for _, have := range k.Roles {
		for _, want := range roles {
			if have == want {
				return true
			}
		}
	}
	return false
}

// Sees reports whether the key may see objects of tenant t.
func (k *Key) Sees(t string) bool { return k.Tenant == AllTenants || k.Tenant == t }

// CheckResponse is the answer to POST /v1/check, field for field as api.md fixes it.
type CheckResponse struct {
	ID            string          `json:"id"`
	Decision      Decision        `json:"decision"`
	Reason        string          `json:"reason"`
	Rule          string          `json:"rule"`
	PolicyVersion string          `json:"policy_version"`
	Risk          []string        `json:"risk"`
	ActionHash    string          `json:"action_hash"`
	Args          json.RawMessage `json:"args"`
	Approval      *ApprovalRef    `json:"approval"`
	RetryAfterMS  *int64          `json:"retry_after_ms"`
	AuditIndex    int64           `json:"audit_index"`
}

// ApprovalRef is the short view of an approval inside a check response.
type ApprovalRef struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
	Quorum    int       `json:"quorum"`
	Approvals int       `json:"approvals"`
	URL       string    `json:"url"`
}

// CheckRecord is a stored check: the answer as it was sent, plus what was asked
// and what rein derived. GET /v1/checks/{id} returns it.
type CheckRecord struct {
	CheckResponse
	Tenant    string         `json:"tenant"`
	CreatedAt time.Time      `json:"created_at"`
	Check     CheckInput     `json:"check"`
	Facts     map[string]any `json:"facts"`
	Shadow    []ShadowMatch  `json:"shadow"`
	// Result is what the agent reported after running the action, if it did.
	Result *CheckResult `json:"result"`
	KeyID  string       `json:"-"`
	// Taints is true when the check, if allowed, taints its session.
	Taints bool `json:"-"`
	// RunArgsHash is the hash of the arguments to run (rein.ArgsHash), as
	// the agent computes it: a reported result is compared with it, since
	// the record keeps the arguments with their secrets redacted.
	RunArgsHash string `json:"args_hash,omitempty"`
	// Review, when set, is a review after the fact of this allowed check,
	// stored in the same transaction (its review.created entry is among
	// the check's entries).
	Review *Review `json:"-"`
}

// CheckInput is the request as rein understood it, after validation.
type CheckInput struct {
	Tool      string            `json:"tool"`
	Args      json.RawMessage   `json:"args"`
	Session   string            `json:"session"`
	Agent     string            `json:"agent"`
	Intent    string            `json:"intent"`
	Labels    map[string]string `json:"labels"`
	Cost      float64           `json:"cost"`
	RequestID string            `json:"request_id"`
	Batch     string            `json:"batch,omitempty"`
}

// ShadowMatch is a rule in `mode: shadow` that matched: what it would have done.
type ShadowMatch struct {
	Rule     string   `json:"rule"`
	Decision Decision `json:"decision"`
	Error    string   `json:"error,omitempty"`
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

// CheckFilter selects checks for a list (GET /v1/checks); zero fields do
// not filter. Agent matches the agent and its sub-agents (agent/...).
// Since is inclusive, Until exclusive.
type CheckFilter struct {
	Decision Decision
	Agent    string
	Tool     string
	Session  string
	Since    time.Time
	Until    time.Time
	Limit    int
	Before   string // cursor: the id of the last item of the previous page
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

// PolicyDoc is one tier of policy as stored: the global policy, or one tenant's.
type PolicyDoc struct {
	Tenant   string    `json:"tenant"` // "" for the global tier
	Version  string    `json:"version"`
	Source   string    `json:"source"`
	LoadedAt time.Time `json:"loaded_at"`
	LoadedBy string    `json:"loaded_by"`
	Origin   string    `json:"origin"` // "file:<path>" or "api"
}

// ErrNotFound is returned by stores for a missing object; the API maps it to 404.
var ErrNotFound = Errorf(ECodeNotFound, "not found")

// ErrDuplicateRequest is returned by Store.RecordCheck when the key already
// used the check's request_id; the stored record is returned alongside.
var ErrDuplicateRequest = errors.New("duplicate request_id")

// ErrApprovalPending is returned by Store.RecordCheck when the approval it
// would create already exists: another check of the same action created a
// pending approval first. The caller looks again and joins that one.
var ErrApprovalPending = errors.New("a pending approval for this action already exists")

// Store is rein's persistent state. Every method that changes state takes the
// audit entries describing the change and writes them in the same transaction,
// so that nothing is acknowledged that the audit log does not hold.
type Store interface {
	CreateKey(ctx context.Context, k *Key, e *Entry) error
	KeyBySecretHash(ctx context.Context, hash string) (*Key, error)
	KeyByID(ctx context.Context, id string) (*Key, error)
	Keys(ctx context.Context, tenant string) ([]*Key, error)
	// RevokeKey revokes a key; it refuses (conflict) to revoke the last
	// active admin key of tenant "*", checked in the same transaction.
	RevokeKey(ctx context.Context, id string, at time.Time, e *Entry) error

	// RecordCheck stores a decided check, the approval it created (if any) and
	// its audit entries, and sets rec.AuditIndex to the index of entries[0].
	// When the key already used rec's request_id it returns the stored record
	// and ErrDuplicateRequest. At most one approval per action is pending:
	// when created would be a second, it returns ErrApprovalPending. Pending
	// approvals of that action whose time ran out are expired first.
	// When use is set, the check's allow comes from an approval's grant: use
	// is applied to that approval in the same transaction, and its error
	// (the grant is gone) aborts the whole write.
	RecordCheck(ctx context.Context, rec *CheckRecord, created *Approval, use *ApprovalUse, entries []*Entry) (*CheckRecord, error)
	CheckByID(ctx context.Context, id string) (*CheckRecord, error)
	CheckByRequestID(ctx context.Context, keyID, requestID string) (*CheckRecord, error)

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

	// CreateQuestion stores a new question with its audit entries.
	CreateQuestion(ctx context.Context, q *Question, entries []*Entry) error
	// Question returns one question (any tenant: callers scope it), or ErrNotFound.
	Question(ctx context.Context, id string) (*Question, error)
	// Questions lists a tenant's questions ("*": every tenant), newest first.
	Questions(ctx context.Context, tenant string, f QuestionFilter) ([]*Question, error)
	// ChangeQuestion runs change on the current question inside one write
	// transaction, as ChangeApproval does for approvals.
	ChangeQuestion(ctx context.Context, id string, change QuestionChange) (*Question, error)
	// DueQuestions returns the ids of pending questions past expires_at.
	DueQuestions(ctx context.Context, now time.Time) ([]string, error)

	// CreateLock stores a lock; Locks lists those not removed (any tenant);
	// RemoveLock removes one (ErrNotFound when it is gone already).
	CreateLock(ctx context.Context, l *Lock, entries []*Entry) error
	Lock(ctx context.Context, id string) (*Lock, error)
	Locks(ctx context.Context) ([]*Lock, error)
	RemoveLock(ctx context.Context, id, by string, at time.Time, e *Entry) (*Lock, error)

	// SessionState returns a session (nil if it has no checks yet) and how
	// many earlier checks of the action hash it holds. RecordCheck keeps
	// sessions up to date in the same transaction as the check.
	SessionState(ctx context.Context, tenant, id, actionHash string) (*Session, int64, error)
	// SessionEnded returns the session if it has ended, nil while it is
	// open or has no checks: all a check needs when its policy reads
	// nothing of the session. It may answer from memory, as long as an end
	// made through any server reaches it within the bound docs/scale.md
	// gives.
	SessionEnded(ctx context.Context, tenant, id string) (*Session, error)
	// EndSession marks a session ended (ErrNotFound when it has no checks,
	// a conflict when it already ended) and appends e.
	EndSession(ctx context.Context, tenant, id, by string, at time.Time, e *Entry) (*Session, error)
	// ContainSession starts session id as contained (Session.Contain: a
	// conflict unless it is new), creating it, and appends e.
	ContainSession(ctx context.Context, tenant, id, agent string, sb *Sandbox, e *Entry) (*Session, error)
	// EndSandbox records that the contained command of session id ended
	// (Session.EndSandbox) and appends e.
	EndSandbox(ctx context.Context, tenant, id, keyID string, end SandboxEnd, at time.Time, e *Entry) (*Session, error)
	// CreateDelegation stores a delegation with its audit entries.
	CreateDelegation(ctx context.Context, d *Delegation, entries []*Entry) error
	// Delegations lists a tenant's delegations (tenant *: every tenant's),
	// revoked and expired ones included, newest first.
	Delegations(ctx context.Context, tenant string) ([]*Delegation, error)
	// RevokeDelegation ends a delegation (ErrNotFound, or a conflict when it
	// was revoked already) and appends e.
	RevokeDelegation(ctx context.Context, id, by string, at time.Time, e *Entry) (*Delegation, error)
	// CreateReview stores a new review with its audit entries.
	CreateReview(ctx context.Context, r *Review, entries []*Entry) error
	// Review returns one review (ErrNotFound).
	Review(ctx context.Context, id string) (*Review, error)
	// Reviews lists a tenant's reviews (tenant * : every tenant's), newest first.
	Reviews(ctx context.Context, tenant string, f ReviewFilter) ([]*Review, error)
	// ChangeReview applies change to a review and appends its entries, in one
	// transaction.
	ChangeReview(ctx context.Context, id string, change ReviewChange) (*Review, error)
	// CreateProposal stores a new proposal with its audit entries.
	CreateProposal(ctx context.Context, p *Proposal, entries []*Entry) error
	// Proposal returns one proposal (ErrNotFound).
	Proposal(ctx context.Context, id string) (*Proposal, error)
	// Proposals lists a tenant's proposals (tenant *: every tenant's),
	// newest first; f.Status and f.Agent filter.
	Proposals(ctx context.Context, tenant string, f ListFilter) ([]*Proposal, error)
	// ChangeProposal applies change to a proposal and appends its entries,
	// in one transaction.
	ChangeProposal(ctx context.Context, id string, change ProposalChange) (*Proposal, error)
	// SessionChecks lists a session's checks, newest first.
	SessionChecks(ctx context.Context, tenant, id string, limit int, before string) ([]*CheckRecord, error)
	// Checks lists a tenant's checks ("*": every tenant) that pass the
	// filter, newest first.
	Checks(ctx context.Context, tenant string, f CheckFilter) ([]*CheckRecord, error)
	// RecordResult stores a check's result with its audit entry and, when
	// the result reports a cost, corrects the session's cost. A second
	// result for one check is a conflict.
	RecordResult(ctx context.Context, rec *CheckRecord, res *CheckResult, e *Entry) error

	// LogDelivery records a webhook delivery attempt; Deliveries lists the
	// latest, newest first.
	LogDelivery(ctx context.Context, d *WebhookDelivery) error
	Deliveries(ctx context.Context, limit int) ([]*WebhookDelivery, error)

	SavePolicy(ctx context.Context, doc *PolicyDoc, e *Entry) error
	Policies(ctx context.Context) ([]*PolicyDoc, error)

	// Append writes entries that accompany no other state change (server.started).
	Append(ctx context.Context, entries ...*Entry) error
	Entries(ctx context.Context, start int64, limit int) ([]*StoredEntry, error)

	// AuditSize returns how many entries the log holds and how many of them
	// the stored tree covers.
	AuditSize(ctx context.Context) (entries, hashed int64, err error)
	// ReadHashes returns stored tree hashes by their tlog stored-hash index.
	ReadHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
	// SaveTree stores the next records' tree hashes and, if given, a
	// checkpoint, in one transaction.
	SaveTree(ctx context.Context, u *TreeUpdate) error
	// Checkpoints returns the stored checkpoints with sizes in [min, max],
	// ascending; LatestCheckpoint the newest, or ErrNotFound.
	Checkpoints(ctx context.Context, min, max int64) ([]*SignedCheckpoint, error)
	LatestCheckpoint(ctx context.Context) (*SignedCheckpoint, error)
	// AuditKeys lists the checkpoint signing keys ever used; AddAuditKey
	// records a key coming into use (and the previous one going out).
	AuditKeys(ctx context.Context) ([]*AuditKey, error)
	AddAuditKey(ctx context.Context, k *AuditKey) error

	Ping(ctx context.Context) error
	Close() error
}
