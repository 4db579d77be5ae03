#!/usr/bin/env bash
# The served path, `tokenpulse serve` against `llama-server`, each in its
# own process on 2 threads with its default sampling, measured by the same
# `tokenpulse bench -c 1 -n 12 --max-tokens 96`, alternated per round and
# file. Prints the time to first token (TTFT p50 and p95), ms per token
# (TPOT mean), the token-gap coefficient of variation (gap std / gap
# mean), gap p95, the longest gap, and the share of prompt tokens the
# server reused from its prompt cache.
#
#   LLAMA_BIN=../peers/llama.cpp/build/bin docs/perf/served.sh 125m-q4k.gguf 125m-q8.gguf
#
# TOKENPULSE names the binary (default: tokenpulse on PATH); ROUNDS (2).
# BENCH_ARGS is added to every bench command line: for example
# BENCH_ARGS='--extra-body {"cache_prompt":false}' makes both servers run
# every prompt token (both reuse a shared prompt prefix by default: the
# quick start's suite shares its system prompt and chat template).
set -euo pipefail
: "${LLAMA_BIN:?set LLAMA_BIN to the directory holding llama-server}"
TP=${TOKENPULSE:-tokenpulse}
[ $# -gt 0 ] || { echo "usage: $0 MODEL.gguf..." >&2; exit 2; }
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
wait_for() { for _ in $(seq 600); do curl -sf "$1" 2>/dev/null | grep -q "$2" && return 0; sleep 0.1; done; echo "no answer from $1" >&2; exit 1; }
figures() {
	python3 - "$1/run.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["summary"]["overall"]
g = o["gap_ms"]
t = o["ttft_ms"]
print("TTFT p50 %6.1f ms  p95 %6.1f ms  " % (t["p50"], t["p95"]), end="")
print("%6.2f ms/token  gap CV %4.0f%%  gap p95 %6.1f ms  longest %7.1f ms" % (o["tpot_ms"]["mean"], 100 * g["std"] / g["mean"], g["p95"], g["max"]), end="")
# Prompt tokens reused from the server's cache: the usage's prompt tokens
# less those the server says its prefill processed (both servers report it).
reqs = [r for r in json.load(open(sys.argv[1]))["requests"] if r.get("server") and r.get("prompt_tokens")]
whole = sum(r["prompt_tokens"] for r in reqs)
run = sum(r["server"].get("prompt_tokens", 0) for r in reqs)
print("  prompt cached %3.0f%%" % (100 * (whole - run) / whole) if whole else "")
PY
}
read -r -a bench_args <<<"${BENCH_ARGS:-}"
measure() { rm -rf "$work/$2"; "$TP" bench --url "$1" -n 12 --max-tokens 96 --no-history -q -o "$work/$2" "${bench_args[@]}" >/dev/null 2>&1 || true; figures "$work/$2"; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "${ROUNDS:-2}"); do
	for f in "$@"; do
		"$TP" serve --model "$f" --threads 2 --addr 127.0.0.1:18091 >/dev/null 2>&1 &
		pid=$!
		wait_for http://127.0.0.1:18091/health ready
		echo "round $round $(basename "$f") tokenpulse serve: $(measure http://127.0.0.1:18091 tp)"
		kill "$pid"; wait "$pid" 2>/dev/null || true
		"$LLAMA_BIN/llama-server" -m "$f" -t 2 --port 18093 >/dev/null 2>&1 &
		pid=$!
		wait_for http://127.0.0.1:18093/health ok
		echo "round $round $(basename "$f") llama-server:     $(measure http://127.0.0.1:18093 ll)"
		kill "$pid"; wait "$pid" 2>/dev/null || true
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
