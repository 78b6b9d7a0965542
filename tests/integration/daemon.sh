#!/bin/bash
# alloclabd as a normal process with a test-side NOTIFY_SOCKET: READY=1, STATUS= and watchdog
# pings; jobs from three clients at once run one after another; a bad spec is refused with its
# FILE:LINE:COL; cancel and SIGTERM stop a running job and leave no process behind; hostile
# clients (garbage, an oversized message, half a message then silence, 100 idle connections)
# cannot keep a well-behaved client from being answered.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

export ALLOCLAB_SOCKET="$WORK/ctl.sock"
NOTIFY="$WORK/notify.sock"

# The notification listener: one line per datagram, timestamped.
python3 - "$NOTIFY" "$WORK/notify.log" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(120)
with open(sys.argv[2], "a", buffering=1) as log:
    while True:
        try:
            data = s.recv(4096)
        except socket.timeout:
            break
        for line in data.decode().splitlines():
            log.write(f"{time.time():.3f} {line}\n")
PY
listener=$!
daemon_pid=
cleanup() {
    [[ -n $daemon_pid ]] && kill -9 "$daemon_pid" 2>/dev/null
    kill "$listener" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
for _ in $(seq 50); do [[ -S $NOTIFY ]] && break; sleep 0.1; done

# The daemon's runs are filed under the machine name of its configuration, and after each job
# only the last 2 runs of each experiment keep their samples.
printf 'machine: rack7-box\nprune_keep_last: 2\n' >"$WORK/alloclabd.yaml"
start_daemon() {
    NOTIFY_SOCKET="$NOTIFY" WATCHDOG_USEC=400000 "$ALLOCLABD" --db "$DB" --idle-timeout 1 \
        --config "$WORK/alloclabd.yaml" 2>>"$WORK/daemon.log" &
    daemon_pid=$!
    for _ in $(seq 100); do
        [[ $(grep -c "READY=1" "$WORK/notify.log" 2>/dev/null) -ge $1 ]] && return 0
        sleep 0.05
    done
    fail "alloclabd did not become ready: $(cat "$WORK/daemon.log")"
}
no_workload_left() {
    sleep 0.3
    if pgrep -f "$WORKLOAD sleep" >/dev/null; then fail "a workload survived: $(pgrep -af "$WORKLOAD sleep")"; fi
}

# Before the daemon: nothing at the socket's path, or a file that is no socket (a mistyped path).
run_alloclab 4 status
expect_contains "$ERR" "no daemon is running at $ALLOCLAB_SOCKET (start alloclabd): No such file or directory" \
    "status without a daemon"
touch "$WORK/plain"
ALLOCLAB_SOCKET=$WORK/plain run_alloclab 4 status
expect_contains "$ERR" "$WORK/plain is not a socket (is ALLOCLAB_SOCKET or --socket right?)" "status at a file"

start_daemon 1
run_alloclab 0 status
expect_contains "$OUT" "idle; 0 queued" "status of an idle daemon"

# Three clients at once.
cat >"$WORK/short.yaml" <<YAML
experiment: queued
command: ["$WORKLOAD", sleep, "250"]
allocators: {glibc: {}}
samples: 2
YAML
for i in 1 2 3; do
    "$ALLOCLAB" submit --wait "$WORK/short.yaml" >"$WORK/submit$i.out" 2>"$WORK/submit$i.err" &
    pids[$i]=$!
done
for i in 1 2 3; do
    wait "${pids[$i]}" || fail "client $i failed: $(cat "$WORK/submit$i.err")"
    expect_contains "$(cat "$WORK/submit$i.out")" "queued run" "client $i table"
done
expect_eq "$(q "SELECT count(*) FROM jobs WHERE status = 'done'")" 3 "three jobs done"
expect_eq "$(q "SELECT count(*) FROM runs WHERE status = 'done' AND n_runs = 4")" 3 "three complete runs"
expect_eq "$(q "SELECT DISTINCT machine FROM runs")" rack7-box "the configuration's machine name"
for _ in $(seq 50); do # pruned once the third job has answered its client
    [[ $(q "SELECT count(*) FROM runs WHERE pruned_at IS NOT NULL") == 1 ]] && break
    sleep 0.1
done
expect_eq "$(q "SELECT group_concat(id) FROM runs WHERE pruned_at IS NOT NULL"),$(q "SELECT count(*) FROM samples
           WHERE run_id = (SELECT min(id) FROM runs) AND phase = 'sample'")" "1,0" "the configuration's retention"
expect_contains "$(cat "$WORK/daemon.log")" "pruned 1 old run (" "logged"
overlaps=$(q "SELECT count(*) FROM runs a JOIN runs b ON a.id < b.id WHERE b.started_at < a.ended_at")
expect_eq "$overlaps" 0 "runs never overlap"
grep -q "STATUS=queued: cell 1/1 glibc" "$WORK/notify.log" || fail "no progress STATUS line"
# Watchdog pings kept coming while children were measured (WATCHDOG_USEC=400ms: at least one
# ping per 400 ms over the ~3 s the jobs took).
pings=$(grep -c "WATCHDOG=1" "$WORK/notify.log" || true)
(( pings >= 6 )) || fail "only $pings watchdog pings"

# Watchdog pings keep coming while a 3 s child is being measured: the loop is never blocked.
cat >"$WORK/three.yaml" <<YAML
experiment: three-seconds
command: ["$WORKLOAD", sleep, "3000"]
allocators: {glibc: {}}
samples: 1
warmup: 0
probe: never
verify: none
YAML
t0=$(date +%s.%N)
run_alloclab 0 submit --wait "$WORK/three.yaml"
t1=$(date +%s.%N)
pings=$(awk -v a="$t0" -v b="$t1" '$2 == "WATCHDOG=1" && $1 > a + 0.5 && $1 < b - 0.5' "$WORK/notify.log" | wc -l)
# 6 s of children (smoke + sample) with WATCHDOG_USEC=400ms: at least one ping per 400 ms.
(( pings >= 12 )) || fail "only $pings watchdog pings during 6 s of 3 s children"

# A bad spec is refused with its position; nothing is queued.
printf 'experiment: bad\ncommand: [/bin/true]\nallocators: {glibc: {}}\nsample: 2\n' >"$WORK/bad.yaml"
run_alloclab 3 submit "$WORK/bad.yaml"
expect_eq "$ERR" "$WORK/bad.yaml:4:1: unknown key 'sample' (did you mean 'samples'?)" "submit diagnostics"
expect_eq "$(q "SELECT count(*) FROM jobs")" 4 "no job for a bad spec"
# A missing program is found at submission too, as `alloclab check` finds it.
printf 'experiment: missing\ncommand: [no-such-program-for-alloclab]\nallocators: {glibc: {}}\n' >"$WORK/missing.yaml"
run_alloclab 4 submit "$WORK/missing.yaml"
expect_eq "$ERR" "alloclab submit: the daemon cannot run this spec: $WORK/missing.yaml:2:10: cannot run 'no-such-program-for-alloclab': No such file or directory" \
    "submit of a spec whose program is missing"
# Allocator options as check judges them: refused at submission, where the spec writes them (on
# 7fba13f the job was queued and its variant measured as config-rejected).
printf 'experiment: opts\ncommand: [/bin/true]\nallocators:\n  glibc: {}\n  mi: {preload: mimalloc, env: {MIMALLOC_STATZ: "1"}}\n' >"$WORK/opts.yaml"
jobs_before=$(q "SELECT count(*) FROM jobs")
run_alloclab 4 submit "$WORK/opts.yaml"
expect_contains "$ERR" "$WORK/opts.yaml:5:33: variant mi: MIMALLOC_STATZ is not an option of" "submit: an unknown option"
expect_eq "$(q "SELECT count(*) FROM jobs")" "$jobs_before" "no job for it"
expect_eq "$(q "SELECT count(*) FROM jobs")" 4 "no job for a missing program"

# Cancel a running job.
cat >"$WORK/long.yaml" <<YAML
experiment: long
command: ["$WORKLOAD", sleep, "400"]
allocators: {glibc: {}}
samples: 50
YAML
run_alloclab 0 submit "$WORK/long.yaml"
job=$(grep -o '[0-9]*' <<<"$OUT")
for _ in $(seq 100); do [[ $(q "SELECT status FROM jobs WHERE id = $job") == running ]] && break; sleep 0.05; done
sleep 0.5
run_alloclab 0 cancel "$job"
for _ in $(seq 100); do [[ $(q "SELECT status FROM jobs WHERE id = $job") == canceled ]] && break; sleep 0.05; done
expect_eq "$(q "SELECT j.status, r.status FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = $job")" \
    "canceled|interrupted" "canceled job"
no_workload_left
run_alloclab 2 cancel "$job"
expect_contains "$ERR" "alloclab cancel: job $job has ended already" "cancel of an ended job"
run_alloclab 2 cancel 99 # usage: the command line named it (on 54e620f exit 4)
expect_eq "$ERR" "alloclab cancel: no job 99" "cancel of a job that never was"

# Hostile clients, then a well-behaved one.
python3 - "$ALLOCLAB_SOCKET" <<'PY' || fail "hostile clients"
import json, os, socket, sys, time
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s
def closed_within(s, seconds):
    s.settimeout(seconds)
    try:
        while s.recv(65536):
            pass
        return True
    except ConnectionResetError:  # closed with our bytes unread: a reset, not an EOF
        return True
    except socket.timeout:
        return False
g = conn(); g.sendall(os.urandom(4096) + b"\0"); g.settimeout(5)
reply = g.recv(65536)
assert b"io.alloclab.InvalidRequest" in reply, reply
big = conn()
try:
    big.sendall(b"x" * (2 * 1024 * 1024))
except (BrokenPipeError, ConnectionResetError):
    pass
assert closed_within(big, 5), "oversized message: connection not closed"
half = conn(); half.sendall(b'{"method": "io.alloclab.Pi')
assert closed_within(half, 5), "half a message: connection not closed after the idle timeout"
idle = [conn() for _ in range(100)]
start = time.monotonic()
ok = conn(); ok.sendall(json.dumps({"method": "io.alloclab.Ping"}).encode() + b"\0"); ok.settimeout(3)
assert b"version" in ok.recv(65536)
assert time.monotonic() - start < 2, "ping was slow"
# Parameters out of range are named (they got InvalidParameter and nothing else).
def ask(method, params):
    s = conn(); s.settimeout(5)
    s.sendall(json.dumps({"method": method, "parameters": params}).encode() + b"\0")
    return json.loads(s.recv(65536)[:-1])
r = ask("io.alloclab.Queue", {"limit": 0})
assert r["parameters"]["message"] == "limit must be an integer from 1 to 10000", r
r = ask("io.alloclab.Wait", {"job": 1e30})
assert r["parameters"]["message"] == "job must be a job's number", r
# Every method's parameters are checked by its row of the method table before it is called, and
# the reply names the one that does not fit: a limit that is not a number was taken for the
# default, parameters that are no object for none, an env of numbers queued a job.
r = ask("io.alloclab.Queue", {"limit": "5"})
assert r["parameters"]["message"] == "limit must be an integer from 1 to 10000", r
r = ask("io.alloclab.Queue", {"limit": None})
assert "jobs" in r["parameters"], r  # an optional parameter given as null is left out
for method in ("io.alloclab.Cancel", "io.alloclab.Ping", "io.alloclab.Queue"):
    r = ask(method, 7)
    assert r["error"] == "io.alloclab.InvalidParameter" and r["parameters"]["message"] == "parameters must be an object", r
r = ask("io.alloclab.Cancel", {})
assert r["parameters"]["message"] == "job is missing: a job's number", r
r = ask("io.alloclab.Submit", {"spec_path": "a.yaml", "spec": "x", "cwd": "/", "env": [1]})
assert r["parameters"]["message"] == "env must be an array of KEY=VALUE strings", r
r = ask("io.alloclab.Ping", {"anything": 1})
assert r["parameters"]["version"], r
PY

# A spec within its size limit that JSON escaping makes larger than a request may be: the client
# says so before sending (it said "Broken pipe" or printed io.alloclab.MessageTooLarge).
{ printf 'experiment: quoted\ncommand: [/bin/true]\nallocators: {glibc: {}}\n# '; head -c 700000 /dev/zero | tr '\0' '"'; echo; } >"$WORK/quoted.yaml"
run_alloclab 0 check "$WORK/quoted.yaml"
run_alloclab 4 submit "$WORK/quoted.yaml"
expect_contains "$ERR" "alloclab submit: the request is 1.3 MiB as JSON, more than the daemon takes (1 MiB)" "a spec that escapes too large"

# SIGTERM during a job: STOPPING=1, the job interrupted, nothing left running, exit within 10 s.
run_alloclab 0 submit "$WORK/long.yaml"
job=$(grep -o '[0-9]*' <<<"$OUT")
for _ in $(seq 100); do [[ $(q "SELECT status FROM jobs WHERE id = $job") == running ]] && break; sleep 0.05; done
sleep 0.5
start=$(date +%s)
kill -TERM "$daemon_pid"
wait "$daemon_pid" || fail "alloclabd exited with $? after SIGTERM"
daemon_pid=
(( $(date +%s) - start <= 10 )) || fail "alloclabd took more than 10 s to stop"
grep -q "STOPPING=1" "$WORK/notify.log" || fail "no STOPPING=1"
expect_eq "$(q "SELECT j.status, r.status FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = $job")" \
    "interrupted|interrupted" "job and run after SIGTERM"
no_workload_left
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after SIGTERM"

# After kill -9 mid-job, the next start marks the job and its run interrupted.
start_daemon 2
run_alloclab 0 submit "$WORK/long.yaml"
job=$(grep -o '[0-9]*' <<<"$OUT")
for _ in $(seq 100); do [[ $(q "SELECT status FROM jobs WHERE id = $job") == running ]] && break; sleep 0.05; done
sleep 0.6
committed=$(q "SELECT count(*) FROM samples s JOIN jobs j ON j.run_id = s.run_id WHERE j.id = $job")
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=
no_workload_left # the runner follows its daemon (PR_SET_PDEATHSIG) and kills its child
start_daemon 3
expect_eq "$(q "SELECT j.status, r.status FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = $job")" \
    "interrupted|interrupted" "job and run after kill -9"
(( $(q "SELECT count(*) FROM samples s JOIN jobs j ON j.run_id = s.run_id WHERE j.id = $job") >= committed )) ||
    fail "samples lost"
expect_eq "$(q "PRAGMA integrity_check")" ok "integrity after kill -9"
run_alloclab 0 queue
expect_contains "$OUT" "interrupted" "queue lists the interrupted job"
# --format json: the daemon's own reply, for scripts; other formats refused, never ignored.
run_alloclab 0 queue --format json
python3 -c 'import json, sys; j = json.load(sys.stdin)["jobs"]; assert any(x["status"] == "interrupted" for x in j), j' \
    <<<"$OUT" || fail "queue --format json: $OUT"
run_alloclab 0 status --format json
expect_eq "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])' <<<"$OUT")" idle "status --format json"
run_alloclab 0 schedules --format json
python3 -c 'import json, sys; assert isinstance(json.load(sys.stdin)["schedules"], list)' <<<"$OUT" ||
    fail "schedules --format json: $OUT"
run_alloclab 2 queue --format csv
expect_contains "$ERR" "queue prints a table or JSON" "queue refuses csv"

# Run as root, a job submitted by another user runs as that user.
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
    nobody=$(id -u nobody)
    nogroup=$(id -g nobody)
    mkdir -m 0777 "$WORK/shared"
    cat >"$WORK/shared/ids.yaml" <<YAML
experiment: ids
command: ["$WORKLOAD", ids]
allocators: {glibc: {}}
samples: 1
probe: never
YAML
    chmod 0755 "$WORK"
    chmod 0644 "$WORK/shared/ids.yaml"
    chmod 0666 "$ALLOCLAB_SOCKET"
    (cd "$WORK/shared" && setpriv --reuid="$nobody" --regid="$nogroup" --clear-groups \
        "$ALLOCLAB" submit ids.yaml) >"$WORK/ids.out" 2>&1 || fail "submit as nobody: $(cat "$WORK/ids.out")"
    job=$(grep -o '[0-9]*' "$WORK/ids.out")
    for _ in $(seq 100); do [[ $(q "SELECT status FROM jobs WHERE id = $job") == done ]] && break; sleep 0.05; done
    expect_eq "$(q "SELECT uid, submitter FROM jobs WHERE id = $job")" "$nobody|nobody" "job submitter"
    expect_eq "$(q "SELECT group_concat(m.name || '=' || CAST(m.value AS INTEGER), ' ') FROM sample_metrics m
                    JOIN samples s ON s.id = m.sample_id JOIN jobs j ON j.run_id = s.run_id
                    WHERE j.id = $job AND s.phase = 'sample' AND m.name IN ('egid', 'euid', 'gid', 'uid')
                    ORDER BY m.name")" \
        "egid=$nogroup euid=$nobody gid=$nogroup uid=$nobody" "the workload ran as the submitter"
    # The runner handed the run's cgroup to the submitter before taking its identity, so its
    # children still got cgroups of their own.
    if [[ -n $(q "SELECT r.cgroup FROM runs r JOIN jobs j ON j.run_id = r.id WHERE j.id = $job") ]]; then
        expect_eq "$(q "SELECT DISTINCT s.cpu_source FROM samples s JOIN jobs j ON j.run_id = s.run_id WHERE j.id = $job")" \
            cgroup "children of a job run as the submitter are in cgroups"
    fi
fi

# resume: true: after kill -9 of the daemon mid-job, the next start continues the run with
# exactly the samples still missing.
cat >"$WORK/resume.yaml" <<YAML
experiment: resumed-by-daemon
command: ["$WORKLOAD", sleep, "100"]
allocators: {glibc: {}}
samples: 10
resume: true
YAML
run_alloclab 0 submit "$WORK/resume.yaml"
job=$(grep -o '[0-9]*' <<<"$OUT")
for _ in $(seq 200); do
    (( $(q "SELECT count(*) FROM samples s JOIN jobs j ON j.run_id = s.run_id WHERE j.id = $job" 2>/dev/null || echo 0) >= 4 )) && break
    sleep 0.05
done
run=$(q "SELECT run_id FROM jobs WHERE id = $job")
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=
no_workload_left
start_daemon 4
for _ in $(seq 200); do
    [[ $(q "SELECT status FROM runs WHERE id = $run") == done ]] && break
    sleep 0.05
done
expect_eq "$(q "SELECT status FROM jobs WHERE id = $job")" interrupted "the killed job"
expect_eq "$(q "SELECT trigger, status FROM jobs WHERE run_id = $run AND id <> $job")" "resume|done" "the resumption"
expect_eq "$(q "SELECT r.status, count(*), count(DISTINCT s.step) FROM runs r JOIN samples s ON s.run_id = r.id WHERE r.id = $run GROUP BY r.id")" \
    "done|12|12" "the resumed run holds every step once"

# Socket activation, with systemd-socket-activate standing in for systemd (package systemd, a
# dependency of the tests): the passed socket is served; two sockets, or one that is not a
# listening stream socket, are refused with the reason, and the daemon exits non-zero.
kill "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=
command -v systemd-socket-activate >/dev/null || fail "systemd-socket-activate is missing (apt-get install systemd)"
# activate LOG ARGS...: systemd-socket-activate ARGS alloclabd, in the background.
activate() {
    local log=$1
    shift
    systemd-socket-activate "$@" "$ALLOCLABD" --db "$WORK/activated.db" --specs-dir "$WORK/none" 2>"$log" &
    daemon_pid=$!
    for _ in $(seq 100); do [[ -S ${@: -1} ]] && return 0; sleep 0.05; done
    fail "systemd-socket-activate did not listen: $(cat "$log")"
}
# ended_with_failure LOG WHAT: the activated daemon exited non-zero, its log saying WHAT.
ended_with_failure() {
    for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$daemon_pid" 2>/dev/null && fail "alloclabd served what it should refuse ($2)"
    local rc=0
    wait "$daemon_pid" || rc=$?
    daemon_pid=
    [[ $rc != 0 ]] || fail "alloclabd exited 0 where it should refuse ($2)"
    expect_contains "$(cat "$1")" "$2" "alloclabd refuses $2"
}
activate "$WORK/activated.log" -l "$WORK/activated.sock"
ALLOCLAB_SOCKET="$WORK/activated.sock" run_alloclab 0 status
expect_contains "$OUT" "idle; 0 queued" "status through an activated socket"
expect_contains "$(cat "$WORK/activated.log")" "socket (activated)" "the daemon served the passed socket"
kill "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=

activate "$WORK/two.log" -l "$WORK/one.sock" -l "$WORK/two.sock"
ALLOCLAB_SOCKET="$WORK/two.sock" "$ALLOCLAB" status >/dev/null 2>&1 || true
ended_with_failure "$WORK/two.log" "systemd passed 2 sockets"

activate "$WORK/datagram.log" --datagram -l "$WORK/datagram.sock"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", sys.argv[1])' \
    "$WORK/datagram.sock"
ended_with_failure "$WORK/datagram.log" "not a listening Unix stream socket"
