package http

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/events"
)

// getEvents: GET /v1/events, Server-Sent Events. Each event is
// "id: N", "event: TYPE", "data: {json}". Last-Event-ID (header, or
// ?last_event_id=) resumes after that event, from the last 10,000 held;
// ?types=a,b keeps only those types; ?tenant= narrows a key of tenant "*"
// to one tenant. A key sees its own tenant's events
// (events.Event.For); only keys of tenant "*" see every tenant's. A
// comment line every 15 s keeps proxies from closing an idle stream.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	if s.Events == nil {
		return rein.Errorf(rein.ECodeUnavailable, "this server has no event stream")
	}
	q := r.URL.Query()
	var types []string
	if v := q.Get("types"); v != "" {
		for _, t := range strings.Split(v, ",") {
			if !slices.Contains(events.Types, t) {
				return rein.Errorf(rein.ECodeBadRequest, "event type %q is not one of %s", t, strings.Join(events.Types, ", "))
			}
			types = append(types, t)
		}
	}
	last := s.Events.Last()
	from := r.Header.Get("Last-Event-ID")
	if from == "" {
		from = q.Get("last_event_id")
	}
	if from != "" {
		n, err := strconv.ParseInt(from, 10, 64)
		if err != nil || n < 0 {
			return rein.Errorf(rein.ECodeBadRequest, "Last-Event-ID must be the id of an event received earlier")
		}
		last = n
	}
	// ?tenant= narrows a tenant-* key to one tenant; any other key may
	// name only its own (403 otherwise, as everywhere).
	tenant, err := s.tenantParam(key, q.Get("tenant"))
	if err != nil {
		return err
	}
	keep := func(e *events.Event) bool {
		return e.For(key.Tenant) && e.For(tenant) && (types == nil || slices.Contains(types, e.Type))
	}
	ch := s.Events.Watch()
	defer s.Events.Unwatch(ch)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": rein event stream\n\n")
	rc.Flush()
	every := s.Heartbeat
	if every <= 0 {
		every = 15 * time.Second
	}
	heartbeat := time.NewTicker(every)
	defer heartbeat.Stop()
	for {
		list, _ := s.Events.Since(last, keep)
		for _, e := range list {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, e.Data)
			last = e.ID
		}
		if len(list) > 0 {
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-s.stopping():
			return nil
		case <-ch:
		case <-heartbeat.C:
			if !s.stillAuthorized(r, key) {
				return nil // the key was revoked, or the console session ended
			}
			fmt.Fprint(w, ": keep-alive\n\n")
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
	}
}

// getDeliveries: GET /v1/webhooks/deliveries?limit= (admin of tenant *):
// the webhook delivery log, newest first.
func (s *Server) getDeliveries(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	if key.Tenant != rein.AllTenants {
		return rein.Errorf(rein.ECodeForbidden, "the webhook delivery log belongs to the deployment: it needs an admin of tenant *")
	}
	limit, err := listLimit(r.URL.Query().Get("limit"))
	if err != nil {
		return err
	}
	list, err := s.DeliveryStore.Deliveries(r.Context(), limit)
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read the delivery log: %v", err)
	}
	if list == nil {
		list = []*rein.WebhookDelivery{}
	}
	writeJSON(w, http.StatusOK, list)
	return nil
}

// stillAuthorized checks a long-lived stream's credentials again: a
// revoked key, or an ended console session, ends the stream.
func (s *Server) stillAuthorized(r *http.Request, key *rein.Key) bool {
	if r.Header.Get("Authorization") == "" && s.Sessions != nil {
		k, ok, err := s.Sessions.Authenticate(headerSink{}, r)
		return ok && err == nil && k.ID == key.ID
	}
	k, err := s.KeyStore.KeyByID(r.Context(), key.ID)
	return err == nil && k.RevokedAt == nil
}

// headerSink takes the headers (a renewed session cookie) that a stream
// already under way can no longer send.
type headerSink struct{}

func (headerSink) Header() http.Header         { return http.Header{} }
func (headerSink) Write(b []byte) (int, error) { return len(b), nil }
func (headerSink) WriteHeader(int)             {}
