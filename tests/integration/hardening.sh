#!/bin/bash
# alloclabd as root against hostile local users (issue 12), with real users (nobody, daemon), the
# real daemon over its socket and real children:
# - a symlink, a file writable by others, or a directory writable by others without the sticky
#   bit in the specs directory never schedules anything (a symlink to root's spec ran as root);
# - the database is not world readable; another user's jobs are shown anonymised and cannot be
#   canceled;
# - verify: file:/etc/shadow as a user fails the job cleanly (the runner freed garbage) and
#   leaves /etc/shadow alone;
# - a relative command runs from the submitter's directory, as with alloclab run;
# - a client that never reads its replies does not grow the daemon, and others are answered.
# Needs root and setpriv; skipped with the reason otherwise.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

need_other_users
other=$(id -u daemon)
as_other() { setpriv --reuid="$other" --regid="$(id -g daemon)" --clear-groups "$@"; }

prepare_users_daemon 1777
wait_job() { # JOB STATUS
    for _ in $(seq 200); do
        [[ $(q "SELECT status FROM jobs WHERE id = $1") == "$2" ]] && return 0
        sleep 0.05
    done
    fail "job $1 is $(q "SELECT status || ' ' || coalesce(message, '') FROM jobs WHERE id = $1"), not $2"
}

# Scheduled specs: root's own, nobody's own (runs as nobody), and three that must be refused.
cat >"$SPECS/root.yaml" <<YAML
experiment: root-owned
command: ["$WORKLOAD", ids]
allocators: {glibc: {}}
samples: 1
probe: never
schedule: "0 3 * * *"
YAML
sed 's/root-owned/user-owned/' "$SPECS/root.yaml" >"$SPECS/user.yaml"
chown nobody:nogroup "$SPECS/user.yaml"
as_nobody ln -s "$SPECS/root.yaml" "$SPECS/pwn.yaml"
sed 's/root-owned/writable/' "$SPECS/root.yaml" >"$SPECS/writable.yaml"
chmod 0666 "$SPECS/writable.yaml"
# A file of a uid without an account (a user deleted): refused, and the uid named.
orphan=4242
while getent passwd "$orphan" >/dev/null; do orphan=$((orphan + 1)); done
sed 's/root-owned/orphan/' "$SPECS/root.yaml" >"$SPECS/orphan.yaml"
chown "$orphan:$orphan" "$SPECS/orphan.yaml"
start_users_daemon
run_alloclab 0 schedules
expect_contains "$OUT" "root-owned" "root's scheduled spec"
expect_contains "$OUT" "user-owned" "a user's scheduled spec in a sticky directory"
[[ $OUT != *pwn.yaml* ]] || fail "a symlink was scheduled: $OUT"
[[ $OUT != *writable* ]] || fail "a world-writable spec was scheduled: $OUT"
log=$(cat "$WORK/daemon.log")
expect_contains "$log" "skipping $SPECS/pwn.yaml: a symbolic link" "the symlink is refused"
expect_contains "$log" "skipping $SPECS/writable.yaml: writable by others than its owner" "writable file refused"
expect_contains "$log" "skipping $SPECS/orphan.yaml: its owner, uid $orphan, has no account to take groups from" \
    "a spec whose owner has no account"
# Each runs as its file's owner.
uids=$(python3 - "$ALLOCLAB_SOCKET" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b'{"method": "io.alloclab.Schedules"}\0')
reply = b""
while not reply.endswith(b"\0"):
    reply += s.recv(65536)
schedules = json.loads(reply[:-1])["parameters"]["schedules"]
print(" ".join(f"{x['experiment']}={x['uid']}" for x in sorted(schedules, key=lambda x: x["experiment"])))
PY
)
expect_eq "$uids" "root-owned=0 user-owned=$nobody" "who each scheduled spec runs as"
# Without the sticky bit anyone may replace anyone's file: the whole directory is refused.
chmod 0777 "$SPECS"
kill -HUP "$daemon_pid"
for _ in $(seq 100); do grep -q "not loading $SPECS" "$WORK/daemon.log" && break; sleep 0.05; done
expect_contains "$(cat "$WORK/daemon.log")" "not loading $SPECS: it is writable by group or others and not sticky" \
    "a shared directory without the sticky bit"
run_alloclab 0 schedules
[[ $OUT != *root-owned* ]] || fail "specs of an unsafe directory stay scheduled: $OUT"
chmod 1777 "$SPECS"

# The database and its WAL files are not world readable.
for f in "$DB" "$DB-wal" "$DB-shm"; do
    [[ -e $f ]] || continue
    mode=$(stat -c %a "$f")
    (( (8#$mode & 8#007) == 0 )) || fail "$f is mode $mode"
done

# Another user's job: anonymised in queue and status, not cancelable.
mkdir -m 0755 "$WORK/root-job"
cat >"$WORK/root-job/secret-experiment.yaml" <<YAML
experiment: secret-experiment
command: ["$WORKLOAD", sleep, "20000"]
allocators: {glibc: {}}
samples: 1
warmup: 0
probe: never
YAML
run_alloclab 0 submit "$WORK/root-job/secret-experiment.yaml"
root_job=$(grep -o '[0-9]*' <<<"$OUT" | head -1)
wait_job "$root_job" running
out=$(cd /tmp && as_nobody "$ALLOCLAB" queue 2>&1) || fail "queue as nobody: $out"
[[ $out != *secret-experiment* ]] || fail "nobody sees root's spec path: $out"
expect_contains "$out" "another user's job" "root's job anonymised"
grep -q "^$root_job  *running  *-  *- " <<<"$out" || fail "root's job in nobody's queue has a run: $out"
out=$(cd /tmp && as_nobody "$ALLOCLAB" status 2>&1) || fail "status as nobody: $out"
[[ $out != *secret-experiment* ]] || fail "nobody sees root's running job: $out"
# ... said once, without a run 0 (it read "job N ((another user's job), run 0, submitted by -)").
expect_contains "$out" "running job $root_job (another user's job); " "another user's running job in status"
rc=0
out=$(cd /tmp && as_nobody "$ALLOCLAB" cancel "$root_job" 2>&1) || rc=$?
[[ $rc != 0 ]] || fail "nobody canceled root's job: $out"
run_alloclab 0 cancel "$root_job"
wait_job "$root_job" canceled

# verify: file:/etc/shadow as nobody: the variant is excluded with a reason that names the file,
# the daemon lives on, and /etc/shadow is neither removed nor read.
shadow_before=$(sha256sum /etc/shadow)
mkdir -m 0777 "$WORK/user"
cat >"$WORK/user/shadow.yaml" <<YAML
experiment: shadow
command: [/bin/true]
allocators: {glibc: {}}
samples: 1
probe: never
verify: file:/etc/shadow
YAML
cat >"$WORK/user/hello.sh" <<'SH'
#!/bin/sh
echo hello from "$(pwd)"
SH
chmod 0755 "$WORK/user/hello.sh"
cat >"$WORK/user/relative.yaml" <<YAML
experiment: relative
command: [./hello.sh]
allocators: {glibc: {}}
samples: 1
probe: never
YAML
chmod 0644 "$WORK/user/"*.yaml
out=$(cd "$WORK/user" && as_nobody "$ALLOCLAB" submit shadow.yaml 2>&1) || fail "submit as nobody: $out"
job=$(grep -o '[0-9]*' <<<"$out" | head -1)
wait_job "$job" done
# The verify file that cannot be removed before the child writes it fails the sample, and the
# reason names it (issue 25: the run failed with a bare "Permission denied").
expect_contains "$(q "SELECT x.reason FROM exclusions x JOIN jobs j ON j.run_id = x.run_id WHERE j.id = $job")" \
    "no-output-file: cannot remove /etc/shadow before the child writes it: Permission denied" "the reason"
expect_eq "$(sha256sum /etc/shadow)" "$shadow_before" "/etc/shadow untouched"
[[ $(cat "$WORK/daemon.log") != *"invalid pointer"* ]] || fail "the runner freed an invalid pointer"
run_alloclab 0 status

# What a job names is looked up with the submitter's permissions, not root's: a preload of
# /etc/shadow is refused at submission (root hashed and stored it on 63f6da7), and a cwd or a
# command in a directory the user cannot search fails the same whether it exists or not.
mkdir -m 0700 "$WORK/private"
mkdir "$WORK/private/exists"
cp /bin/true "$WORK/private/prog"
LIBC=$(ldd /bin/true | awk '/libc\.so/ {print $3}') # a library anyone may preload
submit_as_nobody() { # YAML-BODY: prints the daemon's answer
    printf 'experiment: probing\nallocators: {x: {preload: %s}}\nsamples: 1\nprobe: never\n%s\n' "$1" "$2" \
        >"$WORK/user/probing.yaml"
    chmod 0644 "$WORK/user/probing.yaml"
    (cd "$WORK/user" && as_nobody "$ALLOCLAB" submit probing.yaml 2>&1) || true
}
out=$(submit_as_nobody /etc/shadow "command: [/bin/true]")
expect_contains "$out" "cannot preload /etc/shadow: Permission denied" "a preload the user cannot read"
expect_eq "$(q "SELECT count(*) FROM allocators WHERE path = '/etc/shadow'")" 0 "nothing of /etc/shadow stored"
exists=$(submit_as_nobody "$LIBC" "command: [/bin/true]
cwd: $WORK/private/exists")
missing=$(submit_as_nobody "$LIBC" "command: [/bin/true]
cwd: $WORK/private/missing")
expect_eq "${exists//exists/X}" "${missing//missing/X}" "a private cwd's existence is not revealed"
[[ $exists != *queued* ]] || fail "a cwd the user cannot enter was accepted: $exists"
exists=$(submit_as_nobody "$LIBC" "command: [$WORK/private/prog]")
missing=$(submit_as_nobody "$LIBC" "command: [$WORK/private/nope]")
expect_eq "${exists//prog/X}" "${missing//nope/X}" "a private program's existence is not revealed"
expect_contains "$exists" "Permission denied" "a program the user cannot reach"

# A relative command, from the submitter's directory.
out=$(cd "$WORK/user" && as_nobody "$ALLOCLAB" submit --wait relative.yaml 2>&1) || fail "relative command: $out"
expect_contains "$out" "job $((job + 1)) done" "the relative command ran"
expect_contains "$out" "which you cannot read" "the table is root's, and the user is told so"
expect_eq "$(q "SELECT DISTINCT s.status FROM samples s JOIN jobs j ON j.run_id = s.run_id WHERE j.id = $((job + 1))")" ok \
    "samples of the relative command"

# A client that sends Queue requests and never reads: the daemon's memory stays bounded (it
# grew ~45 MB/s on 63f6da7) and another client is answered meanwhile. Long spec paths make each
# reply large.
yaml=$(python3 -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()))' "$WORK/user/relative.yaml")
python3 - "$ALLOCLAB_SOCKET" "$WORK/user" "$yaml" <<'PY'
import json, socket, sys
path, cwd, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
for i in range(40):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    req = {"method": "io.alloclab.Submit", "parameters": {
        "spec_path": cwd + "/" + ("x" * 4000) + str(i), "spec": spec, "cwd": cwd, "env": ["PATH=/usr/bin:/bin"]}}
    s.sendall(json.dumps(req).encode() + b"\0")
    reply = b""
    while not reply.endswith(b"\0"):
        reply += s.recv(65536)
    assert b'"job"' in reply, reply
    s.close()
PY
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$daemon_pid/status"; }
before=$(rss_kib)
python3 - "$ALLOCLAB_SOCKET" <<'PY' &
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.setblocking(False)
req = json.dumps({"method": "io.alloclab.Queue", "parameters": {"limit": 10000}}).encode() + b"\0"
end = time.time() + 4
while time.time() < end:
    try:
        s.send(req)
    except BlockingIOError:
        time.sleep(0.01)
PY
flooder=$!
sleep 2
run_alloclab 0 status
wait "$flooder" || true
after=$(rss_kib)
(( after - before < 32 * 1024 )) || fail "the daemon grew from $before KiB to $after KiB for a client that does not read"
echo "daemon RSS $before KiB -> $after KiB under a non-reading client"
kill -0 "$daemon_pid" || fail "the daemon died"

# A burst from two submitters is checked in one batch, with one identity switch per submitter:
# each submission still with its own submitter's permissions. Root may run the private
# program, nobody may not. The daemon is stopped while 24 of each connect and send, so that it
# finds all 48 requests at once.
mixed_jobs=$(python3 - "$ALLOCLAB_SOCKET" "$WORK/private/prog" "$nobody" "$nogroup" "$daemon_pid" <<'PY'
import json, os, signal, socket, sys
path, prog, uid, gid, daemon = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
spec = "experiment: mixed\ncommand: [%s]\nallocators: {glibc: {}, jemalloc: {preload: jemalloc}}\nprobe: never\n" % prog
req = json.dumps({"method": "io.alloclab.Submit", "parameters": {
    "spec_path": "/tmp/mixed.yaml", "spec": spec, "cwd": "/", "env": ["PATH=/usr/bin:/bin"]}}).encode() + b"\0"
def submit_all():
    socks = []
    for _ in range(24):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(req)
        socks.append(s)
    return socks
def answers(socks):
    out = []
    for s in socks:
        data = b""
        while not data.endswith(b"\0"):
            chunk = s.recv(65536)
            assert chunk, "connection closed without an answer"
            data += chunk
        out.append(json.loads(data[:-1]))
    return out
os.kill(daemon, signal.SIGSTOP)
try:
    sent_r, sent_w = os.pipe()
    child = os.fork()
    if child == 0:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        socks = submit_all()
        os.write(sent_w, b"x")
        bad = [a for a in answers(socks) if "Permission denied" not in a.get("parameters", {}).get("message", "")]
        os._exit(1 if bad else 0)
    socks = submit_all()
    os.read(sent_r, 1)
finally:
    os.kill(daemon, signal.SIGCONT)
root = answers(socks)
_, status = os.waitpid(child, 0)
assert all("job" in a.get("parameters", {}) for a in root), [a for a in root if "job" not in a.get("parameters", {})][:1]
assert status == 0, "a submission by nobody was not refused with Permission denied"
print(" ".join(str(a["parameters"]["job"]) for a in root))
PY
) || fail "a burst of two submitters"
for j in $mixed_jobs; do "$ALLOCLAB" cancel "$j" >/dev/null; done

# A reader of the daemon's database (a member of its group, here: a readable copy of its mode)
# with the daemon stopped: SQLite cannot make the -shm file in a directory the reader may not
# write to, so the database is read as immutable (it failed with "attempt to write a readonly
# database" on 63f6da7).
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
[[ ! -e $DB-wal ]] || fail "the daemon left its WAL behind"
chmod 0755 "$WORK/db"
chmod 0644 "$DB"
run=$(q "SELECT max(id) FROM runs WHERE status = 'done'")
out=$(cd /tmp && as_nobody env ALLOCLAB_DB="$DB" "$ALLOCLAB" show "$run" 2>&1) || fail "show as a reader: $out"
expect_contains "$out" "run $run: done" "a reader of a stopped daemon's database"

# A reader of another user's database in a shared directory (sticky, writable by all): SQLite
# made the -wal and -shm files as the reader, and the owner could not write to their database
# afterwards ("attempt to write a readonly database"). Read as immutable, nothing is left; an
# export from it reads it the same way (it said "no such database: source").
mkdir -m 1777 "$WORK/shared-db"
cat >"$WORK/shared-db/tiny.yaml" <<YAML
experiment: shared-reader
command: [/bin/true]
allocators: {glibc: {}}
samples: 2
warmup: 0
probe: never
quiet: off
YAML
chmod 0644 "$WORK/shared-db/tiny.yaml"
shared="$WORK/shared-db/owner.db"
(cd /tmp && as_other "$ALLOCLAB" run "$WORK/shared-db/tiny.yaml" --db "$shared" --quiet) >"$WORK/owner.out" 2>&1 ||
    fail "a run as its owner: $(cat "$WORK/owner.out")"
chmod 0644 "$shared"
out=$(cd /tmp && as_nobody "$ALLOCLAB" runs --db "$shared" 2>&1) || fail "runs as another reader: $out"
expect_contains "$out" "shared-reader" "another user reads the database"
out=$(cd /tmp && as_nobody "$ALLOCLAB" export 1 --db "$shared" --bundle "$WORK/shared-db/by-nobody.bundle" 2>&1) ||
    fail "export as another reader: $out"
expect_eq "$(sqlite3 "$WORK/shared-db/by-nobody.bundle" "SELECT experiment_id IS NOT NULL FROM runs")" 1 "the run in the bundle"
expect_eq "$(ls "$WORK/shared-db" | grep -c -e '-wal$' -e '-shm$')" 0 "side files a reader left: $(ls -l "$WORK/shared-db")"
(cd /tmp && as_other "$ALLOCLAB" run "$WORK/shared-db/tiny.yaml" --db "$shared" --quiet) >"$WORK/owner.out" 2>&1 ||
    fail "the owner's run after another user read: $(cat "$WORK/owner.out")"
# A database another user may not read: whose it is, not SQLite's "unable to open database file".
chmod 0640 "$shared"
out=$(cd /tmp && as_nobody "$ALLOCLAB" runs --db "$shared" 2>&1) && fail "nobody read a 0640 database: $out"
expect_contains "$out" "cannot read database $shared: permission denied: it is for daemon and the members of group $(id -gn daemon)" \
    "a database the reader may not read"
