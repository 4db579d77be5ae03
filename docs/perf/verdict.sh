#!/usr/bin/env bash
# Calibrates the regression verdict on the real mock: the false-alarm
# rate of `bench --against last` on an unchanged target while a
# background CPU load is switched on and off between runs, and the
# detection rate of three injected regressions (+20 % TPOT, +50 ms TTFT,
# a 300 ms stall every 20 tokens), each judged against the noise band of
# the last K unchanged runs (compare --against last on a run not
# recorded). Prints one line per comparison and the rates at the end.
#
#   docs/perf/verdict.sh [NORMAL_RUNS] [REGRESSED_PER_KIND]   (default 55 20)
#
# It builds tokenpulse, keeps everything in a temporary directory (kept
# for inspection with KEEP=1), and sends traffic only to a mock on
# 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/../.."
normal=${1:-55}
per_kind=${2:-20}
work=$(mktemp -d)
cleanup() {
	kill $(jobs -p) 2>/dev/null || true
	if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
go build -o "$work/tokenpulse" ./cmd/tokenpulse
tp="$work/tokenpulse"
hist="$work/history.db"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
bench=(bench --url "$url" --suite zh-medical -n 60 -c 12 --device-label verdict-calibration --history "$hist")

mock_pid=
start_mock() { # profile flags...
	[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
	"$tp" mock --addr "127.0.0.1:$port" "$@" >/dev/null 2>&1 &
	mock_pid=$!
	for _ in $(seq 100); do
		kill -0 "$mock_pid" 2>/dev/null || { echo "mock exited (port $port taken?)" >&2; exit 1; }
		curl -sf "$url/health" >/dev/null 2>&1 && return
		sleep 0.05
	done
	echo "mock did not start" >&2; exit 1
}
load_pids=()
load() { # on|off
	for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	load_pids=()
	if [ "$1" = on ]; then
		for _ in 1 2; do (while :; do :; done) & load_pids+=($!); done
	fi
}

regressions() { # run.json → the number of regressions its comparison found
	python3 -c 'import json,sys; c=json.load(open(sys.argv[1])).get("comparison") or {}; print(c.get("regressions", 0))' "$1"
}

kinds=("tpot+20%:--itl 24ms" "ttft+50ms:--ttft 200ms" "stall300ms/20:--stall 300ms --stall-every 20")
declare -A detected tried
fa=0 cmp=0 i=0 k=0
for i in $(seq "$normal"); do
	state=off; [ $((i % 2)) = 1 ] && state=on
	load "$state"
	start_mock
	code=0
	"$tp" "${bench[@]}" --against last -o "$work/n$i" >"$work/n$i.log" 2>&1 || code=$?
	evidence=$(grep -o 'verdict on: [^(]*' "$work/n$i.log" | head -1 || true)
	# A crossed threshold (exit 99) hides a regression (98) in the exit
	# code: count the regressions the run file records.
	regs=$(regressions "$work/n$i/run.json")
	if grep -q "noise of 5 earlier" "$work/n$i.log"; then
		cmp=$((cmp + 1)); [ "$regs" -gt 0 ] && fa=$((fa + 1))
	fi
	echo "normal $i load=$state exit=$code regressions=$regs $evidence"
	if [ "$i" -ge 5 ] && [ "$k" -lt $((per_kind * 3)) ]; then
		spec=${kinds[$((k % 3))]}; name=${spec%%:*}; flags=${spec#*:}
		k=$((k + 1))
		# shellcheck disable=SC2086
		start_mock $flags
		"$tp" "${bench[@]}" --no-history -o "$work/r$k" >/dev/null 2>&1 || true
		code=0
		"$tp" compare "$work/r$k/run.json" --against last --history "$hist" >"$work/r$k.log" 2>&1 || code=$?
		tried[$name]=$((${tried[$name]:-0} + 1))
		[ "$code" = 98 ] && detected[$name]=$((${detected[$name]:-0} + 1))
		echo "  regressed $name load=$state exit=$code ($work/r$k.log)"
	fi
done
load off
echo "false alarms: $fa of $cmp comparisons of an unchanged target against a noise band of 5 runs"
for spec in "${kinds[@]}"; do name=${spec%%:*}; echo "$name: detected in ${detected[$name]:-0} of ${tried[$name]:-0}"; done
