#!/usr/bin/env bash
# What queuing reviews after the fact costs the check path: rein serve on
# SQLite with bench/policy.yaml as it is, then with review: on its two
# busiest allow rules sampling 5 % and 100 % of allowed checks, rounds
# alternating; allowed checks only (rein bench --mix allow=100). Prints
# checks/s, latency and the server's CPU per check (from /proc/PID/stat).
# See docs/benchmarks.md ("Reviews after the fact").
#
# Usage: bench/reviews.sh [-c 32] [-d 6s] [-w 2s] [-r 3]
set -euo pipefail
cd "$(dirname "$0")/.."
CONC=32 DUR=6s WARM=2s ROUNDS=3
while getopts "c:d:w:r:h" f; do
  case $f in
    c) CONC=$OPTARG ;; d) DUR=$OPTARG ;; w) WARM=$OPTARG ;; r) ROUNDS=$OPTARG ;;
    *) sed -n '2,9p' "$0"; exit 2 ;;
  esac
done
OUT=$(mktemp -d -t rein-reviews-XXXXXX)
trap 'rm -rf "$OUT"' EXIT
go build -o "$OUT/rein" ./cmd/rein
cp bench/policy.yaml "$OUT/none.yaml"
for share in 0.05 1.0; do
  awk -v share="$share" '{print} /^    decision: allow$/ && (prev ~ /files-read|http-get-https/ || prev2 ~ /files-read|http-get-https/) {print "    review: {sample: " share ", reviewers: [\"role:approver\"]}"} {prev2=prev; prev=$0}' \
    bench/policy.yaml >"$OUT/sample-$share.yaml"
  grep -q "sample: $share" "$OUT/sample-$share.yaml"
done
admin=admin-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=28950
run() { # policy -> one line
  local pol=$1 d pid key c0 c1
  d=$(mktemp -d -p "$OUT")
  REIN_ADMIN_KEY=$admin "$OUT/rein" serve --data "$d" --listen 127.0.0.1:$port --policy "$pol" >"$d/log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.1; done
  key=$(REIN_SERVER=http://127.0.0.1:$port REIN_KEY=$admin "$OUT/rein" keys create bench --role agent --tenant bench --output json |
    sed -n 's/.*"key": *"\([^"]*\)".*/\1/p')
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  REIN_SERVER=http://127.0.0.1:$port REIN_KEY=$key "$OUT/rein" bench --concurrency "$CONC" --duration "$DUR" --warmup "$WARM" \
    --mix allow=100 --output json >"$d/out.json"
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill $pid; wait $pid 2>/dev/null || true
  python3 - "$d/out.json" "$c0" "$c1" "$(sqlite3 "$d/rein.db" 'select count(*) from checks')" \
    "$(sqlite3 "$d/rein.db" 'select count(*) from reviews')" "$(basename "$pol" .yaml)" <<'PY'
import json, os, sys
o = json.load(open(sys.argv[1]))
c0, c1, checks, reviews, name = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
cpu = (c1 - c0) / os.sysconf("SC_CLK_TCK") * 1e6 / checks
print(f"{name:12} {o['throughput']:7.0f} checks/s  p50 {o['latency']['p50_ms']:.1f} ms  p99 {o['latency']['p99_ms']:.1f} ms  "
      f"server CPU {cpu:.0f} µs/check  ({checks} checks, {reviews} reviews)")
PY
  rm -rf "$d"
}
for _ in $(seq "$ROUNDS"); do
  for pol in none sample-0.05 sample-1.0; do run "$OUT/$pol.yaml"; done
done
