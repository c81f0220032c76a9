package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Replicas tell each other about changes through one NOTIFY channel per
// schema: Notify sends a payload to every process using the schema (this
// one included), and Subscribe receives them. Notifications are sent when
// the sending transaction commits and are not kept: a process that was
// disconnected receives Resync once it listens again, and must reload what
// it keeps in memory.

// Resync is delivered to subscribers when the listener (re)connects:
// notifications may have been missed.
const Resync = ""

type subscribers struct {
	mu  sync.Mutex
	fns []func(string)
}

func (s *subscribers) deliver(payload string) {
	s.mu.Lock()
	fns := append([]func(string){}, s.fns...)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(payload)
	}
}

// Subscribe calls fn with the payload of every notification (from any
// replica, this one included), in the listener's goroutine: fn must not
// block.
func (db *DB) Subscribe(fn func(payload string)) {
	db.subs.mu.Lock()
	db.subs.fns = append(db.subs.fns, fn)
	db.subs.mu.Unlock()
}

// maxPayload is what one NOTIFY carries (8000 bytes, with room to spare);
// longer payloads are spilled to a table and the notification names the row.
const maxPayload = 7900

const spillPrefix = "\x00spill:"

// Notify sends payloads to every replica, in order, in one round trip.
func (db *DB) Notify(ctx context.Context, payloads ...string) error {
	if len(payloads) == 0 {
		return nil
	}
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		out := make([]string, len(payloads))
		for i, p := range payloads {
			out[i] = p
			if len(p) > maxPayload {
				var id int64
				if err := tx.QueryRow(ctx, "INSERT INTO notify_spill (payload) VALUES ($1) RETURNING id", p).Scan(&id); err != nil {
					return err
				}
				out[i] = spillPrefix + strconv.FormatInt(id, 10)
			}
		}
		_, err := tx.Exec(ctx, "SELECT pg_notify($1, p) FROM unnest($2::text[]) WITH ORDINALITY AS x(p, n) ORDER BY n", db.chChange, out)
		return err
	})
}

// received turns a notification's payload back into what was sent.
func (db *DB) received(ctx context.Context, conn *pgx.Conn, payload string) (string, bool) {
	id, ok := strings.CutPrefix(payload, spillPrefix)
	if !ok {
		return payload, true
	}
	var p string
	if err := conn.QueryRow(ctx, "SELECT payload FROM notify_spill WHERE id = $1", id).Scan(&p); err != nil {
		db.log.Warn("a long notification could not be read", "id", id, "err", err)
		return "", false
	}
	return p, true
}

// trimSpill removes spilled notifications every replica has had time to read.
func (db *DB) trimSpill(ctx context.Context) {
	db.pool.Exec(ctx, "DELETE FROM notify_spill WHERE at < now() - interval '5 minutes'")
}
