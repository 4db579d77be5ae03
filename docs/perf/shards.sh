#!/bin/sh
# docs/perf/shards.sh: the README's sharding figures, rerunnable.
#   1. per-token timing error p99 (against the mock's emit stamps) of one
#      process at 1024 streams, and of 4 shard processes at 256 streams
#      each, merged;
#   2. time and peak memory of merging 4 shards of 10,000 requests each.
# Everything runs on this machine (the mock, every client process): on a
# small shared machine the figures say as much about the machine.
set -eu
cd "$(dirname "$0")/../.."
work=${WORK:-$(mktemp -d)}
go build -o "$work/tp" ./cmd/tokenpulse
go build -o "$work/tokenerr" ./docs/perf/tokenerr
tp=$work/tp
suite=en-assistant

"$tp" mock --addr 127.0.0.1:18555 --parallel 4096 --queue -1 --ttft 20ms --itl 20ms --tokens 50 >"$work/mock.log" 2>&1 &
mock=$!
trap 'kill $mock' EXIT
sleep 1
url=http://127.0.0.1:18555
common="--url $url --suite $suite --max-tokens 50 --warmup 0 --no-history -q"

echo "== one process, 1024 streams"
"$tp" bench $common -c 1024 -n 2048 --out "$work/one" >/dev/null || true
"$work/tokenerr" "$work/one/run.json"

echo "== 4 shard processes, 256 streams each, merged"
at=$(date -u -d '+3 sec' +%Y-%m-%dT%H:%M:%SZ)
pids=
for i in 0 1 2 3; do
	JOB_COMPLETION_INDEX=$i "$tp" bench $common -c 1024 -n 2048 --shards 4 --start-at "$at" --out "$work/shards/s$i" >/dev/null &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || true; done
"$tp" merge "$work/shards" --out "$work/merged" --no-history >/dev/null || true
"$work/tokenerr" "$work/merged/run.json"

echo "== merging 4 shards of 10,000 requests each"
"$tp" mock --addr 127.0.0.1:18556 --parallel 4096 --queue -1 --ttft 1ms --itl 1ms --tokens 16 >"$work/mock2.log" 2>&1 &
mock2=$!
trap 'kill $mock $mock2' EXIT
sleep 1
for i in 0 1 2 3; do
	"$tp" bench --url http://127.0.0.1:18556 --suite $suite --max-tokens 16 --warmup 0 --no-history -q \
		-c 128 -n 40000 --shard $i/4 --out "$work/big/s$i" >/dev/null
done
/usr/bin/time -v "$tp" merge "$work/big" --out "$work/bigmerged" --no-history 2>"$work/time.txt" >/dev/null || true
grep -E "Elapsed|Maximum resident" "$work/time.txt"
du -sh "$work/big" "$work/bigmerged/run.json"
echo "work directory: $work"
