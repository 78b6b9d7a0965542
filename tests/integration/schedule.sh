#!/bin/bash
# The scheduler: a spec with `every: 2s` in the specs directory runs again and again (never
# two at once); a bad spec there is logged with FILE:LINE:COL and skipped while the others stay
# scheduled; SIGHUP picks up a new spec; a firing missed while the daemon was down is caught up
# once at start-up.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

export ALLOCLAB_SOCKET="$WORK/ctl.sock"
SPECS="$WORK/specs.d"
mkdir "$SPECS"
daemon_pid=
trap '[[ -n $daemon_pid ]] && kill -9 $daemon_pid 2>/dev/null; rm -rf "$WORK"' EXIT

start_daemon() {
    "$ALLOCLABD" --db "$DB" --specs-dir "$SPECS" 2>>"$WORK/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 100); do
        "$ALLOCLAB" status >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    fail "alloclabd did not start: $(cat "$WORK/daemon.log")"
}
stop_daemon() {
    kill -TERM "$daemon_pid"
    wait "$daemon_pid" || true
    daemon_pid=
}

cat >"$SPECS/often.yaml" <<YAML
experiment: often
command: ["$WORKLOAD", which]
allocators: {glibc: {}}
samples: 1
regression_threshold: 1000%
schedule: {every: 2s}
YAML
# A scheduled experiment whose timing the test changes between runs: the daemon must report it
# (from one earlier run the between-run spread is mostly assumed, 2%, and a 6x change stands out
# of it; the run after it confirms it).
echo 0.05 >"$WORK/delay"
cat >"$SPECS/drift.yaml" <<YAML
experiment: drift
command: [/bin/sh, -c, "sleep \$(cat '$WORK/delay')"]
allocators: {glibc: {}}
samples: 6
warmup: 0
verify: none
regression_threshold: 50%
schedule: {every: 2s}
YAML
# history: ratios: the daemon follows each variant's ratio to the baseline within each run. Both
# variants slow down 5x at once (the machine, or the program): nothing to report; later the
# candidate alone takes twice as long: a regression of its ratio.
echo 0.02 >"$WORK/common"
echo 0 >"$WORK/extra"
cat >"$SPECS/ratios.yaml" <<YAML
experiment: ratios
command: [/bin/sh, -c, "sleep \$(cat '$WORK/common')"]
allocators:
  glibc: {}
  candidate: {command: [/bin/sh, -c, "sleep \$(cat '$WORK/common'); sleep \$(cat '$WORK/extra')"]}
samples: 5
warmup: 0
verify: none
regression_threshold: 50%
history: ratios
schedule: {every: 2s}
YAML
printf 'experiment: broken\ncommand: [/bin/true]\nallocators: {glibc: {}}\nschedule: "0 25 * * *"\n' >"$SPECS/broken.yaml"

start_daemon
expect_contains "$(cat "$WORK/daemon.log")" "$SPECS/broken.yaml:4:14: schedule: hour field: 25 is outside 0-23" \
    "bad spec logged with its position"
run_alloclab 0 schedules
expect_contains "$OUT" "often" "scheduled experiment"
expect_contains "$OUT" "every 2s" "its schedule"
for _ in $(seq 100); do
    (( $(q "SELECT count(*) FROM jobs WHERE trigger = 'schedule' AND status = 'done'" 2>/dev/null || echo 0) >= 2 )) && break
    sleep 0.1
done
expect_eq "$(q "SELECT count(*) >= 2 FROM jobs j JOIN runs r ON r.id = j.run_id
                WHERE j.trigger = 'schedule' AND j.status = 'done' AND r.status = 'done'")" 1 "repeated scheduled runs"
expect_eq "$(q "SELECT count(*) FROM runs a JOIN runs b ON a.id < b.id WHERE b.started_at < a.ended_at")" 0 \
    "scheduled runs never overlap"
expect_eq "$(q "SELECT DISTINCT submitter, cwd FROM jobs WHERE trigger = 'schedule'")" "root|$SPECS" \
    "scheduled jobs run as the spec's owner, from its directory"

# The drift: once one run at 50 ms is done, slow the workload down to 300 ms.
for _ in $(seq 100); do
    (( $(q "SELECT count(*) FROM jobs WHERE spec_path LIKE '%drift.yaml' AND status = 'done'") >= 1 )) && break
    sleep 0.1
done
echo 0.3 >"$WORK/delay"
echo 0.1 >"$WORK/common"
for _ in $(seq 300); do
    grep -q "drift run [0-9]*: glibc \[-\] regression (confirmed by run [0-9]*): wall [0-9.]*x \[" "$WORK/daemon.log" && break
    sleep 0.1
done
grep -q "drift run [0-9]*: glibc \[-\] regression (confirmed by run [0-9]*): wall [0-9.]*x \[" "$WORK/daemon.log" ||
    fail "no regression reported: $(cat "$WORK/daemon.log")"
# The same run is a change point in alloclab history.
flagged=$(grep -o "drift run [0-9]*: glibc \[-\] regression" "$WORK/daemon.log" | head -1 | grep -o "run [0-9]*" | cut -d' ' -f2)
run_alloclab 0 history drift --format csv
expect_contains "$OUT" "drift,-,glibc,wall,$flagged," "history has the run"
expect_eq "$(awk -F, -v r="$flagged" '$5 == r {print $13}' <<<"$OUT")" "regression" "history flags the same run"
# The run that moved was first a tentative change point, as it finished, then confirmed by the next.
grep -q "drift run $flagged: glibc \[-\] possible regression (tentative until the next run): wall" "$WORK/daemon.log" ||
    fail "the change was not first reported as tentative: $(cat "$WORK/daemon.log")"
grep -E ": (possible )?(regression|improvement) \(" "$WORK/daemon.log" | grep -qv drift &&
    fail "a stable experiment was reported as changed (or the ratios of a common slow-down)"
rm "$SPECS/drift.yaml"
# The candidate alone slows down: its ratio's change point, said to be of the ratio.
ratios_before=$(q "SELECT count(*) FROM runs r JOIN experiments x ON x.id = r.experiment_id WHERE x.name = 'ratios'")
ratios_last=$(q "SELECT max(r.id) FROM runs r JOIN experiments x ON x.id = r.experiment_id WHERE x.name = 'ratios'")
echo 0.1 >"$WORK/extra"
for _ in $(seq 400); do
    grep -q "ratios run [0-9]*: candidate \[-\] regression (confirmed by run [0-9]*): wall ratio to glibc [0-9.]*x" \
        "$WORK/daemon.log" && break
    sleep 0.1
done
grep -q "ratios run [0-9]*: candidate \[-\] regression (confirmed by run [0-9]*): wall ratio to glibc [0-9.]*x" \
    "$WORK/daemon.log" || fail "no regression of the ratio reported: $(grep ratios "$WORK/daemon.log")"
flagged=$(grep -o "ratios run [0-9]*: candidate \[-\] regression" "$WORK/daemon.log" | head -1 | grep -o "run [0-9]*" | cut -d' ' -f2)
(( flagged >= ratios_last )) || fail "the ratio's change point (run $flagged) is before the candidate's slow-down (run $ratios_last)"
(( ratios_before >= 2 )) || fail "the ratios experiment had not run before the candidate slowed down"
rm "$SPECS/ratios.yaml"

# SIGHUP: a new spec joins.
cat >"$SPECS/nightly.yaml" <<YAML
experiment: nightly
command: [/bin/true]
allocators: {glibc: {}}
schedule: "30 3 * * *"
YAML
kill -HUP "$daemon_pid"
for _ in $(seq 50); do "$ALLOCLAB" schedules | grep -q nightly && break; sleep 0.1; done
run_alloclab 0 schedules
expect_contains "$OUT" "nightly" "spec added by SIGHUP"
expect_contains "$OUT" "30 3 * * *" "its cron expression"
rm "$SPECS/often.yaml"
kill -HUP "$daemon_pid"
sleep 0.3
# The jobs the removed specs queued before they went still run; then the queue is empty.
for _ in $(seq 300); do
    (( $(q "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')") == 0 )) && break
    sleep 0.1
done
run_alloclab 0 status
expect_contains "$OUT" "next scheduled nightly at " "status names the next firing"
stop_daemon

# Catch-up: pretend nightly last fired three days ago; the missed firing runs once at start.
q "UPDATE schedule_state SET last_fire_at = strftime('%s', 'now') - 3 * 86400" >/dev/null
q "INSERT INTO schedule_state (spec_path, last_fire_at) VALUES ('$SPECS/nightly.yaml', strftime('%s', 'now') - 3 * 86400)
   ON CONFLICT (spec_path) DO UPDATE SET last_fire_at = excluded.last_fire_at"
start_daemon
for _ in $(seq 100); do
    [[ $(q "SELECT count(*) FROM jobs WHERE spec_path = '$SPECS/nightly.yaml' AND status = 'done'") == 1 ]] && break
    sleep 0.1
done
expect_eq "$(q "SELECT count(*) FROM jobs WHERE spec_path = '$SPECS/nightly.yaml'")" 1 "one catch-up run"
expect_eq "$(q "SELECT status FROM jobs WHERE spec_path = '$SPECS/nightly.yaml'")" done "catch-up job done"
stop_daemon

# The configuration file: the daemon takes its database, socket and specs directory from it,
# and refuses a bad one with FILE:LINE:COL.
cat >"$WORK/alloclabd.yaml" <<YAML
database: $WORK/from-config.db
socket: $WORK/from-config.sock
specs_dir: $SPECS
idle_timeout: 5s
YAML
"$ALLOCLABD" --config "$WORK/alloclabd.yaml" 2>>"$WORK/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do ALLOCLAB_SOCKET="$WORK/from-config.sock" "$ALLOCLAB" status >/dev/null 2>&1 && break; sleep 0.05; done
ALLOCLAB_SOCKET="$WORK/from-config.sock" run_alloclab 0 status
expect_contains "$OUT" "database $WORK/from-config.db" "database from the configuration"
stop_daemon
printf 'database: %s/x.db\nidle_timout: 5s\n' "$WORK" >"$WORK/bad.yaml"
rc=0
"$ALLOCLABD" --config "$WORK/bad.yaml" 2>"$WORK/bad.err" || rc=$?
expect_eq "$rc" 1 "exit status with a bad configuration"
expect_eq "$(cat "$WORK/bad.err")" \
    "alloclabd: $WORK/bad.yaml:2:1: unknown key 'idle_timout' (did you mean 'idle_timeout'?)" "configuration diagnostics"

# --user: the user's socket, database and specs directory, whoever runs it.
mkdir -p "$WORK/run" "$WORK/home"
XDG_RUNTIME_DIR="$WORK/run" HOME="$WORK/home" XDG_DATA_HOME= XDG_CONFIG_HOME= ALLOCLAB_DB= ALLOCLAB_SOCKET= \
    "$ALLOCLABD" --user 2>>"$WORK/daemon.log" &
daemon_pid=$!
for _ in $(seq 100); do [[ -S "$WORK/run/alloclab/control.sock" ]] && break; sleep 0.05; done
ALLOCLAB_SOCKET="$WORK/run/alloclab/control.sock" run_alloclab 0 status
expect_contains "$OUT" "database $WORK/home/.local/share/alloclab/results.db" "--user database"
stop_daemon
