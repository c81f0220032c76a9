package storesql

import (
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein"
)

func TestScanKey(t *testing.T) {
	row := fakeRow{cols: []any{"k1", "ci", "acme", `["agent"]`, `["ops"]`, "hash", "2026-01-02T03:04:05.000000006Z",
		sql.NullString{String: "2026-02-03T04:05:06.000000000Z", Valid: true}}}
	k, err := ScanKey(row)
	if err != nil {
		t.Fatal(err)
	}
	revoked := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	if k.ID != "k1" || k.Name != "ci" || k.Tenant != "acme" || len(k.Roles) != 1 || k.Roles[0] != "agent" || len(k.Groups) != 1 ||
		k.SecretHash != "hash" || !k.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)) || k.RevokedAt == nil || !k.RevokedAt.Equal(revoked) {
		t.Fatalf("scanned %+v", k)
	}
	row.cols[7] = sql.NullString{}
	if k, err := ScanKey(row); err != nil || k.RevokedAt != nil {
		t.Fatalf("active key: %+v %v", k, err)
	}
	row.cols[3] = `not json`
	if _, err := ScanKey(row); err == nil {
		t.Fatal("malformed roles accepted")
	}
	if _, err := ScanKey(fakeRow{err: pgx.ErrNoRows}); !errors.Is(err, rein.ErrNotFound) {
		t.Fatalf("no row: %v, want ErrNotFound", err)
	}
}

func TestCanRevoke(t *testing.T) {
	admin := &rein.Key{Name: "root", Tenant: rein.AllTenants, Roles: []rein.Role{rein.RoleAdmin}}
	if err := CanRevoke(admin, 0); err == nil {
		t.Fatal("the last admin key of tenant * revoked")
	}
	if err := CanRevoke(admin, 1); err != nil {
		t.Fatalf("an admin key with another one refused: %v", err)
	}
	if err := CanRevoke(&rein.Key{Tenant: "acme", Roles: []rein.Role{rein.RoleAdmin}}, 0); err != nil {
		t.Fatalf("a tenant's admin key refused: %v", err)
	}
	if err := CanRevoke(&rein.Key{Tenant: rein.AllTenants, Roles: []rein.Role{"agent"}}, 0); err != nil {
		t.Fatalf("a non-admin key of tenant * refused: %v", err)
	}
}
