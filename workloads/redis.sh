#!/bin/sh
# redis.sh THREADS SCALE: redis-server under the variant's allocator (it inherits LD_PRELOAD),
# driven by redis-benchmark over a private unix socket with 8 x THREADS pipelining clients; prints "ok"
# once the server has shut down. Used by redis.yaml.
set -eu
threads=$1 scale=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/alloclab-redis.XXXXXX")
trap 'redis-cli -s "$dir/sock" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
redis-server --port 0 --unixsocket "$dir/sock" --save '' --appendonly no --dir "$dir" >/dev/null &
i=0
while [ ! -S "$dir/sock" ]; do
    i=$((i + 1))
    [ "$i" -le 1000 ] || { echo "redis-server did not start" >&2; exit 1; }
    sleep 0.01
done
redis-benchmark -s "$dir/sock" -c $((threads * 8)) -P 16 -n $((scale * 1000)) \
    -t set,get,lpush,lpop,sadd,hset -d 256 -q >/dev/null
redis-cli -s "$dir/sock" shutdown nosave >/dev/null 2>&1 || true
wait
echo ok
