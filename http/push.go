package http

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/webpush"
)

// maxPushDevices bounds the devices one person may subscribe.
const maxPushDevices = 10

// pushSubscriptions returns the store's subscriptions and the sender, or a
// conflict naming why Web Push is not offered.
func (s *Server) webPush() (rein.PushSubscriptionStore, *webpush.Sender, error) {
	store := s.PushSubscriptionStore
	if store == nil || s.Push == nil {
		return nil, nil, rein.Errorf(rein.ECodeConflict, "this server sends no Web Push notifications (push.enabled is false)")
	}
	return store, s.Push, nil
}

// pushView is a subscription as its owner sees it: never its keys.
type pushView struct {
	ID        string    `json:"id"`
	Label     string    `json:"label"`
	Endpoint  string    `json:"endpoint"`
	Service   string    `json:"service"`
	CreatedAt time.Time `json:"created_at"`
}

func viewPush(p *rein.PushSubscription) pushView {
	v := pushView{ID: p.ID, Label: p.Label, Endpoint: p.Endpoint, CreatedAt: p.CreatedAt}
	if u, err := url.Parse(p.Endpoint); err == nil {
		v.Service = u.Scheme + "://" + u.Host
	}
	return v
}

// getPush: GET /v1/push, the key browsers subscribe with and the caller's
// own devices.
func (s *Server) getPush(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	store, sender, err := s.webPush()
	if err != nil {
		return err
	}
	list, err := store.PushSubscriptionsOf(r.Context(), key.Tenant, key.Name)
	if err != nil {
		return err
	}
	out := []pushView{}
	for _, p := range list {
		out = append(out, viewPush(p))
	}
	services := sender.Services
	if services == nil {
		services = webpush.Services
	}
	writeJSON(w, http.StatusOK, map[string]any{"public_key": sender.VAPID.PublicKey(), "services": services, "subscriptions": out})
	return nil
}

// addPushSubscription: POST /v1/push/subscriptions with what the browser's
// PushSubscription.toJSON() gives (and a label) subscribes the caller's
// device.
func (s *Server) addPushSubscription(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	store, sender, err := s.webPush()
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req struct {
		Endpoint       string   `json:"endpoint"`
		ExpirationTime *float64 `json:"expirationTime"`
		Keys           struct {
			P256DH string `json:"p256dh"`
			Auth   string `json:"auth"`
		} `json:"keys"`
		Label string `json:"label"`
	}
	if err := rein.DecodeStrict(body, &req, "endpoint, expirationTime, keys {p256dh, auth}, label"); err != nil {
		return err
	}
	if err := sender.Allowed(req.Endpoint); err != nil {
		return rein.Errorf(rein.ECodeBadRequest, "%v", err)
	}
	sub := webpush.Subscription{Endpoint: req.Endpoint, P256DH: req.Keys.P256DH, Auth: req.Keys.Auth}
	if _, _, err := sub.Keys(); err != nil {
		return rein.Errorf(rein.ECodeBadRequest, "%v", err)
	}
	label := strings.TrimSpace(req.Label)
	if label == "" {
		label = "a browser"
	}
	if utf8.RuneCountInString(label) > 80 || strings.ContainsFunc(label, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return rein.Errorf(rein.ECodeBadRequest, "label: at most 80 characters, no control characters")
	}
	mine, err := store.PushSubscriptionsOf(r.Context(), key.Tenant, key.Name)
	if err != nil {
		return err
	}
	again := false
	for _, p := range mine {
		again = again || p.Endpoint == req.Endpoint
	}
	if !again && len(mine) >= maxPushDevices {
		return rein.Errorf(rein.ECodeConflict, "you have %d devices subscribed, the most there may be; remove one (DELETE /v1/push/subscriptions/{id})", len(mine))
	}
	p := &rein.PushSubscription{ID: rein.NewID("push"), Tenant: key.Tenant, Name: key.Name, Endpoint: req.Endpoint,
		P256DH: strings.TrimRight(req.Keys.P256DH, "="), Auth: strings.TrimRight(req.Keys.Auth, "="), Label: label, CreatedAt: s.Now().UTC()}
	v := viewPush(p)
	e := &rein.Entry{TS: p.CreatedAt, Tenant: key.Tenant, Kind: rein.KindPushSubscribed, Actor: key.Name, Subject: p.ID,
		Data: map[string]any{"name": key.Name, "label": label, "service": v.Service}}
	if err := store.SavePushSubscription(r.Context(), p, e); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// removePushSubscription: DELETE /v1/push/subscriptions/{id}, one of the
// caller's own devices.
func (s *Server) removePushSubscription(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	store, _, err := s.webPush()
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	mine, err := store.PushSubscriptionsOf(r.Context(), key.Tenant, key.Name)
	if err != nil {
		return err
	}
	var found *rein.PushSubscription
	for _, p := range mine {
		if p.ID == id {
			found = p
		}
	}
	if found == nil {
		return rein.Errorf(rein.ECodeNotFound, "you have no device subscribed as %q (GET /v1/push lists yours)", id)
	}
	e := &rein.Entry{TS: s.Now().UTC(), Tenant: key.Tenant, Kind: rein.KindPushUnsubscribed, Actor: key.Name, Subject: id,
		Data: map[string]any{"name": key.Name, "label": found.Label}}
	if err := store.RemovePushSubscription(r.Context(), id, e); errors.Is(err, rein.ErrNotFound) {
		return rein.Errorf(rein.ECodeNotFound, "you have no device subscribed as %q", id)
	} else if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// testPush: POST /v1/push/test sends a test notification to each of the
// caller's devices and says which got it.
func (s *Server) testPush(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	store, sender, err := s.webPush()
	if err != nil {
		return err
	}
	mine, err := store.PushSubscriptionsOf(r.Context(), key.Tenant, key.Name)
	if err != nil {
		return err
	}
	payload, _ := json.Marshal(webpush.Payload{Type: "test", ID: "test", Title: "rein: notifications work",
		Body: "New approvals for you will show here.", URL: strings.TrimRight(s.Pipeline.BaseURL, "/") + "/notifications"})
	type result struct {
		ID    string `json:"id"`
		Label string `json:"label"`
		Error string `json:"error,omitempty"`
	}
	sent, failed := []result{}, []result{}
	for _, p := range mine {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		err := sender.Send(ctx, webpush.Subscription{Endpoint: p.Endpoint, P256DH: p.P256DH, Auth: p.Auth},
			webpush.Message{Payload: payload, TTL: time.Minute, Urgency: "normal", Topic: "test"})
		cancel()
		if err != nil {
			failed = append(failed, result{ID: p.ID, Label: p.Label, Error: err.Error()})
			continue
		}
		sent = append(sent, result{ID: p.ID, Label: p.Label})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sent": sent, "failed": failed})
	return nil
}
