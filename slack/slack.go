// Package slack is rein's Slack app: approval messages with Approve, Reject
// and Edit buttons (Block Kit), the interactivity endpoint Slack calls when
// one is pressed, and the message updates that show the outcome and quorum
// progress. Requests are verified with Slack's signing secret (slack-go's
// SecretsVerifier: v0 HMAC-SHA256, five-minute window, constant-time
// compare); the Slack user is mapped to a rein identity whose key casts the
// vote through the pipeline, which applies eligibility and separation of
// duties exactly as for a vote made with the key itself.
package slack

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/notify"
	"github.com/reinhq/rein/pipeline"
	"github.com/reinhq/rein/risk"
)

// Config is the Slack app's configuration (serve's `slack:` section).
type Config struct {
	// BotToken (xoxb-...) calls the Web API; SigningSecret verifies the
	// requests Slack sends to the interactivity endpoint.
	BotToken      string `yaml:"bot_token"`
	SigningSecret string `yaml:"signing_secret"`
	// Channel is where approvals go when no route names a channel.
	Channel string `yaml:"channel"`
	// Users maps Slack user ids (U...) to rein identities.
	Users map[string]notify.Identity `yaml:"users"`
	// APIURL is the Web API's address; default https://slack.com/api/.
	APIURL string `yaml:"api_url"`
}

// Check validates the configuration.
func (c *Config) Check() error {
	if c.BotToken == "" || c.SigningSecret == "" {
		return errors.New("slack: bot_token and signing_secret are both required (Slack app settings: OAuth & Permissions, Basic Information)")
	}
	for u, id := range c.Users {
		if u == "" || id.Tenant == "" || id.Key == "" {
			return fmt.Errorf("slack: user %q: give the rein identity as {tenant: ..., key: ...}", u)
		}
	}
	if c.APIURL == "" {
		c.APIURL = "https://slack.com/api/"
	}
	if !strings.HasSuffix(c.APIURL, "/") {
		c.APIURL += "/"
	}
	return nil
}

// Action ids of the buttons and the edit modal.
const (
	actionApprove = "rein_approve"
	actionReject  = "rein_reject"
	actionEdit    = "rein_edit"
	actionOpen    = "rein_open"    // a link button: nothing to do when pressed
	actionConfirm = "rein_confirm" // the link button to confirm a step-up approval in the console
	editCallback  = "rein_edit"
	editBlock     = "args"
	editInput     = "args"
)

// window is how far a request's timestamp may be from now (Slack's
// "Verifying requests from Slack": five minutes).
const window = 5 * time.Minute

// Store is what the Slack app needs of rein's store: the voter's key, and
// the audit log for the votes it refuses.
type Store interface {
	notify.Keys
	notify.Appender
}

// App posts approval messages and answers Slack's interactivity requests.
type App struct {
	Config   Config
	Pipeline *pipeline.Pipeline
	Store    Store
	BaseURL  string // console links
	Log      *slog.Logger
	// HTTP is the client for the Web API (default http.DefaultClient).
	HTTP *http.Client

	once   sync.Once
	api    *slack.Client
	mu     sync.Mutex
	posted map[string][]msgRef    // approval id -> its messages
	seen   map[[32]byte]time.Time // verified requests, kept for the window
	// unsigned limits the audit entries of requests without a valid
	// signature.
	unsigned notify.Limiter
}

type msgRef struct{ Channel, TS string }

func (s *App) client() *slack.Client {
	s.once.Do(func() {
		opts := []slack.Option{slack.OptionAPIURL(s.Config.APIURL)}
		if s.HTTP != nil {
			opts = append(opts, slack.OptionHTTPClient(s.HTTP))
		}
		s.api = slack.New(s.Config.BotToken, opts...)
		s.posted = map[string][]msgRef{}
		s.seen = map[[32]byte]time.Time{}
	})
	return s.api
}

// Announce posts an approval's message, with its buttons, to each channel.
func (s *App) Announce(ctx context.Context, a *rein.Approval, channels []string) error {
	var errs []error
	for _, ch := range channels {
		text, blocks := s.message(a, true)
		cid, ts, err := s.client().PostMessageContext(ctx, ch, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
		if err != nil {
			errs = append(errs, fmt.Errorf("slack chat.postMessage to %s: %w", ch, err))
			continue
		}
		s.remember(a.ID, cid, ts)
	}
	return errors.Join(errs...)
}

// Remind posts a reminder in the thread of each message of the approval.
func (s *App) Remind(ctx context.Context, a *rein.Approval, channels []string) error {
	s.client()
	s.mu.Lock()
	refs := append([]msgRef(nil), s.posted[a.ID]...)
	s.mu.Unlock()
	text := fmt.Sprintf("Reminder: approval %s expires at %s (%s).", Text(a.ID), a.ExpiresAt.UTC().Format(time.RFC3339), notify.Progress(a))
	var errs []error
	if len(refs) == 0 { // not posted by this server: a new message
		return s.Announce(ctx, a, channels)
	}
	for _, r := range refs {
		if _, _, err := s.client().PostMessageContext(ctx, r.Channel, slack.MsgOptionText(text, false), slack.MsgOptionTS(r.TS)); err != nil {
			errs = append(errs, fmt.Errorf("slack reminder to %s: %w", r.Channel, err))
		}
	}
	return errors.Join(errs...)
}

// Digest posts the list of pending approvals to each channel.
func (s *App) Digest(ctx context.Context, pending []*rein.Approval, channels []string) error {
	text := digestText(pending, s.BaseURL)
	var errs []error
	for _, ch := range channels {
		if _, _, err := s.client().PostMessageContext(ctx, ch, slack.MsgOptionText(text, false)); err != nil {
			errs = append(errs, fmt.Errorf("slack digest to %s: %w", ch, err))
		}
	}
	return errors.Join(errs...)
}

func digestText(pending []*rein.Approval, base string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Pending approvals: %d", len(pending))
	for _, a := range pending {
		fmt.Fprintf(&b, "\n• %s: *%s* wants to run %s, expires %s (%s) <%s|open>", Text(a.ID), Text(a.Agent), Code(cut(notify.Visible(a.Tool), toolMax)),
			a.ExpiresAt.UTC().Format(time.RFC3339), notify.Progress(a), Text(base+"/approvals/"+url.PathEscape(a.ID)))
	}
	return b.String()
}

// Update rewrites every message of the approval with its state; a decided
// approval loses its buttons.
func (s *App) Update(ctx context.Context, a *rein.Approval) error {
	s.client()
	s.mu.Lock()
	refs := append([]msgRef(nil), s.posted[a.ID]...)
	s.mu.Unlock()
	var errs []error
	for _, r := range refs {
		text, blocks := s.message(a, a.Status == rein.StatusPending)
		if _, _, _, err := s.client().UpdateMessageContext(ctx, r.Channel, r.TS, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)); err != nil {
			errs = append(errs, fmt.Errorf("slack chat.update in %s: %w", r.Channel, err))
		}
	}
	return errors.Join(errs...)
}

// Revise shows an edited action where the approval was announced: each of
// its messages is rewritten to the new revision (its changes first) with
// new buttons, which name that revision. An approval this server posted no
// message for is announced anew.
func (s *App) Revise(ctx context.Context, a *rein.Approval, channels []string) error {
	s.client()
	s.mu.Lock()
	posted := len(s.posted[a.ID]) > 0
	s.mu.Unlock()
	if !posted {
		return s.Announce(ctx, a, channels)
	}
	return s.Update(ctx, a)
}

func (s *App) remember(id, channel, ts string) {
	s.client()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.posted[id] {
		if r.Channel == channel && r.TS == ts {
			return
		}
	}
	s.posted[id] = append(s.posted[id], msgRef{channel, ts})
}

// message renders an approval: what is asked, its risk tags and the rule
// that asked, the tool and arguments (see layout), its state and quorum
// progress, who voted, a link to the console, and while it is pending the
// buttons. Approve and Edit are offered only when the message shows the
// whole action and the approval needs no step-up (a passkey confirmation,
// which only the console can take: the message links there with "Confirm
// in rein" instead); Reject and the console link always are. Every value the
// agent chose is escaped (Text, Code) and its hidden characters written
// out (notify.Visible).
func (s *App) message(a *rein.Approval, buttons bool) (string, []slack.Block) {
	tool := Code(cut(notify.Visible(a.Tool), toolMax))
	tags := ""
	if len(a.Risk) > 0 {
		tags = " [" + Text(strings.Join(a.Risk, ", ")) + "]"
	}
	text := fmt.Sprintf("Approval needed: *%s* wants to run %s (session %s)%s: %s", Text(a.Agent), tool, Text(cut(notify.Visible(a.Session), 200)), tags, Text(a.Reason))
	if a.Revision > 1 {
		text = fmt.Sprintf("Approval needed, edited (revision %d): *%s* wants to run %s (session %s)%s: %s", a.Revision, Text(a.Agent), tool,
			Text(cut(notify.Visible(a.Session), 200)), tags, Text(a.Reason))
	}
	if a.Status != rein.StatusPending {
		text = fmt.Sprintf("Approval for %s by *%s*: *%s*", tool, Text(a.Agent), Text(a.Status))
	}
	show := layout(a, s.tools(a))
	var votes []string
	for _, v := range a.Votes {
		votes = append(votes, fmt.Sprintf("%s: %s", Text(v.By), Text(v.Vote)))
	}
	status := notify.Progress(a)
	if len(votes) > 0 {
		status += " · " + strings.Join(votes, ", ")
	}
	link := s.BaseURL + "/approvals/" + url.PathEscape(a.ID)
	blocks := []slack.Block{section("summary", cut(text, sectionMax)), section("risk", riskText(a))}
	if a.StepUp && a.Status == rein.StatusPending {
		blocks = append(blocks, section("step_up", ":closed_lock_with_key: *Approving needs a passkey confirmation*, which only the rein console takes: use *Confirm in rein*. Reject works here."))
	}
	if a.Revision > 1 {
		blocks = append(blocks, section("edited", editedText(a)))
	}
	runs := fmt.Sprintf("*Will run* (revision %d):", max(a.Revision, 1))
	if a.Revision > 1 {
		runs = fmt.Sprintf("*Will run* (revision %d, as edited):", a.Revision)
	}
	blocks = append(blocks, section("will_run", runs))
	blocks = append(blocks, show.Blocks...)
	blocks = append(blocks, slack.NewContextBlock("status", &slack.TextBlockObject{Type: slack.MarkdownType, Text: cut(fmt.Sprintf("%s · rule %s · <%s|Open in rein>", status, Text(a.Rule), Text(link)), sectionMax), Verbatim: true}))
	if buttons {
		// A vote button names the revision the message shows: a press
		// counts only while it is still the current one.
		value := buttonValue(a)
		var els []slack.BlockElement
		if a.StepUp {
			confirm := slack.NewButtonBlockElement(actionConfirm, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Confirm in rein", false, false))
			confirm.URL, confirm.Style = link, slack.StylePrimary
			els = append(els, confirm)
		} else if show.Full {
			approve := slack.NewButtonBlockElement(actionApprove, value, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
			approve.Style = slack.StylePrimary
			els = append(els, approve)
		}
		reject := slack.NewButtonBlockElement(actionReject, value, slack.NewTextBlockObject(slack.PlainTextType, "Reject", false, false))
		reject.Style = slack.StyleDanger
		els = append(els, reject)
		if show.Full && !a.StepUp && editable(a) {
			els = append(els, slack.NewButtonBlockElement(actionEdit, value, slack.NewTextBlockObject(slack.PlainTextType, "Edit", false, false)))
		}
		if !a.StepUp { // "Confirm in rein" is the console link
			open := slack.NewButtonBlockElement(actionOpen, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Open in rein console", false, false))
			open.URL = link
			els = append(els, open)
		}
		blocks = append(blocks, slack.NewActionBlock("rein_actions", els...))
	}
	return text, blocks
}

// editedText says, before the arguments, that the action shown is an edit:
// who made it and what changed from the agent's request.
func editedText(a *rein.Approval) string {
	by := notify.Editor(a)
	if by == "" {
		by = "an approver"
	}
	var b strings.Builder
	fmt.Fprintf(&b, ":pencil2: *Edited by %s*: this is revision %d of the action, not the agent's request. Changed from the agent's request:", Text(by), a.Revision)
	lines := notify.ChangeLines(a)
	if len(lines) == 0 {
		lines = []string{"nothing: the edit is the agent's request again"}
	}
	for _, l := range lines {
		b.WriteString("\n• " + Code(l))
	}
	return cut(b.String(), sectionMax)
}

// buttonValue is what a vote button carries: the approval and the revision
// of the action the message shows, as "apr_…@2".
func buttonValue(a *rein.Approval) string {
	return a.ID + "@" + strconv.Itoa(max(a.Revision, 1))
}

// pressed reads a button's value: the approval id and the revision shown (0
// for a button of a message posted before buttons named one).
func pressed(value string) (string, int) {
	id, rev, ok := strings.Cut(value, "@")
	if !ok {
		return value, 0
	}
	n, err := strconv.Atoi(rev)
	if err != nil || n < 1 {
		return id, 0
	}
	return id, n
}

// riskText says what rein derived about the action and why it asks: the
// risk tags and the rule with its reason. It is always in the message,
// however long the arguments are.
func riskText(a *rein.Approval) string {
	tags := "none derived from the arguments"
	if len(a.Risk) > 0 {
		var b []string
		for _, t := range a.Risk {
			b = append(b, Code(t))
		}
		tags = strings.Join(b, " ")
	}
	reason := a.Reason
	if reason == "" {
		reason = "no reason given"
	}
	return cut(fmt.Sprintf("*Risk:* %s\n*Rule* %s: %s", tags, Code(a.Rule), Text(reason)), sectionMax)
}

// tools are the tool specs of the approval's tenant (nil without a policy):
// they say which arguments carry risk and are shown first.
func (s *App) tools(a *rein.Approval) []risk.ToolSpec {
	if s.Pipeline == nil || s.Pipeline.Policies == nil {
		return nil
	}
	return s.Pipeline.Policies.For(a.Tenant).Tools()
}

// editable reports whether the Edit modal can hold the arguments whole.
func editable(a *rein.Approval) bool {
	return units(editText(a)) <= editMax
}

// offers reports whether the approval's message offers Approve (and Edit):
// a vote that arrives for an approval whose message could not show the
// whole action is refused, whatever message it came from.
func (s *App) offers(a *rein.Approval, action string) (bool, string) {
	show := layout(a, s.tools(a))
	if !show.Full {
		return false, fmt.Sprintf("the approval message cannot show the whole action (%d bytes of arguments); approve it in the rein console, where it is shown in full", show.Size)
	}
	if action == actionEdit && !editable(a) {
		return false, fmt.Sprintf("the arguments are too long to edit in Slack (%d bytes); edit them in the rein console", show.Size)
	}
	return true, ""
}

// ServeHTTP is the interactivity endpoint (Slack app settings:
// Interactivity & Shortcuts, Request URL).
func (s *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.client()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if reason := s.verify(r.Header, body); reason != "" {
		// Anyone can send these: their audit entries are rate-limited.
		if ok, n := s.unsigned.Take(time.Now()); ok {
			s.refuse(r.Context(), notify.Refusal{Reason: reason, Suppressed: n}, "")
		}
		http.Error(w, reason, http.StatusUnauthorized)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		http.Error(w, "expected a form with a payload field", http.StatusBadRequest)
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		http.Error(w, "payload is not an interaction: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		s.blockActions(r.Context(), &cb)
		w.WriteHeader(http.StatusOK)
	case slack.InteractionTypeViewSubmission:
		s.viewSubmission(r.Context(), w, &cb)
	default:
		w.WriteHeader(http.StatusOK) // nothing rein acts on
	}
}

// verify checks Slack's signature and refuses a request seen before: the
// signature is valid for five minutes, and within them a captured request
// could be sent again.
func (s *App) verify(h http.Header, body []byte) string {
	v, err := slack.NewSecretsVerifier(h, s.Config.SigningSecret)
	if errors.Is(err, slack.ErrExpiredTimestamp) {
		return "the request's timestamp is more than five minutes from now"
	}
	if err != nil {
		return "the request carries no valid Slack signature: " + err.Error()
	}
	v.Write(body)
	if err := v.Ensure(); err != nil {
		return "the Slack signature does not match the request"
	}
	sum := sha256.Sum256(append([]byte(h.Get("X-Slack-Request-Timestamp")+":"), body...))
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, at := range s.seen {
		if now.Sub(at) > 2*window {
			delete(s.seen, k)
		}
	}
	if _, dup := s.seen[sum]; dup {
		return "this request was received before (replayed)"
	}
	s.seen[sum] = now
	return ""
}

// identity returns the rein key of a Slack user, or refuses.
func (s *App) identity(ctx context.Context, user, approvalID string) (*rein.Key, notify.Identity, bool) {
	id, ok := s.Config.Users[user]
	if !ok {
		s.refuse(ctx, notify.Refusal{Actor: "slack:" + user, Approval: approvalID, Reason: "the Slack user is not mapped to a rein identity"}, user)
		return nil, id, false
	}
	key, err := notify.KeyOf(ctx, s.Store, id)
	if err != nil {
		s.refuse(ctx, notify.Refusal{Tenant: id.Tenant, Actor: "slack:" + user, Approval: approvalID, Reason: err.Error()}, user)
		return nil, id, false
	}
	return key, id, true
}

func (s *App) blockActions(ctx context.Context, cb *slack.InteractionCallback) {
	if len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	act := cb.ActionCallback.BlockActions[0]
	id, rev := pressed(act.Value)
	if act.ActionID == actionOpen || act.ActionID == actionConfirm {
		return // Slack opened the console link; no vote
	}
	channel, ts := cb.Container.ChannelID, cb.Container.MessageTs
	if channel == "" {
		channel, ts = cb.Channel.ID, cb.Message.Timestamp
	}
	key, ident, ok := s.identity(ctx, cb.User.ID, id)
	if !ok {
		s.ephemeral(ctx, channel, cb.User.ID, "rein does not know you as an approver; ask an administrator to map your Slack user to your rein identity.")
		return
	}
	if channel != "" && ts != "" {
		s.remember(id, channel, ts)
	}
	if act.ActionID == actionApprove || act.ActionID == actionEdit {
		// A press can come from an old message, or be made up by whoever
		// holds a valid signature: whether Approve may be offered is
		// decided again here, from the approval as it is stored.
		if refused := s.mayApprove(ctx, key, ident, id, act.ActionID, channel, cb.User.ID); refused != "" {
			return
		}
	}
	switch act.ActionID {
	case actionApprove, actionReject:
		kind := approval.Approve
		if act.ActionID == actionReject {
			kind = approval.Reject
		}
		_, err := s.Pipeline.Cast(ctx, key, id, approval.Ballot{Kind: kind, Message: "via Slack", Revision: rev})
		if err != nil {
			s.refuse(ctx, notify.Refusal{Tenant: ident.Tenant, Actor: key.Name, Approval: id, Reason: err.Error()}, cb.User.ID)
			if cur := staleCurrent(err); cur != nil {
				s.stale(ctx, cur, channel, cb.User.ID)
				return
			}
			s.ephemeral(ctx, channel, cb.User.ID, "Your vote was refused: "+Text(err.Error()))
		}
	case actionEdit:
		a, err := s.Pipeline.Approval(ctx, key, id)
		if err != nil {
			s.refuse(ctx, notify.Refusal{Tenant: ident.Tenant, Actor: key.Name, Approval: id, Reason: err.Error()}, cb.User.ID)
			s.ephemeral(ctx, channel, cb.User.ID, "You cannot edit this approval: "+Text(err.Error()))
			return
		}
		// The modal edits the version the message showed, and only that.
		if err := approval.Current(a, approval.Edit, rev); err != nil {
			s.refuse(ctx, notify.Refusal{Tenant: ident.Tenant, Actor: key.Name, Approval: id, Reason: err.Error()}, cb.User.ID)
			s.stale(ctx, a, channel, cb.User.ID)
			return
		}
		if _, err := s.client().OpenViewContext(ctx, cb.TriggerID, editModal(a, channel, ts)); err != nil {
			s.Log.Error("slack views.open", "approval", id, "err", err)
		}
	}
}

// staleCurrent is the current approval of a vote refused because the action
// was edited since its voter saw it (nil for any other error).
func staleCurrent(err error) *rein.Approval {
	var re *rein.Error
	if errors.As(err, &re) && re.Code == rein.ECodeStaleRevision {
		if cur, ok := re.Details.(*rein.Approval); ok {
			return cur
		}
	}
	return nil
}

// stale tells a voter privately that the action changed under their press
// and shows the current version, and rewrites the approval's messages to it
// (new buttons, naming the current revision).
func (s *App) stale(ctx context.Context, cur *rein.Approval, channel, user string) {
	text := fmt.Sprintf("The action was edited since the message you pressed showed it: your vote was not counted. "+
		"The current version is revision %d: %s wants to run %s with %s.", max(cur.Revision, 1), Text(cur.Agent),
		Code(cut(notify.Visible(cur.Tool), toolMax)), Code(cut(notify.Visible(string(notify.Args(cur))), 1500)))
	if lines := notify.ChangeLines(cur); len(lines) > 0 {
		text += " Changed from the agent's request: " + Code(cut(strings.Join(lines, "; "), 1000)) + "."
	}
	text += " The message now shows it: vote there again."
	s.ephemeral(ctx, channel, user, text)
	if channel != "" {
		if err := s.Update(ctx, cur); err != nil {
			s.Log.Error("slack chat.update after a stale vote", "approval", cur.ID, "err", err)
		}
	}
}

// editText is the arguments of the current revision as the Edit modal shows
// them: indented JSON.
func editText(a *rein.Approval) string {
	args := notify.Args(a)
	var pretty bytes.Buffer
	if json.Indent(&pretty, args, "", "  ") != nil {
		return string(args)
	}
	return pretty.String()
}

// mayApprove refuses (audited, and told to the user privately) an approving
// press or edit on an approval whose message could not show the whole
// action, or that cannot be read; it returns the reason, "" when the vote
// may go on to the pipeline.
func (s *App) mayApprove(ctx context.Context, key *rein.Key, ident notify.Identity, id, action, channel, user string) string {
	ok, reason := false, ""
	if a, err := s.Pipeline.Approval(ctx, key, id); err != nil {
		reason = err.Error()
	} else {
		ok, reason = s.offers(a, action)
	}
	if !ok {
		s.refuse(ctx, notify.Refusal{Tenant: ident.Tenant, Actor: key.Name, Approval: id, Reason: reason}, user)
		s.ephemeral(ctx, channel, user, "Your vote was refused: "+Text(reason))
		return reason
	}
	return ""
}

// editMeta travels in the modal's private_metadata.
type editMeta struct {
	Approval string `json:"approval"`
	Channel  string `json:"channel,omitempty"`
	TS       string `json:"ts,omitempty"`
	// Revision is the revision the modal shows: the edit is of that one.
	Revision int `json:"revision,omitempty"`
}

func editModal(a *rein.Approval, channel, ts string) slack.ModalViewRequest {
	initial := editText(a) // editable(a) was checked before the modal opens
	if units(initial) > editMax {
		initial = cut(initial, editMax)
	}
	meta, _ := json.Marshal(editMeta{a.ID, channel, ts, max(a.Revision, 1)})
	input := slack.NewPlainTextInputBlockElement(nil, editInput)
	input.Multiline = true
	input.InitialValue = initial
	summary := fmt.Sprintf("*%s* wants to run %s. Below is revision %d of its arguments. Change them (JSON); your edit counts as your approval, and the policy checks the edited action again.",
		Text(a.Agent), Code(cut(notify.Visible(a.Tool), toolMax)), max(a.Revision, 1))
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      editCallback,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, "Edit and approve", false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, "Approve edited", false, false),
		Close:           slack.NewTextBlockObject(slack.PlainTextType, "Cancel", false, false),
		PrivateMetadata: string(meta),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(&slack.TextBlockObject{Type: slack.MarkdownType, Text: summary, Verbatim: true}, nil, nil, slack.SectionBlockOptionBlockID("summary")),
			slack.NewInputBlock(editBlock, slack.NewTextBlockObject(slack.PlainTextType, "Arguments", false, false), nil, input),
		}},
	}
}

// viewSubmission casts the edit vote of the modal. Errors are shown on the
// input (response_action: errors), as Slack's modal documentation asks.
func (s *App) viewSubmission(ctx context.Context, w http.ResponseWriter, cb *slack.InteractionCallback) {
	if cb.View.CallbackID != editCallback {
		w.WriteHeader(http.StatusOK)
		return
	}
	var meta editMeta
	json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta)
	fail := func(msg string) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"response_action": "errors", "errors": map[string]string{editBlock: msg}})
	}
	key, ident, ok := s.identity(ctx, cb.User.ID, meta.Approval)
	if !ok {
		fail("rein does not know you as an approver")
		return
	}
	var raw string
	if cb.View.State != nil {
		raw = cb.View.State.Values[editBlock][editInput].Value
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fail("the arguments must be a JSON object: " + err.Error())
		return
	}
	if refused := s.mayApprove(ctx, key, ident, meta.Approval, actionEdit, "", cb.User.ID); refused != "" {
		fail("refused: " + cut(refused, 140))
		return
	}
	if meta.Channel != "" && meta.TS != "" {
		s.remember(meta.Approval, meta.Channel, meta.TS)
	}
	_, err := s.Pipeline.Cast(ctx, key, meta.Approval, approval.Ballot{Kind: approval.Edit, Message: "edited via Slack", Args: json.RawMessage(raw), Revision: meta.Revision})
	if err != nil {
		s.refuse(ctx, notify.Refusal{Tenant: ident.Tenant, Actor: key.Name, Approval: meta.Approval, Reason: err.Error()}, cb.User.ID)
		if cur := staleCurrent(err); cur != nil {
			s.stale(ctx, cur, meta.Channel, cb.User.ID)
			fail(fmt.Sprintf("not counted: the action was edited since this form showed it (revision %d is current); cancel, read the updated message and vote again", cur.Revision))
			return
		}
		msg := err.Error()
		if len(msg) > 150 {
			msg = msg[:150]
		}
		fail("refused: " + msg)
		return
	}
	w.WriteHeader(http.StatusOK) // closes the modal
}

func (s *App) refuse(ctx context.Context, r notify.Refusal, user string) {
	r.Channel = "slack"
	if r.Actor == "" && user != "" {
		r.Actor = "slack:" + user
	}
	if err := notify.Refuse(ctx, s.Store, r, time.Now()); err != nil {
		s.Log.Error("audit a refused Slack vote", "err", err)
	}
	s.Log.Warn("slack vote refused", "actor", r.Actor, "approval", r.Approval, "reason", r.Reason)
}

func (s *App) ephemeral(ctx context.Context, channel, user, text string) {
	if channel == "" || user == "" {
		return
	}
	if _, err := s.client().PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false)); err != nil {
		s.Log.Error("slack chat.postEphemeral", "err", err)
	}
}
