#!/usr/bin/env python3
"""WAL pages written per check by rein's SQLite schema, by batch size.

Copies a rein database (one a `rein bench` run left: it holds the schema and
real rows) and appends checks to the copy the way rein's writer does: per
check an audit entry, a check row (with its indexes) and its session's row
updated, in sessions picked at random among the 64 with the most checks, BATCH checks per transaction.
It reports the WAL frames (one page each) written per check, then how many
of them each part costs (the difference when that part is left out).
SQLite's page logic is the same in every build, so this counts what
rein's pure-Go SQLite writes too; the numbers do not depend on the
machine's load.

Usage: bench/walframes.py PATH/TO/rein.db   (stop the server first)
"""
import os
import random
import shutil
import sqlite3
import sys
import tempfile

PARTS = ["entry", "check", "session", "checks_session", "checks_recent"]


def frames_per_check(src, batch, commits, skip=()):
    tmp = tempfile.mkdtemp()
    dst = os.path.join(tmp, "copy.db")
    shutil.copy(src, dst)
    db = sqlite3.connect(dst, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("PRAGMA synchronous=OFF")
    for index in ("checks_session", "checks_recent"):
        if index in skip:
            db.execute("DROP INDEX " + index)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cols = [d[0] for d in db.execute("SELECT * FROM checks LIMIT 1").description]
    check = db.execute("SELECT * FROM checks ORDER BY id DESC LIMIT 1").fetchone()
    entry = db.execute("SELECT tenant, kind, body FROM audit_entries WHERE kind = 'check' LIMIT 1").fetchone()
    # The 64 sessions with the most checks: long-running agents, whose
    # index ranges are as wide as the run made them.
    tenant, session_record = db.execute("SELECT tenant, record FROM sessions LIMIT 1").fetchone()
    sessions = [r[0] for r in db.execute("SELECT session FROM checks WHERE tenant = ? GROUP BY session ORDER BY COUNT(*) DESC LIMIT 64", (tenant,))]
    idx = db.execute("SELECT MAX(idx) FROM audit_entries").fetchone()[0] + 1
    before = os.path.getsize(dst + "-wal")
    n = 0
    for _ in range(commits):
        db.execute("BEGIN IMMEDIATE")
        for _ in range(batch):
            n += 1
            row = dict(zip(cols, check))
            row.update(id="chk_~%024d" % n, tenant=tenant, audit_index=idx, session=random.choice(sessions),
                       action_hash="sha256:%064x" % random.getrandbits(256), request_id=None)
            if "entry" not in skip:
                db.execute("INSERT INTO audit_entries (idx, tenant, kind, body) VALUES (?, ?, ?, ?)", (idx,) + tuple(entry))
            idx += 1
            if "check" not in skip:
                db.execute("INSERT INTO checks (%s) VALUES (%s)" % (",".join(cols), ",".join("?" * len(cols))), [row[c] for c in cols])
            if "session" not in skip:
                db.execute("UPDATE sessions SET record = ? WHERE tenant = ? AND id = ?", (session_record, tenant, row["session"]))
        db.execute("COMMIT")
    frames = (os.path.getsize(dst + "-wal") - before) / (db.execute("PRAGMA page_size").fetchone()[0] + 24)
    db.close()
    shutil.rmtree(tmp)
    return frames / n


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    random.seed(1)
    print("| checks per commit | WAL pages per check | " + " | ".join(PARTS) + " |")
    print("|---:|---:|" + "---:|" * len(PARTS))
    for batch in (1, 4, 16, 64):
        commits = max(40, 1200 // batch)
        all_ = frames_per_check(sys.argv[1], batch, commits)
        parts = [all_ - frames_per_check(sys.argv[1], batch, commits, (p,)) for p in PARTS]
        print("| %d | %.2f | %s |" % (batch, all_, " | ".join("%.2f" % p for p in parts)))


if __name__ == "__main__":
    main()
