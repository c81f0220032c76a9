package pipeline

import "github.com/reinhq/rein"

// Store is what the decision path keeps and reads: every concept a check,
// a vote or a sweep touches, and nothing of the audit tree, the policy tiers
// or the console's own state.
type Store interface {
	rein.KeyStore
	rein.CheckStore
	rein.ApprovalStore
	rein.QuestionStore
	rein.LockStore
	rein.SessionStore
	rein.DelegationStore
	rein.ReviewStore
	rein.ProposalStore
	rein.AuditStore
}
