package storesql

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reinhq/rein"
)

// KeyColumns are the columns of a key ScanKey reads, in its order.
const KeyColumns = "id, name, tenant, roles, groups_json, secret_hash, created_at, revoked_at"

// ScanKey reads a row of KeyColumns; no row is rein.ErrNotFound.
func ScanKey(row Row) (*rein.Key, error) {
	var k rein.Key
	var roles, groups, created string
	var revoked sql.NullString
	if err := row.Scan(&k.ID, &k.Name, &k.Tenant, &roles, &groups, &k.SecretHash, &created, &revoked); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, rein.ErrNotFound
		}
		return nil, err
	}
	if err := json.Unmarshal([]byte(roles), &k.Roles); err != nil {
		return nil, fmt.Errorf("key %s roles: %w", k.ID, err)
	}
	if err := json.Unmarshal([]byte(groups), &k.Groups); err != nil {
		return nil, fmt.Errorf("key %s groups: %w", k.ID, err)
	}
	k.CreatedAt = ParseTime(created)
	if revoked.Valid {
		t := ParseTime(revoked.String)
		k.RevokedAt = &t
	}
	return &k, nil
}

// KeyNameTaken is the conflict of a new key named like an active key of
// its tenant.
func KeyNameTaken(k *rein.Key) error {
	return rein.Errorf(rein.ECodeConflict, "tenant %q already has a key named %q; pick another name or revoke that key first", k.Tenant, k.Name)
}

// CanRevoke refuses to revoke k when it is the last active admin key of
// tenant "*"; otherAdmins counts the other active admin keys of tenant
// "*".
func CanRevoke(k *rein.Key, otherAdmins int) error {
	if k.Tenant == rein.AllTenants && k.Has(rein.RoleAdmin) && otherAdmins == 0 {
		return rein.Errorf(rein.ECodeConflict, "key %q is the last admin key of tenant \"*\"; create another admin key before revoking it", k.Name)
	}
	return nil
}

// ParseTime reads a stored time (Time); a malformed one is the zero time.
func ParseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}
