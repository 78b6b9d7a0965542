#!/bin/bash
# alloclabd builds allocators from source (spec build:) as the submitting user, never as root:
# a root daemon's builder takes the submitter's identity, builds in the submitter's cache, and
# the run that follows preloads what it built; the second submission takes it from the cache; a
# revision that does not exist fails the job with the spec's line and column; a revision that
# does not build excludes its variant; a job canceled while building stops its build command.
# Needs root and setpriv (skipped with the reason otherwise), git and cc.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

need_other_users
command -v git >/dev/null || skip_test "git is not installed (apt-get install git)"
command -v cc >/dev/null || skip_test "no C compiler (apt-get install gcc)"
prepare_users_daemon 1777
wait_job() { # JOB STATUS...
    local status
    for _ in $(seq 600); do
        status=$(q "SELECT status FROM jobs WHERE id = $1")
        for want in "${@:2}"; do [[ $status == "$want" ]] && return 0; done
        sleep 0.05
    done
    fail "job $1 is $(q "SELECT status || ' ' || coalesce(message, '') FROM jobs WHERE id = $1"), not ${*:2}"
}

USER_DIR="$WORK/user"
mkdir "$USER_DIR"
tiny_repo "$USER_DIR/tiny"
echo "this is not C" >>"$REPO/tinyalloc.c"
git_in commit -qam broken
git_in tag broken
chown -R nobody:nogroup "$USER_DIR"
spec() { # NAME REV [COMMANDS]: a spec in the user's directory
    cat >"$USER_DIR/$1.yaml" <<YAML
experiment: built-$1
command: ["$WORKLOAD", churn, "20000"]
allocators:
  glibc: {}
  dev: {build: {source: tiny, rev: $2${3:+, commands: $3}}}
samples: 3
YAML
    chmod 0644 "$USER_DIR/$1.yaml"
}
submit() { # NAME: submits the user's spec as nobody with its cache in the user's directory
    (cd "$USER_DIR" && as_nobody env HOME="$USER_DIR" XDG_CACHE_HOME="$USER_DIR/cache" "$ALLOCLAB" submit "$1.yaml" 2>&1)
}
job_of() { grep -o 'job [0-9]*' <<<"$1" | head -1 | cut -d' ' -f2; }
start_users_daemon
CACHE="$USER_DIR/cache/alloclab/builds"

# Built as nobody into nobody's cache (the first command says who runs it), then measured.
spec ok v1 '["id -u", "make"]'
out=$(submit ok) || fail "submit: $out"
job=$(job_of "$out")
wait_job "$job" done
run=$(q "SELECT run_id FROM jobs WHERE id = $job")
build=$(q "SELECT build FROM variants WHERE run_id = $run AND name = 'dev'")
key=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["key"])' "$build")
expect_eq "$(python3 -c 'import json,sys; b=json.loads(sys.argv[1]); print(b["commit"], b["cached"], b["path"])' "$build")" \
    "$(git_in rev-parse v1) False $CACHE/$key/libtiny.so" "what the run recorded of the daemon's build"
expect_eq "$(stat -c %U "$CACHE/$key/libtiny.so")" nobody "the built file is nobody's"
expect_contains "$(cat "$CACHE/$key/build.log")" "\$ id -u
$(id -u nobody)" "the build ran as nobody"
expect_eq "$(q "SELECT count(*) FROM samples s JOIN variants v ON v.id = s.variant_id WHERE s.run_id = $run AND v.name = 'dev' AND s.status = 'ok'")" \
    5 "the built allocator measured"
expect_eq "$(q "SELECT count(*) FROM allocators a JOIN variants v ON v.allocator_id = a.id WHERE v.run_id = $run AND a.path = '$CACHE/$key/libtiny.so'")" \
    1 "the run preloaded the built file"

# Again: from the cache.
out=$(submit ok) || fail "submit: $out"
job=$(job_of "$out")
wait_job "$job" done
expect_eq "$(q "SELECT json_extract(v.build, '$.cached') FROM variants v JOIN jobs j ON j.run_id = v.run_id WHERE j.id = $job AND v.name = 'dev'")" \
    1 "the second job took the cache's"

# A revision that is not a commit: the job fails with the spec's position (that alone: the other
# variant's build, not made, is no problem); nothing is run.
spec norev v9
sed -i 's/^  glibc: {}$/  ok: {build: {source: tiny, rev: v1}}/' "$USER_DIR/norev.yaml"
out=$(submit norev) || fail "submit: $out"
job=$(job_of "$out")
wait_job "$job" failed
expect_eq "$(q "SELECT message FROM jobs WHERE id = $job")" \
    "norev.yaml:5:36: variant dev: build: rev v9 is not a commit of $REPO" "the job's message"
expect_eq "$(q "SELECT count(*) FROM jobs WHERE id = $job AND run_id IS NOT NULL")" 0 "no run recorded"

# A revision that does not build: the variant is excluded, the baseline measured.
spec broken broken
out=$(submit broken) || fail "submit: $out"
job=$(job_of "$out")
wait_job "$job" done
expect_contains "$(q "SELECT DISTINCT x.reason FROM exclusions x JOIN jobs j ON j.run_id = x.run_id WHERE j.id = $job")" \
    'build-failed: `make -j"$(nproc)"` failed: exit code 2: ' "build-failed"

# Canceled while building: the build command is stopped, and the job ends canceled.
spec slow v1 '["sleep 300", "make"]'
out=$(submit slow) || fail "submit: $out"
job=$(job_of "$out")
for _ in $(seq 200); do
    pgrep -u nobody -x sleep >/dev/null && break
    sleep 0.05
done
pgrep -u nobody -x sleep >/dev/null || fail "the build command did not start: $(q "SELECT status || ' ' || coalesce(message, '') FROM jobs WHERE id = $job")"
run_alloclab 0 status
expect_contains "$OUT" "building allocators from source" "status says what the job does"
out=$(as_nobody "$ALLOCLAB" cancel "$job" 2>&1) || fail "cancel: $out"
wait_job "$job" canceled
for _ in $(seq 100); do
    pgrep -u nobody -x sleep >/dev/null || break
    sleep 0.05
done
! pgrep -u nobody -x sleep >/dev/null || fail "the build command outlived its canceled job"
expect_eq "$(q "SELECT message FROM jobs WHERE id = $job")" "canceled while building" "the job's note"
echo "daemon-build: ok"
