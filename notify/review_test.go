package notify

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
)

func TestRoutingForReview(t *testing.T) {
	r := Routing{Routes: []Route{
		{Rules: []string{"payments-*"}, Slack: []string{"CFINANCE"}, Email: true},                       // both (written before reviews)
		{Approvers: []string{"group:oncall"}, Slack: []string{"CONCALL"}, Webhooks: []string{"pager"}},  // approvals only
		{Reviewers: []string{"group:security"}, Slack: []string{"CSECURITY"}},                           // reviews only
		{For: []string{ForReviews}, Tenants: []string{"globex"}, Email: true},                           // reviews only
		{For: []string{ForApprovals}, Tenants: []string{"globex"}, Webhooks: []string{"globex-hook"}},   // approvals only
		{Tenants: []string{"initech"}, Slack: []string{"CINITECH"}, Webhooks: []string{"initech-hook"}}, // both
	}}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	defaults := Channels{Slack: []string{"CDEFAULT"}, Email: true}
	cases := []struct {
		name string
		rv   rein.Review
		want Channels
	}{
		{"an old route's rule glob", rein.Review{Tenant: "acme", Rule: "payments-small", Reviewers: []string{"role:approver"}}, Channels{Slack: []string{"CFINANCE"}, Email: true}},
		{"reviewer group", rein.Review{Tenant: "acme", Rule: "reads", Reviewers: []string{"group:security"}}, Channels{Slack: []string{"CSECURITY"}}},
		{"an approvers route is not for reviews", rein.Review{Tenant: "acme", Rule: "deploys", Reviewers: []string{"group:oncall"}}, Channels{}},
		{"for reviews, by tenant", rein.Review{Tenant: "globex", Kind: "session", Reviewers: []string{"role:approver"}}, Channels{Email: true}},
		{"webhooks are not routed for reviews", rein.Review{Tenant: "initech", Rule: "x"}, Channels{Slack: []string{"CINITECH"}}},
		{"routes add up", rein.Review{Tenant: "globex", Rule: "payments-1", Reviewers: []string{"group:security"}},
			Channels{Slack: []string{"CFINANCE", "CSECURITY"}, Email: true}},
	}
	for _, c := range cases {
		got := r.ForReview(&c.rv, defaults)
		if !slices.Equal(got.Slack, c.want.Slack) || got.Email != c.want.Email || len(got.Webhooks) != 0 {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	// Approvals are routed as before: the review routes take none of them.
	got := r.For(&rein.Approval{Tenant: "globex", Rule: "x", Approvers: []string{"group:security"}}, defaults)
	if len(got.Slack) != 0 || got.Email || !slices.Equal(got.Webhooks, []string{"globex-hook"}) {
		t.Errorf("a globex approval: %+v, want only the approvals route's webhook", got)
	}
	none := Routing{}
	if got := none.ForReview(&rein.Review{Tenant: "acme"}, defaults); !slices.Equal(got.Slack, defaults.Slack) || !got.Email {
		t.Errorf("no routes: %+v, want where approvals go", got)
	}
	bad := []Route{
		{For: []string{"questions"}, Email: true},
		{For: []string{ForReviews}, Approvers: []string{"group:x"}, Email: true},
		{For: []string{ForApprovals}, Reviewers: []string{"group:x"}, Email: true},
		{Approvers: []string{"group:x"}, Reviewers: []string{"group:y"}, Email: true},
		{For: []string{ForReviews}, Webhooks: []string{"pager"}},
	}
	for i, b := range bad {
		if (&Routing{Routes: []Route{b}}).Check() == nil {
			t.Errorf("bad route %d accepted: %+v", i, b)
		}
	}
}

func TestReviewer(t *testing.T) {
	rv := &rein.Review{Tenant: "acme", Agent: "builder/claude", Reviewers: []string{"group:security", "user:rita"}}
	cases := []struct {
		key  rein.Key
		want bool
	}{
		{rein.Key{ID: "k1", Name: "sam", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"security"}}, true},
		{rein.Key{ID: "k2", Name: "rita", Tenant: "acme", Roles: []rein.Role{rein.RoleAuditor}}, true},
		{rein.Key{ID: "k3", Name: "ann", Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}, false}, // may mark it, is not named
		{rein.Key{ID: "k4", Name: "sam", Tenant: "globex", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"security"}}, false},
		{rein.Key{ID: "k5", Name: "builder", Tenant: "acme", Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"security"}}, false},
		{rein.Key{ID: "k6", Name: "sid", Tenant: "acme", Roles: []rein.Role{rein.RoleAgent}, Groups: []string{"security"}}, false},
		{rein.Key{ID: "k7", Name: "root", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleApprover}, Groups: []string{"security"}}, true},
	}
	for _, c := range cases {
		if got := Reviewer(rv, &c.key); got != c.want {
			t.Errorf("%s (%s): %v, want %v", c.key.Name, c.key.Tenant, got, c.want)
		}
	}
}

func TestReviewPage(t *testing.T) {
	cases := []struct {
		rv   rein.Review
		want string
	}{
		{rein.Review{ID: "rev_1", Session: "s 1/x"}, "https://rein.example/reviews/rev_1"},
		{rein.Review{ID: "rev_2"}, "https://rein.example/reviews/rev_2"},
		{rein.Review{ID: "rev/../x"}, "https://rein.example/reviews/rev%2F..%2Fx"},
	}
	for _, c := range cases {
		if got := ReviewPage("https://rein.example/", &c.rv); got != c.want {
			t.Errorf("%s: %s, want %s", c.rv.ID, got, c.want)
		}
	}
}

// reviewRecorder is a channel that also carries reviews.
type reviewRecorder struct{ recorder }

func (r *reviewRecorder) AnnounceReview(_ context.Context, rv *rein.Review, t []string) error {
	return r.add(fmt.Sprintf("review %s %v", rv.ID, t))
}
func (r *reviewRecorder) UpdateReview(_ context.Context, rv *rein.Review) error {
	return r.add(fmt.Sprintf("review %s %s", rv.ID, rv.Status))
}
func (r *reviewRecorder) DigestReviews(_ context.Context, open []*rein.Review, t []string) error {
	return r.add(fmt.Sprintf("review digest %d %v", len(open), t))
}

type reviewList []*rein.Review

func (l reviewList) Reviews(context.Context, string, rein.ReviewFilter) ([]*rein.Review, error) {
	return l, nil
}

func TestDispatcherSendsReviews(t *testing.T) {
	open := &rein.Review{ID: "rev_sec", Tenant: "acme", Status: rein.ReviewOpen, Rule: "reads", Reviewers: []string{"group:security"}}
	other := &rein.Review{ID: "rev_other", Tenant: "acme", Status: rein.ReviewOpen, Rule: "deploys", Reviewers: []string{"role:approver"}}
	decided := &rein.Review{ID: "rev_done", Tenant: "acme", Status: rein.ReviewOK, Rule: "reads"}
	slack, email := &reviewRecorder{}, &reviewRecorder{}
	bus := &events.Bus{}
	d := &Dispatcher{Bus: bus, Store: pendingList{}, Reviews: reviewList{open, other, decided}, Slack: slack, Email: email,
		SlackDefault: []string{"CDEFAULT"}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tick: 20 * time.Millisecond,
		Routing: Routing{DigestEvery: 50 * time.Millisecond, DigestSlack: []string{"CDIGEST"}, DigestEmail: true, DigestReviews: true,
			Routes: []Route{{Reviewers: []string{"group:security"}, Slack: []string{"CSECURITY"}, Email: true}, {Rules: []string{"deploys"}, Slack: []string{"CDEPLOYS"}}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Run(ctx)
	bus.Publish(events.ReviewCreated, "acme", open)
	bus.Publish(events.ReviewCreated, "acme", other)
	marked := *open
	marked.Status = rein.ReviewConcern
	bus.Publish(events.ReviewUpdated, "acme", &marked)
	want := []struct {
		r    *reviewRecorder
		what string
	}{
		{slack, "review rev_sec [CSECURITY]"}, {email, "review rev_sec []"},
		{slack, "review rev_other [CDEPLOYS]"},
		{slack, "review rev_sec concern"}, {email, "review rev_sec concern"},
		{slack, "review digest 2 [CDIGEST]"}, {email, "review digest 2 []"},
	}
	deadline := time.Now().Add(3 * time.Second)
	for _, w := range want {
		for !w.r.has(w.what) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !w.r.has(w.what) {
			t.Errorf("never sent %q; slack %v, email %v", w.what, slack.got, email.got)
		}
	}
	if email.has("review rev_other []") {
		t.Error("the deploys review went by e-mail; its route does not send e-mail")
	}
	if slack.has("digest 0 [CDIGEST]") {
		t.Error("an approval digest was sent with nothing pending")
	}
}

// TestDispatcherReviewsGoWhereApprovalsGo: with no routes, a review goes to
// the default Slack channel and by e-mail, and a channel that carries no
// reviews is skipped.
func TestDispatcherReviewsGoWhereApprovalsGo(t *testing.T) {
	slack, email := &reviewRecorder{}, &recorder{}
	bus := &events.Bus{}
	d := &Dispatcher{Bus: bus, Store: pendingList{}, Slack: slack, Email: email, SlackDefault: []string{"CDEFAULT"},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Tick: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d.Run(ctx)
	bus.Publish(events.ReviewCreated, "acme", &rein.Review{ID: "rev_1", Tenant: "acme", Status: rein.ReviewOpen})
	deadline := time.Now().Add(3 * time.Second)
	for !slack.has("review rev_1 [CDEFAULT]") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !slack.has("review rev_1 [CDEFAULT]") {
		t.Errorf("the review did not reach the default channel: %v", slack.got)
	}
	if len(email.got) != 0 {
		t.Errorf("a channel without reviews was sent %v", email.got)
	}
}
