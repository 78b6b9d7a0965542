#!/bin/bash
# A cgroup per child (runner/cgroup.h): a setsid() daemon the child leaves behind is counted and
# killed, at a normal exit and at a timeout; a daemon's CPU time is in the child's figure though
# nobody wait()ed for it; the run's cgroups are gone afterwards. Without cgroups
# (ALLOCLAB_CGROUP_ROOT=off) the run says why, measures from rusage and goes on.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

cat >"$WORK/spec.yaml" <<YAML
experiment: isolation
command: ["$WORKLOAD", daemon, "$WORK/left.pid", "0"]
allocators:
  left: {}
  spin: {command: ["$WORKLOAD", daemon, "$WORK/spin.pid", "400"]}
  hung: {command: ["sh", "-c", "$WORKLOAD daemon $WORK/hung.pid 0; sleep 60"]}
samples: 1
warmup: 0
timeout: 2s
YAML

# Daemons of this test that outlived the run, by the PID files they wrote.
survivors() {
    local f pid
    for f in "$WORK"/*.pid; do
        pid=$(cat "$f")
        if [[ -e /proc/$pid ]] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
            echo "$(basename "$f" .pid):$pid"
        fi
    done
}
# Gives init a moment to reap what was killed.
settle() {
    for _ in $(seq 30); do
        [[ -z "$(survivors)" ]] && return
        sleep 0.1
    done
}

run_alloclab 9 run "$WORK/spec.yaml" --quiet
cgroup=$(q "SELECT cgroup FROM runs WHERE id = 1")
if [[ -z "$cgroup" ]]; then
    # Not every machine lets alloclab create cgroups: then the run must say why.
    expect_contains "$(q "SELECT cgroup_fallback FROM runs WHERE id = 1")" " " "why there is no cgroup"
    echo "no cgroups on this machine: $(q "SELECT cgroup_fallback FROM runs WHERE id = 1")"
    for f in "$WORK"/*.pid; do kill -9 "$(cat "$f")" 2>/dev/null || true; done
    exit 0
fi

# hung times out in its smoke run and is excluded from timing: one sample.
expect_eq "$(q "SELECT v.name, s.phase, s.status, s.leftover, s.leftover_processes, s.cpu_source
                FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name <> 'spin'
                ORDER BY v.position, s.id")" \
    "left|smoke|ok|1|1|cgroup
left|sample|ok|1|1|cgroup
hung|smoke|timeout|1|2|cgroup" "daemons counted (hung: the shell and the daemon)"
settle
expect_eq "$(survivors)" "" "daemons killed with their cgroup"

# 400 ms of CPU in a daemon nobody waited for: in the cgroup's figure, not in rusage.
expect_eq "$(q "SELECT s.cpu_us >= 400000, s.user_us + s.sys_us < 200000, s.cpu_source, s.memory_source
                FROM samples s JOIN variants v ON v.id = s.variant_id WHERE v.name = 'spin' AND s.status = 'ok'")" \
    "1|1|cgroup|rusage
1|1|cgroup|rusage" "daemon CPU time counted"
[[ ! -e "$cgroup" ]] || fail "the run's cgroup $cgroup is still there: $(ls "$cgroup" | grep step; cat "$cgroup"/step-*/cgroup.events "$cgroup"/step-*/cgroup.procs)"
run_alloclab 0 show 1
expect_contains "$OUT" "isolation: children in a cgroup (emptied between them) under $cgroup" "show names the cgroup"

# A service that owns its cgroup (systemd's Delegate=yes): alloclabd, alone in a cgroup, moves into
# a "supervisor" leaf of it, and the runs' cgroups go next to that leaf.
service="$(dirname "$cgroup")/alloclab-test-service-$$"
mkdir "$service"
export ALLOCLAB_SOCKET="$WORK/ctl.sock"
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" --db "$3"' sh "$service" "$ALLOCLABD" "$DB" 2>"$WORK/daemon.log" &
daemon=$!
stop_daemon() {
    kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
    rmdir "$service/supervisor" "$service" 2>/dev/null || true
}
trap 'stop_daemon; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do [[ -S $ALLOCLAB_SOCKET ]] && break; sleep 0.05; done
expect_eq "$(sed -n 's/^0:://p' "/proc/$daemon/cgroup")" "$(sed -n 's/^0:://p' /proc/self/cgroup | sed 's|/$||')/alloclab-test-service-$$/supervisor" \
    "the daemon moved into its supervisor leaf"
cat >"$WORK/service.yaml" <<YAML
experiment: delegated
command: ["$WORKLOAD", daemon, "$WORK/service.pid", "100"]
allocators: {glibc: {}}
samples: 1
warmup: 0
YAML
run_alloclab 0 submit "$WORK/service.yaml"
job=$(grep -o '[0-9]*' <<<"$OUT")
for _ in $(seq 200); do [[ $(q "SELECT status FROM jobs WHERE id = $job") == done ]] && break; sleep 0.05; done
expect_eq "$(q "SELECT r.cgroup LIKE '$service/alloclab-$daemon-%' FROM runs r JOIN jobs j ON j.run_id = r.id WHERE j.id = $job")" \
    1 "the run's cgroup is in the service's"
expect_eq "$(q "SELECT DISTINCT s.cpu_source, s.cpu_us >= 100000 FROM samples s JOIN jobs j ON j.run_id = s.run_id WHERE j.id = $job")" \
    "cgroup|1" "its children measured in cgroups"
stop_daemon
unset ALLOCLAB_SOCKET

# Limits, enforced on each child's tree, or the run does not start. memory_max needs the memory
# controller in cgroup v2; pids_max the pids controller in v2 or, on hosts that mount both, in v1
# (the development VMs: there memory and pids are v1 controllers, so memory_max is refused and
# pids_max goes through the v1 stand-in).
cat >"$WORK/limits.yaml" <<YAML
experiment: limits
command: ["$WORKLOAD", touch, "64", "0"]
allocators:
  small: {}
  forks: {command: [sh, -c, "for i in 1 2 3 4 5 6 7 8; do sleep 0.2 & done; wait"]}
  # Three processes at most, but each run leaves an orphan that init reaps when it gets to it:
  # until then it still counts against pids.max, and must not against the next child's.
  orphans: {command: ["$WORKLOAD", daemon, "$WORK/orphan.pid", "20"]}
verify: none
samples: 2
warmup: 0
pids_max: 4
YAML
controllers=$(cat "$(dirname "$cgroup")/cgroup.subtree_control")
if [[ $controllers == *pids* ]] || grep -q '^[0-9]*:pids:' /proc/self/cgroup; then
    run_alloclab 9 run "$WORK/limits.yaml" --quiet
    expect_eq "$(q "SELECT v.name, group_concat(DISTINCT s.status) FROM samples s JOIN variants v ON v.id = s.variant_id
                    WHERE s.run_id = (SELECT max(id) FROM runs) GROUP BY v.name ORDER BY v.position")" \
        "small|ok
forks|pids-limit
orphans|ok" "a fork loop stopped at pids_max, the run went on"
    expect_eq "$(q "SELECT status FROM runs WHERE id = (SELECT max(id) FROM runs)")" done "run done"
    if ! [[ $controllers == *pids* ]]; then # the v1 stand-in is gone with its run
        v1=/sys/fs/cgroup/pids$(sed -n 's/^[0-9]*:pids://p' /proc/self/cgroup | sed 's|^/$||')
        run_cgroup=$(q "SELECT cgroup FROM runs WHERE id = (SELECT max(id) FROM runs)")
        [[ ! -e "$v1/${run_cgroup##*/}" ]] || fail "the run's v1 pids cgroup is still there"
    fi
else
    runs_before=$(q "SELECT count(*) FROM runs")
    run_alloclab 4 run "$WORK/limits.yaml" --quiet
    expect_contains "$ERR" "pids_max needs the cgroup v2 pids controller" "an unenforceable pids limit"
    expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing written"
fi
sed -i 's/^pids_max: 4/memory_max: 32MiB/' "$WORK/limits.yaml"
if [[ $controllers == *memory* ]]; then
    run_alloclab 9 run "$WORK/limits.yaml" --quiet
    expect_eq "$(q "SELECT group_concat(DISTINCT s.status) FROM samples s JOIN variants v ON v.id = s.variant_id
                    WHERE s.run_id = (SELECT max(id) FROM runs) AND v.name = 'small'")" oom "memory_max"
else
    runs_before=$(q "SELECT count(*) FROM runs")
    run_alloclab 4 run "$WORK/limits.yaml" --quiet
    expect_contains "$ERR" "memory_max needs the cgroup v2 memory controller" "an unenforceable memory limit"
    expect_eq "$(q "SELECT count(*) FROM runs")" "$runs_before" "nothing written"
fi

# A child that makes cgroups below its own (and leaves a process in one): they are removed after
# each sample, depth first, without the 5 s stall per child that retrying rmdir on a cgroup with
# a cgroup below it cost on 63f6da7 (where the next child also found inner/ still there).
CG2=$(findmnt -n -t cgroup2 -o TARGET | head -1)
cat >"$WORK/nest.sh" <<'SH'
#!/bin/sh
d=$1$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir "$d/inner" || exit 1
mkdir "$d/inner/deeper" || exit 1
if [ "$2" = busy ]; then sh -c 'echo $$ >"$0/inner/deeper/cgroup.procs" && exec sleep 299.5' "$d" & fi
sleep "$3"
echo ok
SH
chmod +x "$WORK/nest.sh"
cat >"$WORK/nest.yaml" <<YAML
experiment: nest
command: ["$WORK/nest.sh", "$CG2", "{mode}", "0"]
params: {mode: [empty, busy]}
allocators: {glibc: {}}
samples: 3
warmup: 0
probe: never
YAML
t0=$(date +%s%N)
run_alloclab 0 run "$WORK/nest.yaml" --quiet
elapsed_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
expect_eq "$(q "SELECT group_concat(DISTINCT s.status) FROM samples s JOIN runs r ON r.id = s.run_id
                JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'nest'")" ok "every child made its cgroups anew"
(( elapsed_ms < 8000 )) || fail "8 children with nested cgroups took $elapsed_ms ms"
nest_cgroup=$(q "SELECT r.cgroup FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'nest'")
[[ ! -e $nest_cgroup ]] || fail "the run's cgroup is left: $(find "$nest_cgroup" -type d)"
sleeper() { # the PID of this test's "sleep 299.5", found by its PID file's neighbour: its cgroup
    local d pid
    for d in $(find "$CG2" -path "*/inner/deeper" -type d 2>/dev/null); do
        for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do
            [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == "sleep 299.5 " ]] && echo "$pid"
        done
    done
    return 0
}
[[ -z $(sleeper) ]] || fail "a process in a nested cgroup survived: $(sleeper)"

# A run killed with SIGKILL while its child holds a process two levels below its cgroup: the next
# run kills that process and removes the whole tree.
sed -i 's/"{mode}", "0"/"busy", "30"/; s/^samples: 3/samples: 1/' "$WORK/nest.yaml"
"$ALLOCLAB" run "$WORK/nest.yaml" --quiet >/dev/null 2>&1 &
killed=$!
for _ in $(seq 100); do [[ -n $(sleeper) ]] && break; sleep 0.05; done
[[ -n $(sleeper) ]] || fail "the nested process did not start"
kill -9 "$killed"
wait "$killed" 2>/dev/null || true
stale=$(q "SELECT r.cgroup FROM runs r WHERE r.id = (SELECT max(id) FROM runs)")
[[ -d $stale/children/inner/deeper ]] || fail "no nested cgroup left to clean: $(find "$stale" -type d)"
printf 'experiment: tiny\ncommand: [/bin/true]\nallocators: {glibc: {}}\nsamples: 1\nprobe: never\n' >"$WORK/tiny.yaml"
run_alloclab 0 run "$WORK/tiny.yaml" --quiet
[[ ! -e $stale ]] || fail "the dead run's cgroup tree is left: $(find "$stale" -type d)"
[[ -z $(sleeper) ]] || fail "the dead run's nested process survived: $(sleeper)"

# A run's cgroup directories are its own (mode 0700): another user who could open one could take
# its lock (runner/cgroup.c lock_run_dir) between mkdir and the run's flock, and make the run give
# the name up, or keep a dead run's tree from being removed. pids_max makes the v1 pids directory
# too where the pids controller is v1.
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
    nobody=$(id -u nobody)
    printf 'experiment: private\ncommand: ["%s", sleep, "1500"]\nallocators: {glibc: {}}\nsamples: 1\nwarmup: 0\nprobe: never\npids_max: 64\n' \
        "$WORKLOAD" >"$WORK/private.yaml"
    "$ALLOCLAB" run "$WORK/private.yaml" --quiet >"$WORK/private.out" 2>&1 &
    private=$!
    dir=
    for _ in $(seq 100); do
        dir=$(q "SELECT r.cgroup FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'private'")
        [[ -n $dir && -d $dir ]] && break
        sleep 0.05
    done
    [[ -n $dir ]] || fail "the run recorded no cgroup: $(cat "$WORK/private.out")"
    dirs=("$dir" "$dir/children")
    v1=$(awk -F: '$2 == "pids" { print $3 }' /proc/self/cgroup)
    [[ -n $v1 && -d /sys/fs/cgroup/pids$v1/${dir##*/} ]] && dirs+=("/sys/fs/cgroup/pids$v1/${dir##*/}")
    for d in "${dirs[@]}"; do
        expect_eq "$(stat -c %a "$d")" 700 "the mode of $d"
        setpriv --reuid="$nobody" --regid="$(id -g nobody)" --clear-groups python3 -c '
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)' "$d" 2>/dev/null && fail "another user opened and locked $d"
    done
    wait "$private" || fail "the run with private cgroups: $(cat "$WORK/private.out")"
else
    skip_part "cgroup directories closed to other users: needs root and setpriv to act as another user"
fi

# Runs never kill each other's children (issue 25): a run whose cgroup is locked by a live
# alloclab is not stale, whatever the PID in its name says. From inside a PID namespace that
# shares the cgroup tree (a Slurm step, unshare -p) every other run's PID looks dead: three runs
# started there killed 1-2 samples of a run outside in 3 of 3 tries.
if [[ $(id -u) == 0 ]] && command -v unshare >/dev/null; then
    cat >"$WORK/outside.yaml" <<YAML
experiment: outside
command: ["$WORKLOAD", sleep, "300"]
allocators: {glibc: {}}
samples: 12
warmup: 0
probe: never
YAML
    "$ALLOCLAB" run "$WORK/outside.yaml" --quiet >"$WORK/outside.out" 2>&1 &
    outside=$!
    for _ in $(seq 100); do
        [[ $(q "SELECT count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'outside'") == 1 ]] && break
        sleep 0.05
    done
    for _ in 1 2 3; do
        unshare --pid --fork --mount-proc "$ALLOCLAB" run "$WORK/tiny.yaml" --quiet >"$WORK/inside.out" 2>&1 ||
            fail "a run in a PID namespace: $(cat "$WORK/inside.out")"
    done
    wait "$outside" || fail "the run outside: $(cat "$WORK/outside.out")"
    expect_eq "$(q "SELECT group_concat(DISTINCT s.status) FROM samples s JOIN runs r ON r.id = s.run_id
                    JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'outside'")" ok \
        "every sample of the run outside the PID namespace"
    # A run killed inside a PID namespace (where it was PID 1, and PID 1 is alive anywhere) is
    # found interrupted by the next to open the database, and can be resumed.
    sed -i 's/^experiment: outside/experiment: inside/' "$WORK/outside.yaml"
    unshare --pid --fork --mount-proc "$ALLOCLAB" run "$WORK/outside.yaml" --quiet >/dev/null 2>&1 &
    ns=$!
    inside=
    for _ in $(seq 100); do
        inside=$(cat "/proc/$ns/task/$ns/children" 2>/dev/null | tr -d ' ')
        [[ -n $inside && $(q "SELECT count(*) FROM samples s JOIN runs r ON r.id = s.run_id
                               JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'inside'") -ge 2 ]] && break
        sleep 0.05
    done
    [[ -n $inside ]] || fail "no run started in the PID namespace"
    kill -9 "$inside"
    wait "$ns" 2>/dev/null || true
    run_alloclab 0 runs
    expect_eq "$(q "SELECT r.status FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'inside'")" \
        interrupted "a run killed in a PID namespace, as the next reader finds it"
    run_alloclab 0 resume "$(q "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'inside'")" --quiet
    expect_eq "$(q "SELECT r.status FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.name = 'inside'")" \
        done "resumed"
else
    skip_part "runs in a PID namespace: needs root and unshare"
fi

# The fallback: process groups. A setsid() daemon escapes them; the run still completes. The run
# is made in a PID namespace of this test's: every daemon that escaped, one per sample (each
# overwriting the PID file of the one before), ends with it. Without root there is none to make,
# and nothing would end them: skipped.
if [[ $(id -u) != 0 ]] || ! command -v unshare >/dev/null; then
    skip_part "the fallback to process groups: needs root and unshare for a PID namespace that ends what escapes"
    exit 0
fi
rc=0
ALLOCLAB_CGROUP_ROOT=off unshare --pid --fork --mount-proc "$ALLOCLAB" run "$WORK/spec.yaml" --quiet \
    >"$WORK/fallback.out" 2>&1 || rc=$?
expect_eq "$rc" 9 "a run without cgroups whose variants fail: $(cat "$WORK/fallback.out")"
expect_eq "$(q "SELECT cgroup IS NULL, cgroup_fallback FROM runs WHERE id = (SELECT max(id) FROM runs)")" \
    "1|turned off (ALLOCLAB_CGROUP_ROOT=off)" "fallback recorded"
expect_eq "$(q "SELECT DISTINCT s.cpu_source, s.leftover_processes IS NULL FROM samples s WHERE s.run_id = (SELECT max(id) FROM runs)")" \
    "rusage|1" "fallback figures"
expect_eq "$(q "SELECT s.status FROM samples s JOIN variants v ON v.id = s.variant_id
                WHERE s.run_id = (SELECT max(id) FROM runs) AND v.name = 'hung'")" timeout "timeout without cgroups"
run_alloclab 0 show "$(q "SELECT max(id) FROM runs")"
expect_contains "$OUT" "isolation: process groups only, no cgroups: turned off" "show names the fallback"
# (Their PID files hold the namespace's PIDs: looked for by what they run instead.)
escaped=$(pgrep -f "$WORKLOAD daemon $WORK/" || true)
expect_eq "$escaped" "" "the daemons that escaped ended with their PID namespace"
