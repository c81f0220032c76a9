#!/usr/bin/env bash
# Side-by-side benchmark: rein (durable, signed audit entry per decision) on
# SQLite, and on PostgreSQL when this build supports it, against Open Policy
# Agent deciding the same checks with bench/policy.rego. The same load
# generator (rein bench), the same request mix and the same concurrency drive
# every server; resident memory is read from /proc/PID/status idle and under
# load, CPU time from /proc/PID/stat. Results: a table on stdout, every run in
# $OUT/runs.tsv. See docs/benchmarks.md.
#
# Usage: bench/compare.sh [-c "16 64 256"] [-d 15s] [-w 3s] [-r 3] [-o DIR]
#   -c  concurrencies to measure (default "64"); N@R is N agents offering a
#       fixed load of R checks/s (rein bench --rate): CPU per check at the
#       same load, where saturation also compares how full each batch gets
#   -d  measured time per run (default 15s)    -w  warm-up per run (default 3s)
#   -r  rounds: each round runs every server once per concurrency (default 3)
#   -o  working directory (default: a new temporary directory)
# Environment: OPA_VERSION (default v1.22.0), OPA (an opa binary to use
# instead of building one), PG_URL (default
# postgres://postgres@127.0.0.1:5432/rein_bench?sslmode=disable).
# The servers listen on free ports of 127.0.0.1 from 28750 up.
set -euo pipefail
cd "$(dirname "$0")/.."

CONC="64" DUR=15s WARM=3s ROUNDS=3 OUT=""
while getopts "c:d:w:r:o:h" f; do
  case $f in
    c) CONC=$OPTARG ;; d) DUR=$OPTARG ;; w) WARM=$OPTARG ;; r) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
  esac
done
OPA_VERSION=${OPA_VERSION:-v1.22.0}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432/rein_bench?sslmode=disable}
# free_port N -> the first port from N up where nothing listens
free_port() {
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}
OUT=${OUT:-$(mktemp -d -t rein-compare-XXXXXX)}
mkdir -p "$OUT"
echo "working in $OUT"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# --- build ---------------------------------------------------------------------
echo "building rein"
go build -o "$OUT/rein" ./cmd/rein
REIN="$OUT/rein"
if [ -z "${OPA:-}" ]; then
  OPA="$OUT/opa"
  if [ ! -x "$OPA" ]; then
    echo "building Open Policy Agent $OPA_VERSION (go install; takes a few minutes the first time)"
    # Offline, the module cache serves as the proxy (it holds OPA once it
    # has been built here before).
    GOBIN="$OUT" GOFLAGS=-buildvcs=false go install "github.com/open-policy-agent/opa@$OPA_VERSION" ||
      GOBIN="$OUT" GOFLAGS=-buildvcs=false GOSUMDB=off GOPROXY="file://$(go env GOMODCACHE)/cache/download" \
        go install "github.com/open-policy-agent/opa@$OPA_VERSION"
  fi
fi
"$OPA" version | sed -n 1p

# --- helpers -------------------------------------------------------------------
# rss PID -> "VmRSS VmHWM" in MiB
rss() { awk '/^VmRSS/{r=$2} /^VmHWM/{h=$2} END{printf "%.1f %.1f", r/1024, h/1024}' "/proc/$1/status"; }
# rss_split PID -> "RssAnon RssFile" in MiB: memory of the process's own
# (heap, stacks, caches) and pages of its binary and files mapped in (shared
# with the page cache, given back under memory pressure)
rss_split() { awk '/^RssAnon/{a=$2} /^RssFile/{f=$2} END{printf "%.1f %.1f", a/1024, f/1024}' "/proc/$1/status"; }
# cpu PID -> user+system clock ticks
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
# pg_cpu -> clock ticks used by the PostgreSQL backends serving rein_bench
pg_cpu() {
  local t=0 p
  for p in $(ps -u postgres -o pid=,args= 2>/dev/null | awk '/ rein_bench /{print $1}'); do
    t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
# PostgreSQL is shared with the test suite, whose tests that restart it take
# this lock exclusively: the PostgreSQL runs take it shared, and wait.
PG_LOCK="${TMPDIR:-/tmp}/rein-test-postgres.lock"
pg_hold() { exec 9>>"$PG_LOCK"; flock -s 9; }
pg_release() { flock -u 9; exec 9>&-; }
json() { sed -n "0,/\"$1\": /s/.*\"$1\": \(-\?[0-9.]*\).*/\1/p" "$2"; }

wait_ready() { # URL PID
  for _ in $(seq 1 100); do
    kill -0 "$2" 2>/dev/null || { echo "the server for $1 exited" >&2; return 1; }
    curl -fs -o /dev/null "$1" && return 0
    sleep 0.1
  done
  echo "server at $1 did not become ready" >&2; return 1
}

start_rein() { # NAME PORT [serve flags...]
  local name=$1 port=$2; shift 2
  rm -rf "$OUT/$name"; mkdir -p "$OUT/$name"
  env ${SERVE_ENV:-} "$REIN" serve --data "$OUT/$name/data" --listen "127.0.0.1:$port" --policy bench/policy.yaml "$@" \
    >"$OUT/$name/serve.out" 2>"$OUT/$name/serve.log" &
  local pid=$!
  PIDS+=("$pid")
  wait_ready "http://127.0.0.1:$port/readyz" "$pid" || { tail -n3 "$OUT/$name/serve.log" >&2; return 1; }
  local admin
  admin=$(cat "$OUT/$name/data/admin.key")
  REIN_SERVER="http://127.0.0.1:$port" REIN_KEY="$admin" "$REIN" keys create bench --role agent --tenant bench --output json \
    | sed -n 's/.*"key": "\(rein_[A-Za-z0-9]*\)".*/\1/p' >"$OUT/$name/agent.key"
  echo "$pid" >"$OUT/$name/pid"
}

# --- servers -------------------------------------------------------------------
TARGETS=()
REIN_PORT=$(free_port 28750)
echo "starting rein on SQLite (127.0.0.1:$REIN_PORT)"
start_rein rein-sqlite "$REIN_PORT"
TARGETS+=(rein-sqlite)

# PostgreSQL: one replica on the database PG_URL names (created afresh), with
# a checkpoint signing key of its own (replicas share one: REIN_AUDIT_KEY).
PG_ADMIN_URL="${PG_URL%/*}/postgres?sslmode=disable"
if command -v psql >/dev/null && psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS rein_bench" -c "CREATE DATABASE rein_bench" >/dev/null 2>"$OUT/pg-create.err"; then
  PG_PORT=$(free_port $((REIN_PORT + 1)))
  echo "starting rein on PostgreSQL (127.0.0.1:$PG_PORT)"
  "$REIN" audit keygen >"$OUT/audit.key" 2>/dev/null
  if SERVE_ENV="REIN_AUDIT_KEY=$(cat "$OUT/audit.key")" start_rein rein-postgres "$PG_PORT" --db "$PG_URL" 2>"$OUT/pg-start.err"; then
    TARGETS+=(rein-postgres)
  else
    echo "rein on PostgreSQL: not measured: $(tail -n1 "$OUT/pg-start.err")"
  fi
else
  echo "rein on PostgreSQL: not measured: cannot create the database rein_bench at $PG_ADMIN_URL: $(tail -n1 "$OUT/pg-create.err" 2>/dev/null)"
fi

OPA_PORT=$(free_port 28781)
echo "starting Open Policy Agent (127.0.0.1:$OPA_PORT)"
mkdir -p "$OUT/opa-server"
"$OPA" run --server --addr "127.0.0.1:$OPA_PORT" --log-level error bench/policy.rego \
  >"$OUT/opa-server/out" 2>&1 &
PIDS+=($!)
echo $! >"$OUT/opa-server/pid"
wait_ready "http://127.0.0.1:$OPA_PORT/health" "$(cat "$OUT/opa-server/pid")"
TARGETS+=(opa)

# The same OPA logging every decision (decision_logs.console: one JSON line per
# decision, written to a file here) and nothing else: the console decision
# logger does not follow --log-level, so error level keeps the access log
# (two lines per request at info) out. Closer to what rein does per check,
# though OPA's log is neither durable before the answer nor signed.
OPA_LOG_PORT=$(free_port $((OPA_PORT + 1)))
echo "starting Open Policy Agent with decision logs (127.0.0.1:$OPA_LOG_PORT)"
mkdir -p "$OUT/opa-logged"
"$OPA" run --server --addr "127.0.0.1:$OPA_LOG_PORT" --log-level error --set decision_logs.console=true bench/policy.rego \
  >"$OUT/opa-logged/decisions.log" 2>&1 &
PIDS+=($!)
echo $! >"$OUT/opa-logged/pid"
wait_ready "http://127.0.0.1:$OPA_LOG_PORT/health" "$(cat "$OUT/opa-logged/pid")"
TARGETS+=(opa-logged)

target_flags() { # NAME -> rein bench flags
  case $1 in
    opa) echo "--target opa --server http://127.0.0.1:$OPA_PORT" ;;
    opa-logged) echo "--target opa --server http://127.0.0.1:$OPA_LOG_PORT" ;;
    rein-sqlite) echo "--target rein --server http://127.0.0.1:$REIN_PORT --key $(cat "$OUT/rein-sqlite/agent.key")" ;;
    rein-postgres) echo "--target rein --server http://127.0.0.1:$PG_PORT --key $(cat "$OUT/rein-postgres/agent.key")" ;;
  esac
}
pid_of() { if [ "$1" = opa ]; then cat "$OUT/opa-server/pid"; else cat "$OUT/$1/pid"; fi; }
# The load generator's own CPU time per check is reported too: it shares the
# machine with the server it drives.

# --- equivalence: every server decides each kind of check as expected ----------
for t in "${TARGETS[@]}"; do
  echo "verifying $t"
  [ "$t" = rein-postgres ] && pg_hold
  # shellcheck disable=SC2046
  "$REIN" bench $(target_flags "$t") --verify >"$OUT/verify-$t.txt" || { cat "$OUT/verify-$t.txt"; exit 1; }
  tail -n1 "$OUT/verify-$t.txt"
  [ "$t" = rein-postgres ] && pg_release
done

# --- idle memory -----------------------------------------------------------------
sleep 2
declare -A IDLE
for t in "${TARGETS[@]}"; do IDLE[$t]=$(rss "$(pid_of "$t")" | cut -d' ' -f1); done

# --- load ----------------------------------------------------------------------
# The order of the servers rotates from one round (and concurrency) to the
# next, so that no server always follows the same one on the same cores.
printf "round\ttarget\tconcurrency\tthroughput\tp50_ms\tp90_ms\tp99_ms\tmax_ms\terrors\tcpu_us_per_check\tgenerator_cpu_us\tpostgres_cpu_us\tidle_rss_mib\tload_rss_mib\thwm_mib\tloadavg\tbusy_pct\tgenerator_pct\tanon_mib\tfile_mib\n" >"$OUT/runs.tsv"
FAILED=0
turn=0
for round in $(seq 1 "$ROUNDS"); do
  for c in $CONC; do
    n=${#TARGETS[@]}
    ORDER=()
    for i in $(seq 0 $((n - 1))); do ORDER+=("${TARGETS[$(((i + turn) % n))]}"); done
    turn=$((turn + 1))
    for t in "${ORDER[@]}"; do
      pid=$(pid_of "$t")
      res="$OUT/run-$round-$t-$c.json"
      [ "$t" = rein-postgres ] && pg_hold
      c0=$(cpu "$pid") d0=$(pg_cpu)
      # shellcheck disable=SC2046
      conc=${c%@*} rate=0
      [ "$c" != "$conc" ] && rate=${c#*@}
      "$REIN" bench $(target_flags "$t") --concurrency "$conc" --rate "$rate" --duration "$DUR" --warmup "$WARM" \
        --session "bench-r$round-c$c" --output json >"$res" &
      bpid=$!
      peak=0
      while kill -0 "$bpid" 2>/dev/null; do
        now=$(rss "$pid" | cut -d' ' -f1)
        peak=$(awk -v a="$peak" -v b="$now" 'BEGIN{print (b>a)?b:a}')
        sleep 0.5
      done
      if ! wait "$bpid"; then
        echo "rein bench against $t reported failures (errors and wrong decisions; the run fails):"
        sed -n '/error_samples/,/]/p' "$res"
        FAILED=1
      fi
      c1=$(cpu "$pid") d1=$(pg_cpu)
      [ "$t" = rein-postgres ] && pg_release
      tp=$(json throughput "$res")
      secs=$(awk -v d="${DUR%s}" -v w="${WARM%s}" 'BEGIN{print d+w}')
      cpu_us=$(awk -v t0="$c0" -v t1="$c1" -v tp="$tp" -v s="$secs" -v hz="$(getconf CLK_TCK)" \
        'BEGIN{printf "%.0f", (t1-t0)/hz*1e6/(tp*s)}')
      db_us=-
      if [ "$t" = rein-postgres ]; then
        db_us=$(awk -v t0="$d0" -v t1="$d1" -v tp="$tp" -v s="$secs" -v hz="$(getconf CLK_TCK)" \
          'BEGIN{printf "%.0f", (t1-t0)/hz*1e6/(tp*s)}')
      fi
      hwm=$(rss "$pid" | cut -d' ' -f2)
      split=$(rss_split "$pid")
      load=$(cut -d' ' -f1 /proc/loadavg)
      printf "%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%s\t%s\n" "$round" "$t" "$c" "$tp" \
        "$(json p50_ms "$res")" "$(json p90_ms "$res")" "$(json p99_ms "$res")" "$(json max_ms "$res")" \
        "$(json errors "$res")" "$cpu_us" "$(json generator_cpu_us_per_check "$res")" "$db_us" "${IDLE[$t]}" "$peak" "$hwm" "$load" \
        "$(json machine_busy_pct "$res")" "$(json generator_cpu_pct "$res")" "${split% *}" "${split#* }" | tee -a "$OUT/runs.tsv"
    done
  done
done

# --- table ---------------------------------------------------------------------
echo
echo "Ranges over $ROUNDS rounds (min-max); $(nproc) CPUs shared by the servers and the load generator."
echo "CPU: microseconds of CPU time per check: the server process, PostgreSQL's backends serving rein (rein-postgres only), the load generator."
awk -F'\t' 'NR>1 {
  k=$2" "$3
  if (!(k in n)) { order[++m]=k; tmin[k]=tmax[k]=$4; p50min[k]=p50max[k]=$5; p99min[k]=p99max[k]=$7; cmin[k]=cmax[k]=$10; gmin[k]=gmax[k]=$11; errs[k]=0; dmin[k]=dmax[k]=$12; idle[k]=$13; rmax[k]=$14 }
  n[k]++; errs[k]+=$9
  if ($4<tmin[k]) tmin[k]=$4; if ($4>tmax[k]) tmax[k]=$4
  if ($5<p50min[k]) p50min[k]=$5; if ($5>p50max[k]) p50max[k]=$5
  if ($7<p99min[k]) p99min[k]=$7; if ($7>p99max[k]) p99max[k]=$7
  if ($10<cmin[k]) cmin[k]=$10; if ($10>cmax[k]) cmax[k]=$10
  if ($11<gmin[k]) gmin[k]=$11; if ($11>gmax[k]) gmax[k]=$11
  if ($12!="-") { if ($12<dmin[k]) dmin[k]=$12; if ($12>dmax[k]) dmax[k]=$12 }
  if ($14>rmax[k]) rmax[k]=$14
}
END {
  printf "| %-14s | %4s | %-17s | %-13s | %-13s | %-13s | %-13s | %-13s | %9s | %13s | %6s |\n", "server", "conc", "checks/s", "p50 ms", "p99 ms", "server CPU us", "PG CPU us", "bench CPU us", "idle RSS", "RSS under load", "errors"
  for (i=1;i<=m;i++) { k=order[i]; split(k, a, " ")
    db = (dmin[k]=="-") ? "-" : sprintf("%5.0f - %5.0f", dmin[k], dmax[k])
    printf "| %-14s | %4s | %7.0f - %7.0f | %5.2f - %5.2f | %5.1f - %5.1f | %5.0f - %5.0f | %13s | %5.0f - %5.0f | %5.1f MiB | %9.1f MiB | %6d |\n", a[1], a[2], tmin[k], tmax[k], p50min[k], p50max[k], p99min[k], p99max[k], cmin[k], cmax[k], db, gmin[k], gmax[k], idle[k], rmax[k], errs[k] }
}' "$OUT/runs.tsv"

# Ratios within each round: the servers of one round ran minutes apart on
# the same machine, so these compare them under the same conditions.
echo
echo "Within each round (same load on the machine): throughput and CPU per check against OPA (no decision log)."
awk -F'\t' 'NR>1 { k=$1" "$3; tp[k" "$2]=$4; cpu[k" "$2]=$10; p99[k" "$2]=$7; busy[k" "$2]=$17; la[k]=$16; if (!(k in seen)) { seen[k]=1; keys[++m]=k } ; names[$2]=1 }
END {
  printf "| %5s | %4s | %-13s | %9s | %9s | %9s | %7s | %7s |\n", "round", "conc", "server", "checks/s", "x OPA", "CPU x OPA", "p99 ms", "busy %"
  for (i=1;i<=m;i++) { k=keys[i]; split(k, a, " ")
    for (s in names) { if (!((k" "s) in tp)) continue
      o = tp[k" opa"]; oc = cpu[k" opa"]
      printf "| %5s | %4s | %-13s | %9.0f | %9s | %9s | %7.1f | %7.1f |\n", a[1], a[2], s, tp[k" "s], (o>0)?sprintf("%.2f", tp[k" "s]/o):"-", (oc>0)?sprintf("%.2f", cpu[k" "s]/oc):"-", p99[k" "s], busy[k" "s] }
  }
}' "$OUT/runs.tsv"
echo "Load average (1 min) during the runs: $(awk -F'\t' 'NR>1{print $16}' "$OUT/runs.tsv" | sort -n | sed -n '1p;$p' | paste -sd- )"

echo "Resident memory at the end of the runs under load, largest: the process's own (anonymous) + its binary and files mapped in (file-backed, shared with the page cache):"
awk -F'\t' 'NR>1 { if ($19>a[$2]) a[$2]=$19; if ($20>f[$2]) f[$2]=$20 } END { for (t in a) printf "  %s: %.1f + %.1f MiB\n", t, a[t], f[t] }' "$OUT/runs.tsv"

# Idle again: what each server holds once the load has stopped.
sleep 5
printf "Resident memory idle after the runs:"
for t in "${TARGETS[@]}"; do printf " %s %s MiB;" "$t" "$(rss "$(pid_of "$t")" | cut -d' ' -f1)"; done
echo
if [ "$FAILED" = 1 ]; then
  echo "FAILED: a run had errors or wrong decisions (see above and $OUT/run-*.json)" >&2
  exit 1
fi
