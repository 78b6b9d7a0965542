#!/bin/bash
# One measurer per database and one daemon per socket: a second alloclabd on the same database
# or socket refuses to start (it used to take over the socket); a burst of submitters is
# acknowledged in full; alloclab run refuses a database that alloclabd measures into, and two alloclab run on one database take turns, the second
# saying whom it waits for; their runs never overlap.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
export ALLOCLAB_SOCKET="$WORK/a.sock"
"$ALLOCLABD" --db "$DB" --socket "$WORK/a.sock" --specs-dir "$WORK/none" 2>"$WORK/a.log" &
pids+=($!)
for _ in $(seq 100); do "$ALLOCLAB" status >/dev/null 2>&1 && break; sleep 0.05; done
run_alloclab 0 status

rc=0
timeout 10 "$ALLOCLABD" --db "$DB" --socket "$WORK/b.sock" --specs-dir "$WORK/none" 2>"$WORK/b.log" || rc=$?
(( rc != 0 )) || fail "a second daemon started on the same database"
expect_contains "$(cat "$WORK/b.log")" "is in use by alloclabd, pid ${pids[0]}" "the second daemon names the first"
rc=0
timeout 10 "$ALLOCLABD" --db "$WORK/other.db" --socket "$WORK/a.sock" --specs-dir "$WORK/none" 2>"$WORK/c.log" || rc=$?
(( rc != 0 )) || fail "a second daemon started on the same socket"
expect_contains "$(cat "$WORK/c.log")" "cannot listen on $WORK/a.sock: alloclabd, pid ${pids[0]}, answers on it" \
    "the socket is not taken over, and its daemon is named"
# ... and it made nothing (it left other.db and its lock file), nor took the socket of the first.
expect_eq "$(ls "$WORK" | grep -c other)" 0 "what the second daemon on a socket made"
[[ ! -e $WORK/b.sock ]] || fail "the daemon refused on the database left its socket"
run_alloclab 0 status
expect_contains "$OUT" "idle" "the first daemon still answers on its socket"

# More submitters at once than the daemon has connection slots (64): every one is acknowledged
# (a working connection was closed to make room for the next on 63f6da7). bench/submit-latency.sh
# measures how fast.
printf 'experiment: burst\ncommand: [/bin/true]\nallocators: {glibc: {}}\nsamples: 1\nprobe: never\n' >"$WORK/burst.yaml"
python3 - "$WORK/a.sock" "$WORK/burst.yaml" 150 <<'PY' || fail "a burst of submitters"
import asyncio, json, os, sys
path, spec_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
req = json.dumps({"method": "io.alloclab.Submit", "parameters": {"spec_path": spec_path,
      "spec": open(spec_path).read(), "cwd": os.path.dirname(spec_path), "env": []}}).encode() + b"\0"
async def submit():
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(req)
    await writer.drain()
    reply = json.loads((await reader.readuntil(b"\0"))[:-1])
    writer.close()
    return reply
async def pipelined(k):
    # k Submits in one write: each is answered, in order, with a job of its own.
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(req * k)
    await writer.drain()
    replies = [json.loads((await reader.readuntil(b"\0"))[:-1]) for _ in range(k)]
    writer.close()
    return replies
async def main():
    replies = await asyncio.gather(*(submit() for _ in range(n)), return_exceptions=True)
    bad = [r for r in replies if not isinstance(r, dict) or "job" not in r.get("parameters", {})]
    assert not bad, f"{len(bad)} of {n} submitters not acknowledged, e.g. {bad[0]!r}"
    batches = await asyncio.gather(*(pipelined(3) for _ in range(20)))
    ids = [r["parameters"]["job"] for b in batches for r in b]
    assert len(set(ids)) == 60, f"pipelined submissions: {len(set(ids))} distinct jobs of 60"
asyncio.run(main())
PY

# A request cut in two, its rest sent with a whole second one: both answered, in order (the
# daemon serves whole requests from a shared buffer and keeps only what is left over).
python3 - "$WORK/a.sock" <<'PY' || fail "a request in pieces"
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
ping = json.dumps({"method": "io.alloclab.Ping"}).encode() + b"\0"
status = json.dumps({"method": "io.alloclab.Status"}).encode() + b"\0"
s.sendall(ping[:9])
time.sleep(0.2)
s.sendall(ping[9:] + status)
data = b""
while data.count(b"\0") < 2:
    chunk = s.recv(65536)
    assert chunk, "closed"
    data += chunk
first, second = (json.loads(m) for m in data.split(b"\0")[:2])
assert "version" in first["parameters"], first
assert "state" in second["parameters"], second
PY
expect_eq "$(q "SELECT count(*) FROM jobs j WHERE j.spec_path = '$WORK/burst.yaml'")" 210 "150 + 60 jobs stored"
for id in $(q "SELECT id FROM jobs WHERE status IN ('queued', 'running')"); do "$ALLOCLAB" cancel "$id" >/dev/null 2>&1 || true; done
for _ in $(seq 100); do [[ $(q "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')") == 0 ]] && break; sleep 0.05; done

cat >"$WORK/slow.yaml" <<YAML
experiment: slow
command: ["$WORKLOAD", sleep, "150"]
allocators: {glibc: {}}
samples: 3
warmup: 0
probe: never
YAML
run_alloclab 4 run "$WORK/slow.yaml" --quiet
expect_contains "$ERR" "is measured into by alloclabd, pid ${pids[0]}" "alloclab run on the daemon's database"
kill -TERM "${pids[0]}"
wait "${pids[0]}" || true

"$ALLOCLAB" run "$WORK/slow.yaml" --quiet >"$WORK/first.out" 2>&1 &
first=$!
pids+=("$first")
for _ in $(seq 100); do [[ -s "$DB.lock" ]] && grep -q "pid $first" "$DB.lock" && break; sleep 0.02; done
"$ALLOCLAB" run "$WORK/slow.yaml" --quiet >"$WORK/second.out" 2>"$WORK/second.err" || fail "second run: $(cat "$WORK/second.err")"
wait "$first" || fail "first run: $(cat "$WORK/first.out")"
expect_contains "$(cat "$WORK/second.err")" "waiting for alloclab run, pid $first" "the second run says whom it waits for"
expect_eq "$(q "SELECT count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'slow' AND r.status = 'done'")" 2 "both runs done"
expect_eq "$(q "SELECT count(*) FROM runs a JOIN runs b ON a.id < b.id WHERE b.started_at < a.ended_at AND a.experiment_id = b.experiment_id")" 0 \
    "the runs did not overlap"

# Two first runs on a new database at once (issue 25): both migrate it, one after the other; the
# second failed with "cannot migrate ... table hosts already exists" every time.
printf 'experiment: first\ncommand: [/bin/true]\nallocators: {glibc: {}}\nsamples: 1\nwarmup: 0\nprobe: never\n' \
    >"$WORK/first.yaml"
for i in 1 2 3 4 5; do
    fresh="$WORK/fresh-$i.db"
    "$ALLOCLAB" run "$WORK/first.yaml" --quiet --db "$fresh" >"$WORK/a$i.out" 2>&1 &
    a=$!
    "$ALLOCLAB" run "$WORK/first.yaml" --quiet --db "$fresh" >"$WORK/b$i.out" 2>&1 &
    b=$!
    wait "$a" || fail "the first of two first runs: $(cat "$WORK/a$i.out")"
    wait "$b" || fail "the second of two first runs: $(cat "$WORK/b$i.out")"
    expect_eq "$(sqlite3 "$fresh" "SELECT count(*) FROM runs WHERE status = 'done'")" 2 "two runs on a database made at once"
done
