#!/bin/bash
# A child's peak RSS is its own. Children were created by alloclab with CLONE_VM | CLONE_VFORK,
# and at the exec Linux records the high-water RSS of the address space the child leaves (then
# alloclab's) into the child's ru_maxrss: `true` read 5.1 MiB under every allocator where GNU time
# says 1 MiB. alloclab-spawner creates them now, from an address space of about half a MiB.
# Checked against GNU time (`LD_PRELOAD=LIB /usr/bin/time -f %M PROGRAM`, as mimalloc-bench
# measures; time's floor is its own size, as small as `true`'s) on `true`, a program holding 1 MiB
# and one holding 100 MiB, under glibc, jemalloc and mimalloc: alloclab's median within 10% or
# 0.3 MiB of GNU time's.
. "$(dirname "$0")/lib.sh"

[[ -x /usr/bin/time ]] || skip_test "needs GNU time (apt-get install time)"

# median N...: the middle of an odd count of integers.
median() {
    printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"
}

# gnu_time_kib LIB PROGRAM...: GNU time's %M, the median of three.
gnu_time_kib() {
    local lib=$1 kib=()
    shift
    for _ in 1 2 3; do
        LD_PRELOAD=$lib /usr/bin/time -o "$WORK/time" -f %M "$@" >/dev/null 2>&1
        kib+=("$(tail -1 "$WORK/time")")
    done
    median "${kib[@]}"
}

declare -A lib=([glibc]="")
for a in jemalloc mimalloc; do
    # awk reads to the end: an early exit would fail the pipeline (SIGPIPE, pipefail).
    path=$(ldconfig -p | awk -v so="lib$a.so.2" '$1 == so && /x86-64/ && !p {p = $NF} END {print p}')
    [[ -n $path ]] || skip_test "needs $a (apt-get install lib${a}2*)"
    lib[$a]=$path
done

checked=0
for program in "true" "$WORKLOAD touch 1 0" "$WORKLOAD touch 100 0"; do
    read -r -a argv <<<"$program"
    [[ ${argv[0]} == true ]] && argv[0]=/bin/true
    run_alloclab 0 quick -a glibc,jemalloc,mimalloc -r 3 -w 0 --quiet --format json -- "${argv[@]}"
    run=$(q "SELECT max(id) FROM runs")
    for a in glibc jemalloc mimalloc; do
        ours=$(median $(q "SELECT s.maxrss_kib FROM samples s JOIN variants v ON v.id = s.variant_id
                           WHERE s.run_id = $run AND v.name = '$a' AND s.phase = 'sample'"))
        theirs=$(gnu_time_kib "${lib[$a]}" "${argv[@]}")
        diff=$(( ours > theirs ? ours - theirs : theirs - ours ))
        (( diff * 10 <= theirs || diff <= 300 )) ||
            fail "$a, $program: alloclab's peak RSS $ours KiB, GNU time's $theirs KiB"
        echo "$a, ${program##*/}: alloclab $ours KiB, GNU time $theirs KiB"
        checked=$((checked + 1))
    done
done
expect_eq "$checked" 9 "every program under every allocator"
