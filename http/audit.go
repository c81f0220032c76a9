package http

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/reinhq/rein"
	"github.com/reinhq/rein/audit"
)

// The audit endpoints (auditor, admin). Entries of other tenants appear as
// their index and leaf hash only, except the deployment's entries that
// concern every tenant: server starts, the global policy, signing keys.

func (s *Server) getCheckpoint(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	c, err := s.CheckpointStore.LatestCheckpoint(r.Context())
	if errors.Is(err, rein.ErrNotFound) {
		return rein.Errorf(rein.ECodeUnavailable, "no checkpoint has been signed yet; retry in a second")
	}
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read the checkpoint: %v", err)
	}
	writeText(w, c.Note)
	return nil
}

// listCheckpoints: GET /v1/audit/checkpoints?from=SIZE&to=SIZE, every signed
// checkpoint whose size is in range, separated by blank lines.
func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	from, err := int64Param(r, "from", 0)
	if err != nil {
		return err
	}
	to, err := int64Param(r, "to", 1<<62)
	if err != nil {
		return err
	}
	list, err := s.CheckpointStore.Checkpoints(r.Context(), from, to)
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read checkpoints: %v", err)
	}
	var out []byte
	for i, c := range list {
		if i > 0 {
			out = append(out, '\n')
		}
		out = append(out, c.Note...)
	}
	writeText(w, out)
	return nil
}

func writeText(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}

func int64Param(r *http.Request, name string, def int64) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, rein.Errorf(rein.ECodeBadRequest, "%s must be a number of 0 or more", name)
	}
	return n, nil
}

// visible reports whether key may read an entry in full.
func visible(key *rein.Key, e *rein.StoredEntry) bool {
	if key.Sees(e.Tenant) {
		return true
	}
	if e.Tenant != rein.AllTenants {
		return false
	}
	switch e.Kind {
	case rein.KindServerStarted, rein.KindPolicyUpdated, rein.KindSigningKeyRotated:
		return true
	}
	return false
}

// getEntries: GET /v1/audit/entries?start=N&limit=M (limit at most 10000),
// application/x-ndjson, the exact stored bytes.
func (s *Server) getEntries(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	start, err := int64Param(r, "start", 0)
	if err != nil {
		return err
	}
	limit, err := int64Param(r, "limit", 1000)
	if err != nil || limit < 1 || limit > 10000 {
		return rein.Errorf(rein.ECodeBadRequest, "limit must be a number from 1 to 10000")
	}
	list, err := s.AuditStore.Entries(r.Context(), start, int(limit))
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read entries: %v", err)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	buf := make([]byte, 0, 64*1024)
	for _, e := range list {
		if visible(key, e) {
			buf = append(buf, e.Bytes...)
		} else {
			h := tlog.RecordHash(e.Bytes)
			line, _ := json.Marshal(audit.HiddenLeaf{Index: e.Index, LeafHash: base64.StdEncoding.EncodeToString(h[:])})
			buf = append(buf, line...)
		}
		buf = append(buf, '\n')
		if len(buf) > 48*1024 {
			w.Write(buf)
			buf = buf[:0]
		}
	}
	w.Write(buf)
	return nil
}

// treeSize is the size proofs are made for by default: the latest
// checkpoint's, so that they check against it.
func (s *Server) treeSize(r *http.Request) (int64, error) {
	c, err := s.CheckpointStore.LatestCheckpoint(r.Context())
	if errors.Is(err, rein.ErrNotFound) {
		return 0, rein.Errorf(rein.ECodeUnavailable, "no checkpoint has been signed yet; retry in a second")
	}
	if err != nil {
		return 0, rein.Errorf(rein.ECodeUnavailable, "cannot read the checkpoint: %v", err)
	}
	return c.Size, nil
}

// hashedSize is how far the stored tree reaches.
func (s *Server) hashedSize(r *http.Request) (int64, error) {
	_, hashed, err := s.CheckpointStore.AuditSize(r.Context())
	if err != nil {
		return 0, rein.Errorf(rein.ECodeUnavailable, "cannot read the audit log: %v", err)
	}
	return hashed, nil
}

func (s *Server) hashReader(r *http.Request) tlog.HashReader {
	return tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) { return s.CheckpointStore.ReadHashes(r.Context(), idx) })
}

func b64(hs []tlog.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	return out
}

// getInclusion: GET /v1/audit/proof/inclusion?index=N&size=S.
func (s *Server) getInclusion(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	if r.URL.Query().Get("index") == "" {
		return rein.Errorf(rein.ECodeBadRequest, "index is required: the entry to prove")
	}
	index, err := int64Param(r, "index", 0)
	if err != nil {
		return err
	}
	def, err := s.treeSize(r)
	if err != nil {
		return err
	}
	size, err := int64Param(r, "size", def)
	if err != nil {
		return err
	}
	hashed, err := s.hashedSize(r)
	if err != nil {
		return err
	}
	if index >= size || size > hashed {
		return rein.Errorf(rein.ECodeBadRequest, "need index < size <= %d (the tree's size); got index %d, size %d", hashed, index, size)
	}
	proof, err := tlog.ProveRecord(size, index, s.hashReader(r))
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot prove entry %d: %v", index, err)
	}
	leaf, err := s.CheckpointStore.ReadHashes(r.Context(), []int64{tlog.StoredHashIndex(0, index)})
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read entry %d's leaf hash: %v", index, err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"index": index, "size": size,
		"leaf_hash": base64.StdEncoding.EncodeToString(leaf[0][:]), "hashes": b64(proof)})
	return nil
}

// getConsistency: GET /v1/audit/proof/consistency?old=A&new=B.
func (s *Server) getConsistency(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	if r.URL.Query().Get("old") == "" {
		return rein.Errorf(rein.ECodeBadRequest, "old is required: the size of the older tree")
	}
	old, err := int64Param(r, "old", 0)
	if err != nil {
		return err
	}
	def, err := s.treeSize(r)
	if err != nil {
		return err
	}
	newSize, err := int64Param(r, "new", def)
	if err != nil {
		return err
	}
	hashed, err := s.hashedSize(r)
	if err != nil {
		return err
	}
	if old < 1 || old > newSize || newSize > hashed {
		return rein.Errorf(rein.ECodeBadRequest, "need 1 <= old <= new <= %d (the tree's size); got old %d, new %d", hashed, old, newSize)
	}
	proof, err := tlog.ProveTree(newSize, old, s.hashReader(r))
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot prove consistency: %v", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{"old": old, "new": newSize, "hashes": b64(proof)})
	return nil
}

func (s *Server) getAuditKeys(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	keys, err := s.CheckpointStore.AuditKeys(r.Context())
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read the signing keys: %v", err)
	}
	if keys == nil {
		keys = []*rein.AuditKey{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": keys})
	return nil
}

// rotateKey: POST /v1/audit/rotate-key (admin of tenant "*").
func (s *Server) rotateKey(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	if key.Tenant != rein.AllTenants {
		return rein.Errorf(rein.ECodeForbidden, "key %q is an admin of tenant %q; rotating the deployment's signing key needs an admin of tenant *", key.Name, key.Tenant)
	}
	if s.RotateKey == nil {
		return rein.Errorf(rein.ECodeConflict, "this server does not rotate its signing key")
	}
	k, err := s.RotateKey(r.Context(), key.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, k)
	return nil
}

// getReceipt: GET /v1/audit/receipts/{index}, the entry's receipt: a C2SP
// tlog-proof (text/plain) with the entry, its inclusion proof and the
// latest signed checkpoint. Only for entries the key may read in full.
func (s *Server) getReceipt(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	index, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if err != nil || index < 0 {
		return rein.Errorf(rein.ECodeBadRequest, "the index must be a number of 0 or more")
	}
	return s.writeReceipt(w, r, key, index)
}

// getCheckReceipt: GET /v1/checks/{id}/receipt, the receipt of the check's
// audit entry (its audit_index), for whoever may read the check.
func (s *Server) getCheckReceipt(w http.ResponseWriter, r *http.Request, key *rein.Key) error {
	rec, err := s.CheckStore.CheckByID(r.Context(), r.PathValue("id"))
	if errors.Is(err, rein.ErrNotFound) || (err == nil && !canSeeCheck(key, rec)) {
		return rein.Errorf(rein.ECodeNotFound, "no check %q in your tenant", r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	return s.writeReceipt(w, r, key, rec.AuditIndex)
}

func (s *Server) writeReceipt(w http.ResponseWriter, r *http.Request, key *rein.Key, index int64) error {
	cp, err := s.CheckpointStore.LatestCheckpoint(r.Context())
	if errors.Is(err, rein.ErrNotFound) {
		return rein.Errorf(rein.ECodeUnavailable, "no checkpoint has been signed yet; retry in a second")
	}
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read the checkpoint: %v", err)
	}
	list, err := s.AuditStore.Entries(r.Context(), index, 1)
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot read entry %d: %v", index, err)
	}
	if len(list) == 0 || list[0].Index != index || !visible(key, list[0]) {
		return rein.Errorf(rein.ECodeNotFound, "no audit entry %d that your key may read", index)
	}
	if index >= cp.Size {
		return rein.Errorf(rein.ECodeUnavailable, "entry %d is not covered by a signed checkpoint yet (size %d); retry in a second", index, cp.Size)
	}
	proof, err := tlog.ProveRecord(cp.Size, index, s.hashReader(r))
	if err != nil {
		return rein.Errorf(rein.ECodeUnavailable, "cannot prove entry %d: %v", index, err)
	}
	rc := audit.Receipt{Entry: list[0].Bytes, Index: index, Proof: proof, Checkpoint: cp.Note}
	writeText(w, rc.Format())
	return nil
}
