#!/bin/bash
# alloclab under Slurm (contrib/slurm, docs/fleet.md), on a cluster made here: munged,
# slurmctld and two slurmd on loopback, node1 and node2, each in its own mount and UTS namespace
# with its own host name and /etc/machine-id (so the two nodes have different host
# fingerprints). alloclab-fleet runs an experiment as one job over both nodes, one task each,
# and merges their bundles, night after night: the merged bundles import with both machines,
# their Slurm cluster, job and node recorded, and history and fleet show each machine's runs in
# the order they ran. node1's host name changes between nights and its series goes on under its
# machine name (the Slurm node name); node2 comes back with another machine-id, and import
# refuses or splits it as the policy says. A night whose node is busy never starts, and the
# merge says so and fails. Then scancel mid-run: the run is interrupted, and its committed
# samples import intact. Needs root and slurm-wlm and munge (installed by scripts/deps.sh).
. "$(dirname "$0")/lib.sh"

if [[ $(id -u) != 0 ]]; then
    skip_test "needs root to start munged, slurmctld and slurmd"
fi
for tool in munged slurmctld slurmd sbatch squeue scancel sinfo unshare; do
    if ! command -v $tool >/dev/null; then
        skip_test "$tool is missing (apt-get install slurm-wlm munge)"
    fi
done
test_scope_start || skip_test "needs a cgroup v2 of its own, to end every process the cluster starts"
FLEET=$(cd "$(dirname "$0")/../../contrib/slurm" && pwd)/alloclab-fleet
NIGHTLY=${FLEET%/*}/alloclab-nightly
start=$SECONDS

# Four free ports on loopback.
read -r CTLD_PORT SLURMD_PORT PORT1 PORT2 < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')

C=$WORK/cluster
mkdir -p "$C/state" "$C/munge" "$WORK/bundles" "$WORK/nodes"
chmod 0711 "$C/munge"
head -c 1024 /dev/urandom >"$C/munge/munge.key"
chmod 0400 "$C/munge/munge.key"
export SLURM_CONF=$C/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=alloclabtest
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
AuthInfo=socket=$C/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool-%n
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd-%n.pid
SlurmctldLogFile=$C/slurmctld.log
SlurmdLogFile=$C/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/linear
MpiDefault=none
ReturnToService=2
KillWait=20
NodeName=node1 NodeHostname=node1 NodeAddr=127.0.0.1 Port=$PORT1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
NodeName=node2 NodeHostname=node2 NodeAddr=127.0.0.1 Port=$PORT2 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
EOF

# Every daemon runs in the foreground as a child of this script, in a cgroup of the test's own,
# so that the teardown kills and reaps each one, and ends whatever they started (slurmstepd
# outlives slurmd): nothing is left behind, and the namespaces (with their bind mounts) go with
# the last process in them.
pids=()
teardown() {
    scancel --quiet --partition=test 2>/dev/null || true
    for _ in $(seq 100); do
        [[ -z $(squeue -h 2>/dev/null) ]] && break
        sleep 0.2
    done
    ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null
    ((${#pids[@]})) && wait "${pids[@]}" 2>/dev/null
    test_scope_end # the slurmstepd processes slurmd left, and whatever else of the cluster's
    rm -rf "$WORK"
}
trap teardown EXIT
test_scope_run munged --foreground --force --key-file="$C/munge/munge.key" --socket="$C/munge/munge.sock" \
    --pid-file="$C/munge/munged.pid" --log-file="$C/munge/munged.log" --seed-file="$C/munge/seed" \
    2>>"$C/munge/munged.err" &
pids+=($!)
for _ in $(seq 50); do [[ -S $C/munge/munge.sock ]] && break; sleep 0.1; done
test_scope_run slurmctld -D -i -f "$SLURM_CONF" 2>>"$C/slurmctld.err" &
pids+=($!)
# start_node N HOSTNAME MACHINE_ID: slurmd of node N in namespaces of its own (node_pid[N]).
declare -A node_pid
start_node() {
    printf '%032x\n' "$3" >"$C/machine-id-$1-$3"
    mkdir -p "$C/spool-node$1"
    test_scope_run unshare --mount --uts --propagation private sh -c \
        "hostname $2 && mount --bind $C/machine-id-$1-$3 /etc/machine-id && exec slurmd -D -N node$1 -f $SLURM_CONF" \
        2>>"$C/slurmd-node$1.err" &
    node_pid[$1]=$!
    pids+=($!)
}
stop_node() {
    kill -TERM "${node_pid[$1]}"
    wait "${node_pid[$1]}" 2>/dev/null || true
}
wait_idle() {
    for _ in $(seq 150); do
        [[ $(sinfo -h -o '%T %D' 2>/dev/null) == "idle 2" ]] && return 0
        sleep 0.2
    done
    fail "the cluster is not up: $(sinfo 2>&1; tail -5 "$C"/*.log)"
}
start_node 1 node1 1
start_node 2 node2 2
wait_idle

# wait_jobs: until the queue is empty.
wait_jobs() {
    for _ in $(seq 600); do
        [[ -z $(squeue -h) ]] && return 0
        sleep 0.2
    done
    fail "jobs still queued: $(squeue)"
}

# An experiment on both nodes, merged: night 1.
cat >"$WORK/spec.yaml" <<YAML
experiment: cluster
command: ["$WORKLOAD", which]
params: {n: ["1", "2"]}
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 5
YAML
export ALLOCLAB ALLOCLAB_NODE_DIR=$WORK/nodes
# night: what cron runs each night, alloclab-nightly: the fleet, its merge, and the import into
# the history kept ($WORK/nightly.db); waits for them. $job is the fleet job.
night() {
    local out
    out=$("$NIGHTLY" "$WORK/spec.yaml" "$WORK/bundles" 2 "$WORK/nightly.db" --partition=test) ||
        fail "alloclab-nightly: $out"
    job=$(awk '{print $3}' <<<"${out%%,*}")
    wait_jobs
}
night
merged=$WORK/bundles/fleet-$job
[[ -e $merged.bundle ]] || fail "the merged bundle: $(cat "$merged.out" "$WORK/bundles/$job.out")"
expect_contains "$(cat "$merged.txt")" "fleet: cluster on 2 machines" "the merge job's fleet table"
expect_eq "$(ls "$WORK/bundles" | grep -c "^$job-")" 0 "the per-node bundles, merged, are gone"
expect_eq "$(ls "$WORK/nodes")" "" "the per-node databases, in their bundles, are gone"

run_alloclab 0 import "$merged.bundle"
expect_eq "$(q "SELECT r.machine, h.hostname, r.status, r.slurm_node, r.slurm_cluster, r.slurm_partition,
                       r.slurm_job_id FROM runs r JOIN hosts h ON h.id = r.host_id ORDER BY r.machine")" \
    "node1|node1|done|node1|alloclabtest|test|$job
node2|node2|done|node2|alloclabtest|test|$job" "a run per machine, with its Slurm cluster, partition, job and node"
expect_eq "$(q "SELECT count(DISTINCT host_fingerprint) FROM runs")" 2 "two host fingerprints"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'sample' AND status = 'ok'")" 40 "every sample"
run_alloclab 0 fleet cluster
expect_contains "$OUT" "fleet: cluster on 2 machines" "fleet"
run_alloclab 7 compare 1 2
expect_contains "$OUT" "NOT COMPARABLE" "runs of two nodes"
run_alloclab 0 import "$merged.bundle"
expect_contains "$OUT" "imported 0 runs (0 samples) from 1 file; 2 already here" "the same bundle again"
night1=$merged
expect_contains "$(cat "$WORK/bundles/nightly-fleet.txt")" "fleet: cluster on 2 machines" "the night's import and table"

# Night 2: node1 has another host name; its runs stay its machine's, node1.
stop_node 1
start_node 1 node1-renamed 1
wait_idle
night
night2=$WORK/bundles/fleet-$job
expect_contains "$(cat "$night2.txt")" "node1-renamed" "the merge's table names the host"
expect_eq "$(cat "$WORK/bundles/then-$job.out")" "imported 2 runs (56 samples) from 1 file; 0 already here" \
    "the night's import"
# Two nights in the history cron keeps: each machine's runs in the order they ran.
run_alloclab 0 history cluster --variant jemalloc --cell n=1 --format csv --db "$WORK/nightly.db"
expect_eq "$(python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
assert all(a["started_at"] < b["started_at"] for a, b in zip(rows, rows[1:]) if a["machine"] == b["machine"])
print(" ".join(r["machine"] + ":" + r["host"] for r in rows))' <<<"$OUT")" \
    "node1:node1 node1:node1-renamed node2:node2 node2:node2" "two nights, per machine, in time order"
expect_contains "$(cat "$WORK/bundles/nightly-history.txt")" "last 4 finished runs" "the night's history"
run_alloclab 0 import "$night2.bundle"
run_alloclab 0 history cluster --variant jemalloc --cell n=1 --format csv
expect_eq "$(python3 -c '
import csv, sys
print(" ".join(r["machine"] + ":" + r["host"] for r in csv.DictReader(sys.stdin)))' <<<"$OUT")" \
    "node1:node1 node1:node1-renamed node2:node2 node2:node2" "one series per machine, across the host name change"
# Imported newest first, the nights still read in the order they ran.
run_alloclab 0 import "$night2.bundle" --db "$WORK/reversed.db"
run_alloclab 0 import "$night1.bundle" --db "$WORK/reversed.db"
run_alloclab 0 history cluster --variant jemalloc --cell n=1 --format csv --db "$WORK/reversed.db"
expect_eq "$(python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
print(" ".join(r["machine"] + ":" + ("night 1" if int(r["run_id"]) > 2 else "night 2") for r in rows))' <<<"$OUT")" \
    "node1:night 1 node1:night 2 node2:night 1 node2:night 2" "night 1 (imported last: runs 3, 4) before night 2"
run_alloclab 0 fleet cluster --db "$WORK/reversed.db"
expect_contains "$(grep '^node1 ' <<<"$OUT")" "node1-renamed  A      $(sqlite3 "$WORK/reversed.db" \
    "SELECT r.id FROM runs r JOIN hosts h ON h.id = r.host_id WHERE h.hostname = 'node1-renamed'")" \
    "fleet: node1's latest run is night 2's, imported first"

# Night 3: node2 is another machine (another machine-id) under the old name.
stop_node 2
start_node 2 node2 3
wait_idle
night
night3=$WORK/bundles/fleet-$job
expect_contains "$(cat "$WORK/bundles/then-$job.out")" "machine node2 has host fingerprint" \
    "the night's import refuses node2's new machine-id, and says so"
run_alloclab 4 import "$night3.bundle"
expect_contains "$ERR" "machine node2 has host fingerprint" "refused by default"
expect_contains "$ERR" "its machine-id differs: another machine under the same name?" "why"
run_alloclab 0 import "$night3.bundle" --machine-policy split
run_alloclab 0 import "$night3.bundle" --machine-policy split --db "$WORK/nightly.db" # the operator decides once
run_alloclab 0 fleet cluster
expect_contains "$OUT" "fleet: cluster on 3 machines" "node2's new machine split off"
expect_eq "$(q "SELECT count(*) FROM runs WHERE machine LIKE 'node2.%'")" 1 "as node2.FINGERPRINT"

# A busy night: node2 is taken, the fleet never starts; the next night's cron gives up on it
# (its merge fails loudly) and submits its own, which runs once node2 is free.
blocker=$(sbatch --parsable --partition=test --nodelist=node2 --exclusive --output=/dev/null --wrap "sleep 600")
out=$("$NIGHTLY" "$WORK/spec.yaml" "$WORK/bundles" 2 "$WORK/nightly.db" --partition=test) || fail "alloclab-nightly: $out"
busy=$(awk '{print $3}' <<<"${out%%,*}")
for _ in $(seq 100); do
    [[ $(squeue -h -j "$busy" -o %r 2>/dev/null) == Resources ]] && break
    sleep 0.2
done
expect_eq "$(squeue -h -j "$busy" -o '%T %r')" "PENDING Resources" "the fleet waits for both nodes"
out=$("$NIGHTLY" "$WORK/spec.yaml" "$WORK/bundles" 2 "$WORK/nightly.db" --partition=test 2>&1) ||
    fail "alloclab-nightly: $out"
expect_contains "$out" "cancelling fleet job $busy of an earlier night, still waiting for its nodes" "the next night"
job=$(awk '/^fleet job/ {print $3}' <<<"$out")
job=${job%,}
for _ in $(seq 300); do # the earlier night's merge and import ran
    [[ -s $WORK/bundles/then-$busy.out ]] && break
    sleep 0.2
done
scancel "$blocker"
wait_jobs
expect_contains "$(cat "$WORK/bundles/fleet-$busy.out")" \
    "0 machines finished a run of cluster in Slurm job alloclabtest:$busy, 2 were asked for" "the merge fails loudly"
expect_contains "$(cat "$WORK/bundles/then-$busy.out")" \
    "fleet job alloclabtest:$busy: no merged bundle: nothing measured tonight" "and the night's import"
expect_contains "$(cat "$WORK/bundles/fleet-$busy.out")" "the job never started: cancelled while it waited for its nodes" \
    "why"
[[ ! -e $WORK/bundles/fleet-$busy.bundle ]] || fail "a merged bundle of a fleet that never ran"
expect_contains "$(cat "$WORK/bundles/fleet-$job.txt")" "fleet: cluster on 2 machines" "the next night ran"
expect_eq "$(cat "$WORK/bundles/then-$job.out")" "imported 2 runs (56 samples) from 1 file; 0 already here; 1 filed apart as another machine (node2.$(sqlite3 "$WORK/nightly.db" "SELECT substr(machine, 7) FROM runs WHERE machine LIKE 'node2.%' LIMIT 1")): their machine name is known here with another host fingerprint" \
    "and its import filed node2's runs where the operator split them once, unasked, and said so"
expect_eq "$(sqlite3 "$WORK/nightly.db" "SELECT count(*) FROM runs WHERE machine LIKE 'node2.%'")" 2 "under node2.FINGERPRINT"

# A fleet the partition can never run is said at once, and cancelled.
out=$("$FLEET" "$WORK/spec.yaml" "$WORK/bundles" 3 --partition=test 2>&1) && fail "a fleet of 3 nodes of 2: $out"
expect_contains "$out" "can never start (" "a fleet of more nodes than the partition has"
expect_contains "$out" "does the partition have 3 nodes for it? (sinfo shows them); cancelled" "what to check"
wait_jobs

# scancel mid-run: the run is interrupted, and what it committed travels intact.
sed -e 's/^experiment: cluster/experiment: cancelled/' -e 's/^samples: 5/samples: 500/' \
    -e 's|command: \["'"$WORKLOAD"'", which\]|command: [/bin/sh, -c, "sleep 0.02; exec '"$WORKLOAD"' which"]|' \
    "$WORK/spec.yaml" >"$WORK/long.yaml"
export ALLOCLAB_NODE_DIR=$WORK/cancelled-node
mkdir "$ALLOCLAB_NODE_DIR"
out=$("$FLEET" "$WORK/long.yaml" "$WORK/bundles" 1 --partition=test) || fail "alloclab-fleet: $out"
job=$(awk '{print $3}' <<<"${out%%,*}")
node_db=
for _ in $(seq 300); do
    node_db=$(compgen -G "$ALLOCLAB_NODE_DIR/alloclab-*.db" | head -1 || true)
    [[ -n $node_db ]] && (($(sqlite3 "$node_db" "SELECT count(*) FROM samples" 2>/dev/null || echo 0) >= 10)) && break
    sleep 0.1
done
[[ -n $node_db ]] || fail "the task never measured: $(squeue; cat "$WORK/bundles"/*.out)"
scancel "$job"
wait_jobs
expect_eq "$(sqlite3 "$node_db" "SELECT status FROM runs")" interrupted "the cancelled run"
committed=$(sqlite3 "$node_db" "SELECT count(*) FROM samples")
run_alloclab 0 import "$WORK/bundles/fleet-$job.bundle" --db "$WORK/cancelled.db"
expect_eq "$(sqlite3 "$WORK/cancelled.db" "SELECT status, (SELECT count(*) FROM samples) FROM runs")" \
    "interrupted|$committed" "the interrupted run with every committed sample"
expect_eq "$(sqlite3 "$WORK/cancelled.db" "PRAGMA integrity_check")" ok "integrity"
expect_contains "$(cat "$WORK/bundles/fleet-$job.out")" \
    "0 machines finished a run of cancelled in Slurm job alloclabtest:$job (none), 1 was asked for" \
    "the merge of a cancelled fleet fails, its interrupted run merged"
echo "slurm test: $((SECONDS - start)) s"
