#!/bin/bash
# alloclabd --publish-dir (configuration publish_dir:): after each finished job, submitted or
# scheduled, the daemon publishes its database's site, as readable as the database: its group
# readers (here root's group, the system database's) read the pages and see the runs `alloclab
# runs` shows them; anyone else reads nothing. A site directory others may write to is refused.
. "$(dirname "$0")/lib.sh"
: "${ALLOCLABD:?ALLOCLABD must point to alloclabd}"

need_other_users
prepare_users_daemon 0755
SITE="$WORK/site"
cat >"$WORK/alloclabd.yaml" <<YAML
publish_dir: $SITE
YAML
# The daemon's alloclab takes a second longer to publish, so that a job started while it
# publishes (which must not happen) would start before the pages are written.
printf '#!/bin/sh\nsleep 1\nexec "%s" "$@"\n' "$ALLOCLAB" >"$WORK/slow-alloclab"
chmod 0755 "$WORK/slow-alloclab"
ALLOCLAB_CLI="$WORK/slow-alloclab" start_users_daemon --config "$WORK/alloclabd.yaml"
# Group readers of the database may enter its directory.
chgrp "$(stat -c %g "$DB")" "$WORK/db" && chmod 0750 "$WORK/db"
gid=$(stat -c %g "$DB")
expect_eq "$(stat -c %a "$DB")" 640 "the system database is for its group"

wait_for() { # FILE SECONDS: until FILE exists
    for _ in $(seq $(($2 * 10))); do [[ -e $1 ]] && return 0; sleep 0.1; done
    fail "no $1 after $2 s: $(cat "$WORK/daemon.log")"
}

# A submitted job: its run's page, the index, the experiment's timelines.
cat >"$WORK/spin.yaml" <<YAML
experiment: submitted
command: ["$WORKLOAD", spin, "300000"]
allocators: {glibc: {}, jemalloc: {preload: jemalloc}}
samples: 3
YAML
run_alloclab 0 submit --wait "$WORK/spin.yaml"
# While it publishes, the daemon says so (its queue waits).
for _ in $(seq 20); do
    status=$("$ALLOCLAB" status)
    [[ $status == *"publishing the site"* ]] && break
    sleep 0.05
done
expect_contains "$status" "publishing the site; 0 queued" "status while publishing"
wait_for "$SITE/run/1.html" 30
expect_contains "$(cat "$WORK/daemon.log")" "site $SITE" "the ready line names the site"
wait_for "$SITE/index.html" 30
for _ in $(seq 100); do grep -q 'experiment/submitted.html' "$SITE/index.html" 2>/dev/null && break; sleep 0.1; done
grep -q 'experiment/submitted.html' "$SITE/index.html" || fail "the index lacks the submitted experiment"

# As readable as the database: its group reads, nobody else.
expect_eq "$(stat -c '%a %g' "$SITE/index.html" "$SITE/run/1.html" | sort -u)" "640 $gid" "pages as the database"
expect_eq "$(stat -c '%a %g' "$SITE" "$SITE/run" "$SITE/experiment" | sort -u)" "750 $gid" "directories"
reader() { setpriv --reuid="$nobody" --regid="$gid" --clear-groups "$@"; }
reader cat "$SITE/index.html" >/dev/null || fail "a group reader cannot read the index"
as_nobody cat "$SITE/index.html" >/dev/null 2>&1 && fail "someone outside the group reads the site"
listed=$(reader "$ALLOCLAB" runs --db "$DB" --format csv | tail -n +2 | cut -d, -f1 | sort -n | tr '\n' ' ')
[[ -n $listed ]] || fail "the group reader's alloclab runs listed nothing"
published=$(ls "$SITE/run" | sed 's/\.html$//' | sort -n | tr '\n' ' ')
expect_eq "$published" "$listed" "the site's runs are those alloclab runs shows a group reader"

# While the site is published the queue waits: a job queued behind another starts only after the
# publish the first one's end began (its run's page is written by then).
"$ALLOCLAB" submit "$WORK/spin.yaml" >/dev/null
run_alloclab 0 submit --wait "$WORK/spin.yaml"
first=$(q "SELECT min(id) FROM runs WHERE id > 1")
second=$(q "SELECT max(id) FROM runs")
wait_for "$SITE/run/$second.html" 30
python3 - "$SITE/run/$first.html" "$(q "SELECT started_at FROM runs WHERE id = $second")" <<'PY' ||
import datetime, os, sys
written = os.stat(sys.argv[1]).st_mtime
started = datetime.datetime.strptime(sys.argv[2], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
assert written <= started, (written, started)
PY
    fail "the next job started while the site was published"

# A scheduled job: published too.
cat >"$SPECS/often.yaml" <<YAML
experiment: often
command: ["$WORKLOAD", spin, "100000"]
allocators: {glibc: {}}
samples: 2
schedule: {every: 2s}
YAML
kill -HUP "$daemon_pid"
for _ in $(seq 300); do grep -q 'experiment/often.html' "$SITE/index.html" 2>/dev/null && break; sleep 0.1; done
grep -q 'experiment/often.html' "$SITE/index.html" || fail "no scheduled run on the site: $(cat "$WORK/daemon.log")"
rm "$SPECS/often.yaml"
kill -HUP "$daemon_pid"

# A site directory others may write to (they could put a link where a page goes): refused.
chmod 0777 "$SITE"
run_alloclab 0 submit --wait "$WORK/spin.yaml"
for _ in $(seq 100); do grep -q "not publishing the site in $SITE" "$WORK/daemon.log" && break; sleep 0.1; done
expect_contains "$(cat "$WORK/daemon.log")" \
    "not publishing the site in $SITE: it is writable by group or others (chmod go-w, or another publish_dir)" \
    "an unsafe site directory"
chmod 0750 "$SITE"
expect_contains "$(cat "$WORK/daemon.log")" "published the site in $SITE" "a publish is logged"
echo "ok"
