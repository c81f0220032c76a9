package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/risk"
)

var reviewNotices = notices{
	args: ":warning: *The arguments are too long to show here: %d bytes.* Below is the start of each argument, the ones that carry risk first; `rein review` and the API show them in full.",
	tool: ":warning: *The tool name is too long to show here: %d bytes.* `rein review` and the API show it in full.",
}

// AnnounceReview posts a review's message to each channel. It has no vote
// buttons: a review is marked with `rein review ID --ok|--concern` (or the
// API), after reading what happened.
func (s *App) AnnounceReview(ctx context.Context, r *rein.Review, channels []string) error {
	var errs []error
	for _, ch := range channels {
		text, blocks := s.reviewMessage(r)
		cid, ts, err := s.client().PostMessageContext(ctx, ch, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		if err != nil {
			errs = append(errs, fmt.Errorf("slack chat.postMessage to %s: %w", ch, err))
			continue
		}
		s.remember(r.ID, cid, ts)
	}
	return errors.Join(errs...)
}

// UpdateReview rewrites the review's messages with its verdict.
func (s *App) UpdateReview(ctx context.Context, r *rein.Review) error {
	s.client()
	s.mu.Lock()
	refs := append([]msgRef(nil), s.posted[r.ID]...)
	s.mu.Unlock()
	var errs []error
	for _, ref := range refs {
		text, blocks := s.reviewMessage(r)
		if _, _, _, err := s.client().UpdateMessageContext(ctx, ref.Channel, ref.TS, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)); err != nil {
			errs = append(errs, fmt.Errorf("slack chat.update in %s: %w", ref.Channel, err))
		}
	}
	return errors.Join(errs...)
}

// DigestReviews posts the list of open reviews to each channel.
func (s *App) DigestReviews(ctx context.Context, open []*rein.Review, channels []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Open reviews: %d", len(open))
	for i, r := range open {
		if i == 50 {
			fmt.Fprintf(&b, "\n… and %d more: `rein reviews`", len(open)-i)
			break
		}
		fmt.Fprintf(&b, "\n• %s: %s (%s) <%s|open>", Text(r.ID), Text(cut(notify.ReviewSubject(r), toolMax)), Text(strings.Join(r.Why, "; ")),
			Text(notify.ReviewPage(s.BaseURL, r)))
	}
	text := b.String()
	var errs []error
	for _, ch := range channels {
		if _, _, err := s.client().PostMessageContext(ctx, ch, slack.MsgOptionText(text, false)); err != nil {
			errs = append(errs, fmt.Errorf("slack review digest to %s: %w", ch, err))
		}
	}
	return errors.Join(errs...)
}

// reviewMessage renders a review: what was reviewed (the agent, the tool
// and its arguments laid out as for an approval, risky ones first and each
// shown whole or said to be cut), its risk tags, why it was queued, who
// reviews it, its verdict once given, how to mark it, and a link to the
// console. Every value the agent chose is escaped (Text, Code) and its
// hidden characters written out (notify.Visible).
func (s *App) reviewMessage(r *rein.Review) (string, []slack.Block) {
	agent := Text(cut(notify.Visible(r.Agent), 200))
	var text string
	switch {
	case r.Kind == "session":
		text = fmt.Sprintf("Review after the fact: session %s of *%s*", Code(cut(notify.Visible(r.Session), 200)), agent)
	default:
		text = fmt.Sprintf("Review after the fact: *%s* ran %s", agent, Code(cut(notify.Visible(r.Tool), toolMax)))
		if r.Session != "" {
			text += fmt.Sprintf(" (session %s)", Text(cut(notify.Visible(r.Session), 200)))
		}
	}
	if r.Status != rein.ReviewOpen {
		text = fmt.Sprintf("Reviewed: *%s* by %s", Text(r.Status), Text(r.DecidedBy))
		if r.Message != "" {
			text += ": " + Text(r.Message)
		}
		text += fmt.Sprintf(" (%s)", Text(cut(notify.ReviewSubject(r), toolMax)))
	}
	blocks := []slack.Block{section("summary", cut(text, sectionMax)), section("risk", reviewRiskText(r))}
	if r.Kind != "session" {
		show := arrange(r.Tool, r.Args, s.reviewTools(r), reviewNotices)
		blocks = append(blocks, show.Blocks...)
	}
	if res := r.Result; res != nil {
		line := fmt.Sprintf("*Result:* %s", Text(res.Status))
		if res.Summary != "" {
			line += ": " + Text(res.Summary)
		}
		if res.ArgsMatch != nil && !*res.ArgsMatch {
			line += "\n:warning: the executed arguments differ from the allowed ones"
		}
		blocks = append(blocks, section("result", cut(line, sectionMax)))
	}
	link := notify.ReviewPage(s.BaseURL, r)
	how := fmt.Sprintf("review %s · reviewers %s · mark it with %s or %s",
		Text(r.ID), Text(strings.Join(r.Reviewers, ", ")), Code("rein review "+r.ID+" --ok"), Code("rein review "+r.ID+" --concern --message ..."))
	if r.Status != rein.ReviewOpen {
		how = fmt.Sprintf("review %s · reviewers %s", Text(r.ID), Text(strings.Join(r.Reviewers, ", ")))
	}
	blocks = append(blocks, slack.NewContextBlock("status", &slack.TextBlockObject{Type: slack.MarkdownType, Text: cut(how, sectionMax), Verbatim: true}))
	open := slack.NewButtonBlockElement(actionOpen, r.ID, slack.NewTextBlockObject(slack.PlainTextType, "Open in rein console", false, false))
	open.URL = link
	blocks = append(blocks, slack.NewActionBlock("rein_actions", open))
	return text, blocks
}

// reviewRiskText says what rein derived about the action, the rule that
// allowed it, and why it was queued for review.
func reviewRiskText(r *rein.Review) string {
	tags := "none derived from the arguments"
	if len(r.Risk) > 0 {
		var b []string
		for _, t := range r.Risk {
			b = append(b, Code(t))
		}
		tags = strings.Join(b, " ")
	}
	why := "not said"
	if len(r.Why) > 0 {
		why = Text(strings.Join(r.Why, "; "))
	}
	text := fmt.Sprintf("*Risk:* %s\n*Queued for review:* %s", tags, why)
	if r.Rule != "" {
		text += "\n*Rule* " + Code(r.Rule)
	}
	return cut(text, sectionMax)
}

// reviewTools are the tool specs of the review's tenant.
func (s *App) reviewTools(r *rein.Review) []risk.ToolSpec {
	return s.tools(&rein.Approval{Tenant: r.Tenant})
}
