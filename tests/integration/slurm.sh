#!/bin/bash
# alloclab under Slurm (contrib/slurm, docs/fleet.md), on a cluster made here: munged,
# slurmctld and two slurmd on loopback, node1 and node2, each in its own mount and UTS namespace
# with its own host name and /etc/machine-id (so the two nodes have different host
# fingerprints). alloclab-fleet runs an experiment as a job array on both nodes and merges their
# bundles; the merged bundle imports with both hosts, their Slurm job and node recorded, and
# `fleet` shows them. Then scancel mid-run: the run is interrupted, and its committed samples
# import intact. Needs root and slurm-wlm and munge (installed by scripts/deps.sh).
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
for n in 1 2; do
    printf '%032x\n' "$n" >"$C/machine-id-$n"
    mkdir -p "$C/spool-node$n"
    test_scope_run unshare --mount --uts --propagation private sh -c \
        "hostname node$n && mount --bind $C/machine-id-$n /etc/machine-id && exec slurmd -D -N node$n -f $SLURM_CONF" \
        2>>"$C/slurmd-node$n.err" &
    pids+=($!)
done
for _ in $(seq 150); do
    [[ $(sinfo -h -o '%T %D' 2>/dev/null) == "idle 2" ]] && break
    sleep 0.2
done
[[ $(sinfo -h -o '%T %D') == "idle 2" ]] || fail "the cluster did not come up: $(sinfo 2>&1; tail -5 "$C"/*.log)"

# wait_jobs: until the queue is empty.
wait_jobs() {
    for _ in $(seq 600); do
        [[ -z $(squeue -h) ]] && return 0
        sleep 0.2
    done
    fail "jobs still queued: $(squeue)"
}

# An experiment on both nodes, merged.
cat >"$WORK/spec.yaml" <<YAML
experiment: cluster
command: ["$WORKLOAD", which]
params: {n: ["1", "2"]}
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 5
YAML
export ALLOCLAB ALLOCLAB_NODE_DIR=$WORK/nodes
out=$("$FLEET" "$WORK/spec.yaml" "$WORK/bundles" 2 --partition=test) || fail "alloclab-fleet: $out"
array=$(awk '{print $3}' <<<"$out")
wait_jobs
ls "$WORK/bundles/$array-0-"node?.bundle "$WORK/bundles/$array-1-"node?.bundle >/dev/null ||
    fail "a bundle per task: $(ls "$WORK/bundles"; cat "$WORK/bundles"/*.out)"
[[ -e $WORK/bundles/fleet-$array.bundle ]] || fail "the merged bundle: $(cat "$WORK/bundles/fleet-$array.out")"
expect_contains "$(cat "$WORK/bundles/fleet-$array.txt")" "fleet: cluster on 2 hosts" "the merge job's fleet table"

run_alloclab 0 import "$WORK/bundles/fleet-$array.bundle"
expect_eq "$(q "SELECT h.hostname, r.status, r.slurm_node, r.slurm_array_task_id IS NOT NULL,
                       r.slurm_job_id IS NOT NULL FROM runs r JOIN hosts h ON h.id = r.host_id ORDER BY h.hostname")" \
    "node1|done|node1|1|1
node2|done|node2|1|1" "a run per node, with its Slurm job and node"
expect_eq "$(q "SELECT count(DISTINCT host_fingerprint) FROM runs")" 2 "two host fingerprints"
expect_eq "$(q "SELECT count(*) FROM samples WHERE phase = 'sample' AND status = 'ok'")" 40 "every sample"
run_alloclab 0 fleet cluster
expect_contains "$OUT" "fleet: cluster on 2 hosts" "fleet"
expect_contains "$(grep '^node1 ' <<<"$OUT")" "node1" "node1 listed"
expect_contains "$(grep '^node2 ' <<<"$OUT")" "node2" "node2 listed"
run_alloclab 7 compare 1 2
expect_contains "$OUT" "NOT COMPARABLE" "runs of two nodes"
run_alloclab 0 import "$WORK/bundles/fleet-$array.bundle"
expect_contains "$OUT" "imported 0 runs (0 samples) from 1 file; 2 already here" "the same bundle again"

# scancel mid-run: the run is interrupted, and what it committed travels intact.
sed -e 's/^experiment: cluster/experiment: cancelled/' -e 's/^samples: 5/samples: 500/' \
    -e 's|command: \["'"$WORKLOAD"'", which\]|command: [/bin/sh, -c, "sleep 0.02; exec '"$WORKLOAD"' which"]|' \
    "$WORK/spec.yaml" >"$WORK/long.yaml"
export ALLOCLAB_NODE_DIR=$WORK/cancelled-node
mkdir "$ALLOCLAB_NODE_DIR"
out=$("$FLEET" "$WORK/long.yaml" "$WORK/bundles" 1 --partition=test) || fail "alloclab-fleet: $out"
array=$(awk '{print $3}' <<<"$out")
node_db=
for _ in $(seq 300); do
    node_db=$(compgen -G "$ALLOCLAB_NODE_DIR/alloclab-*.db" | head -1 || true)
    [[ -n $node_db ]] && (($(sqlite3 "$node_db" "SELECT count(*) FROM samples" 2>/dev/null || echo 0) >= 10)) && break
    sleep 0.1
done
[[ -n $node_db ]] || fail "the task never measured: $(squeue; cat "$WORK/bundles"/*.out)"
scancel "$array"
wait_jobs
expect_eq "$(sqlite3 "$node_db" "SELECT status FROM runs")" interrupted "the cancelled run"
committed=$(sqlite3 "$node_db" "SELECT count(*) FROM samples")
run_alloclab 0 import "$WORK/bundles/fleet-$array.bundle" --db "$WORK/cancelled.db"
expect_eq "$(sqlite3 "$WORK/cancelled.db" "SELECT status, (SELECT count(*) FROM samples) FROM runs")" \
    "interrupted|$committed" "the interrupted run with every committed sample"
expect_eq "$(sqlite3 "$WORK/cancelled.db" "PRAGMA integrity_check")" ok "integrity"
echo "slurm test: $((SECONDS - start)) s"
