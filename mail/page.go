package mail

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/approval"
	"github.com/reinhq/rein/notify"
)

const csrfCookie = "rein_link"

// page is the link page (parsed on first use, not at every start of
// rein): the approval, its risk and rule, its arguments as
// the e-mail shows them (layout), and while the link can vote the Reject
// button and, when the whole action is shown, the Approve button. Values
// are escaped by html/template, and their hidden characters written out.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("link").Funcs(template.FuncMap{"visible": notify.Visible}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>{{.Title}} · rein</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
pre{background:#f4f4f4;padding:.75rem;overflow:auto;white-space:pre-wrap;word-break:break-all}button{font-size:1.1rem;padding:.6rem 1.4rem;margin-right:.5rem}
h2{font-size:1rem;margin:1rem 0 .25rem}.warn{background:#fff4d6;padding:.5rem .75rem}
.approve{background:#1a7f37;color:#fff;border:0}.reject{background:#cf222e;color:#fff;border:0}.note{color:#555}</style></head>
<body><h1>{{.Title}}</h1>
{{with .A}}<p><strong>{{visible .Agent}}</strong> wants to run <code>{{$.Shown.Tool}}</code> (session {{visible .Session}}).</p>
<p>{{.Reason}}</p><p class="note">Rule {{.Rule}} · approval {{.ID}}</p>
<p id="risk">Risk: {{range $i, $t := .Risk}}{{if $i}}, {{end}}<code>{{$t}}</code>{{else}}none derived from the arguments{{end}}</p>{{end}}
{{if .Stale}}<p id="stale" class="warn"><strong>The action changed: your vote was not counted.</strong> It was edited after this page showed it to you.
Below is the current version (revision {{.A.Revision}}): read it, then approve or reject it.</p>{{end}}
{{with .A}}{{if gt .Revision 1}}<div id="edited" class="warn"><p><strong>Edited by {{visible $.Editor}}</strong>: this is revision {{.Revision}} of the action, not the agent's request.
Changed from the agent's request:</p><ul>{{range $.Changes}}<li><code>{{.}}</code></li>{{else}}<li>nothing: the edit is the agent's request again</li>{{end}}</ul></div>{{end}}
<h2 id="will-run">Will run (revision {{.Revision}}{{if gt .Revision 1}}, as edited{{end}})</h2>{{end}}
{{with .Shown}}{{if not .Full}}<p id="too-long" class="warn">The arguments are too long to show here: {{.Size}} bytes.
This page cannot approve them: open the approval in the console to read them in full and decide there. Below is the start of each argument, the ones that carry risk first.</p>{{end}}
<div id="args">{{range .Fields}}<h2>{{if .Name}}<code>{{.Name}}</code>{{else}}Arguments{{end}}{{if .Risky}} · carries risk{{end}}</h2>
<pre>{{.Value}}</pre>{{if .Cut}}<p class="note">Cut here: {{.Cut}} more bytes.</p>{{end}}{{end}}
{{if .More}}<p class="note">… and {{.More}} more arguments, not shown here.</p>{{end}}</div>{{end}}
<p id="status">{{.Status}}</p>
{{if and .Form .StepUp}}<p id="step-up" class="warn">Approving this needs a passkey confirmation, which only the console takes:
<a href="{{.Console}}"><strong>Confirm in rein</strong></a>. Rejecting needs none and works from here.</p>{{end}}
{{if .Form}}<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<input type="hidden" name="revision" value="{{.A.Revision}}">
<p class="note">You decide as {{.Who}}, on revision {{.A.Revision}} of the action as shown above.</p>
{{if .Approve}}<button class="approve" name="vote" value="approve" type="submit">Approve</button>
{{end}}<button class="reject" name="vote" value="reject" type="submit">Reject</button>
</form>{{end}}
{{if .Console}}<p><a href="{{.Console}}">Open in the console</a></p>{{end}}
</body></html>
`))
})

type view struct {
	Title, Status, Action, CSRF, Who, Console string
	A                                         *rein.Approval
	Shown                                     *shown
	Form, Approve, StepUp                     bool
	// Stale: the vote posted was for a revision no longer current; the
	// page shows the current one to vote on again.
	Stale bool
	// Editor and Changes say who edited the action and what changed from
	// the agent's request (an approval whose revision is 2 or more).
	Editor  string
	Changes []string
}

// version fills in what the page says of the approval's current revision.
func (v view) version() view {
	if v.A != nil && v.A.Revision > 1 {
		v.Editor, v.Changes = editor(v.A), notify.ChangeLines(v.A)
	}
	return v
}

// approvable says whether a link may approve a: a link that may only
// reject cannot, nor can any link when its e-mail could not show the whole
// action or the approval needs step-up (decided again here, for links sent
// before as well).
func (m *Mailer) approvable(l Link, a *rein.Approval) (bool, string) {
	if a.StepUp {
		return false, fmt.Sprintf("this approval needs step-up: an approving vote counts only when confirmed with a passkey; confirm it in the console at %s", m.console(a))
	}
	if l.Only != "" && l.Only != approval.Approve {
		return false, "the link can only " + l.Only + ": its e-mail could not show the whole action"
	}
	if show := layout(a, m.tools(a)); !show.Full {
		return false, fmt.Sprintf("the e-mail cannot show the whole action (%d bytes of arguments); approve it in the rein console, where it is shown in full", show.Size)
	}
	return true, ""
}

// ServeHTTP answers GET and POST /approve/{token}.
func (m *Mailer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	token := strings.TrimPrefix(r.URL.Path, "/approve/")
	ctx := r.Context()
	l, key, a, code, reason := m.resolve(ctx, w, r, token)
	if reason != "" {
		// A made-up token can be sent by anyone: those refusals are
		// rate-limited in the audit log (counted, not lost).
		lim := &m.linked
		if l.Nonce == "" {
			lim = &m.forged
		}
		if ok, n := lim.Take(m.now()); ok {
			m.refuseN(ctx, l, reason, n)
		}
		m.render(w, code, view{Title: "This link cannot be used", Status: reason})
		return
	}
	console := m.console(a)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		// Showing changes nothing; the vote needs the POST below.
		cookie := randomToken()
		if c, err := r.Cookie(csrfCookie); err == nil && c.Value != "" {
			cookie = c.Value
		}
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: cookie, Path: "/approve/", HttpOnly: true,
			Secure: strings.HasPrefix(m.BaseURL, "https://"), SameSite: http.SameSiteStrictMode, MaxAge: int(m.Config.LinkTTL.Seconds())})
		show := layout(a, m.tools(a))
		can, _ := m.approvable(l, a)
		m.render(w, http.StatusOK, view{Title: "Approval needed", A: a, Shown: &show, Status: notify.Progress(a),
			Form: a.Status == rein.StatusPending, Approve: can, StepUp: a.StepUp, Action: "/approve/" + token, CSRF: csrf(m.Secret, token, cookie), Who: key.Name, Console: console})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		c, err := r.Cookie(csrfCookie)
		if err != nil || c.Value == "" || r.PostFormValue("csrf") != csrf(m.Secret, token, c.Value) || !m.sameOrigin(r) {
			m.refuse(ctx, l, "the confirmation did not come from the link's own page (CSRF check failed)")
			m.render(w, http.StatusForbidden, view{Title: "This link cannot be used", Status: "Open the link from your e-mail again and confirm there."})
			return
		}
		kind := r.PostFormValue("vote")
		show := layout(a, m.tools(a))
		if kind != approval.Approve && kind != approval.Reject {
			m.render(w, http.StatusBadRequest, view{Title: "Choose Approve or Reject", A: a, Shown: &show})
			return
		}
		if kind == approval.Approve {
			if ok, reason := m.approvable(l, a); !ok {
				// The link stays usable: rejecting is always safe.
				m.refuse(ctx, l, reason)
				m.render(w, http.StatusForbidden, view{Title: "Your vote was refused", Status: reason, Console: console})
				return
			}
		}
		if !m.use(l) {
			m.refuse(ctx, l, "the link was used already")
			m.render(w, http.StatusGone, view{Title: "This link cannot be used", Status: "the link was used already"})
			return
		}
		// The page embeds the revision it showed: the vote is for that one.
		rev, _ := strconv.Atoi(r.PostFormValue("revision"))
		got, err := m.Pipeline.Cast(ctx, key, a.ID, approval.Ballot{Kind: kind, Message: "via e-mail link", Revision: max(rev, 0)})
		var re *rein.Error
		if errors.As(err, &re) && re.Code == rein.ECodeStaleRevision {
			// Nothing was counted: the link stays usable, and the page
			// shows the version that is current now, to vote on again.
			m.unuse(l)
			m.refuse(ctx, l, err.Error())
			cur, ok := re.Details.(*rein.Approval)
			if !ok {
				cur, _ = m.Pipeline.Approval(ctx, key, a.ID)
			}
			if cur == nil || cur.Status != rein.StatusPending {
				m.render(w, http.StatusConflict, view{Title: "The action changed: your vote was not counted", Status: rein.ErrorMessage(err), Console: console})
				return
			}
			curShown := layout(cur, m.tools(cur))
			can, _ := m.approvable(l, cur)
			m.render(w, http.StatusConflict, view{Title: "The action changed: your vote was not counted", A: cur, Shown: &curShown, Stale: true,
				Status: notify.Progress(cur), Form: true, Approve: can, StepUp: cur.StepUp, Action: "/approve/" + token,
				CSRF: r.PostFormValue("csrf"), Who: key.Name, Console: console})
			return
		}
		if err != nil {
			m.refuse(ctx, l, err.Error())
			m.render(w, http.StatusForbidden, view{Title: "Your vote was refused", Status: rein.ErrorMessage(err), Console: console})
			return
		}
		shownGot := layout(got, m.tools(got))
		m.render(w, http.StatusOK, view{Title: "Thank you: your vote counts", A: got, Shown: &shownGot,
			Status: "You voted " + kind + ". " + notify.Progress(got), Console: console})
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "use GET to see the approval and POST to vote", http.StatusMethodNotAllowed)
	}
}

// resolve checks a link and everything it is bound to. A non-empty reason
// refuses it, with the status to answer.
func (m *Mailer) resolve(ctx context.Context, w http.ResponseWriter, r *http.Request, token string) (Link, *rein.Key, *rein.Approval, int, string) {
	l, err := open(m.Secret, token, m.now())
	if errors.Is(err, ErrLinkForged) {
		return Link{}, nil, nil, http.StatusForbidden, err.Error()
	}
	if err != nil {
		return l, nil, nil, http.StatusGone, err.Error()
	}
	if m.spent(l) {
		return l, nil, nil, http.StatusGone, "the link was used already"
	}
	key, err := notify.KeyOf(ctx, m.Store, notify.Identity{Tenant: l.Tenant, Key: l.Key})
	if err != nil || key.ID != l.KeyID {
		return l, nil, nil, http.StatusForbidden, "the approver's key changed or was revoked since the link was sent"
	}
	if m.Session != nil {
		if signed, ok := m.Session(w, r); ok && signed.ID != key.ID {
			return l, nil, nil, http.StatusForbidden, "the link is for another approver (" + key.Name + "), and " + signed.Name + " is signed in"
		}
	}
	a, err := m.Pipeline.Approval(ctx, key, l.Approval)
	if err != nil {
		return l, nil, nil, http.StatusNotFound, rein.ErrorMessage(err)
	}
	if a.ActionHash != l.ActionHash {
		return l, nil, nil, http.StatusForbidden, "the approval is no longer about the action the link was made for"
	}
	if a.Status != rein.StatusPending {
		return l, key, a, http.StatusConflict, "the approval is " + a.Status + "; nothing is left to decide"
	}
	return l, key, a, 0, ""
}

// sameOrigin refuses a POST whose Origin header names another site. A
// browser sends "null" for a page with referrer policy no-referrer, as the
// link page is; the CSRF token bound to the SameSite cookie is what proves
// the form is the link page's own.
func (m *Mailer) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return true
	}
	u, err := url.Parse(m.BaseURL)
	return err == nil && o == u.Scheme+"://"+u.Host
}

// spent reports whether the link was used; use marks it, once.
func (m *Mailer) spent(l Link) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.used[l.Nonce]
	return ok
}

func (m *Mailer) use(l Link) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used == nil {
		m.used = map[string]int64{}
	}
	now := m.now().Unix()
	for n, exp := range m.used {
		if exp < now {
			delete(m.used, n) // expired links are refused by their expiry
		}
	}
	if _, ok := m.used[l.Nonce]; ok {
		return false
	}
	m.used[l.Nonce] = l.Expires
	return true
}

// unuse makes a link usable again after a vote that was not counted
// because the action changed under it.
func (m *Mailer) unuse(l Link) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.used, l.Nonce)
}

func (m *Mailer) refuse(ctx context.Context, l Link, reason string) { m.refuseN(ctx, l, reason, 0) }

func (m *Mailer) refuseN(ctx context.Context, l Link, reason string, suppressed int) {
	actor := "unknown"
	if l.Key != "" {
		actor = l.Key
	}
	if err := notify.Refuse(ctx, m.Store, notify.Refusal{Tenant: l.Tenant, Actor: actor, Approval: l.Approval, Channel: "email", Reason: reason, Suppressed: suppressed}, m.now()); err != nil {
		m.Log.Error("audit a refused e-mail link", "err", err)
	}
	m.Log.Warn("e-mail link refused", "actor", actor, "approval", l.Approval, "reason", reason)
}

// console is the approval's page in the console.
func (m *Mailer) console(a *rein.Approval) string {
	return m.BaseURL + "/approvals/" + url.PathEscape(a.ID)
}

func (m *Mailer) render(w http.ResponseWriter, code int, v view) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	page().Execute(w, v.version())
}

func randomToken() string {
	var b [18]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
