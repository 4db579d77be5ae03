#!/usr/bin/env bash
# Prefill speed, tokenpulse against llama.cpp, on the same files in one
# session: for each round, file and thread count, `tokenpulse generate`
# with a 256-token prompt (the "prefill" line's tok/s; one binary per
# column, so a before/after pair runs side by side) and `llama-bench -p
# 256 -n 0`, one after the other, so that a noisy spell of the machine
# falls on all of them alike. Prints tok/s.
#
#   LLAMA_BIN=../peers/llama.cpp/build/bin docs/perf/prefill.sh 05b-q4_0.gguf
#   TOKENPULSE="./tp-before ./tp-after" LLAMA_BIN=... docs/perf/prefill.sh 05b-q4_0.gguf
#
# TOKENPULSE names the binaries (default: tokenpulse on PATH); ROUNDS (3)
# and THREADS ("1 2") set the loop. The prompt is "ab " 254 times: 256
# tokens with the BOS on `model synth`'s byte-level vocabulary (the
# script prints the count tokenpulse reports). Make the file with
# `tokenpulse model synth --preset 0.5b --type Q4_0 -o 05b-q4_0.gguf`.
set -euo pipefail
: "${LLAMA_BIN:?set LLAMA_BIN to the directory holding llama-bench}"
read -r -a TPS <<<"${TOKENPULSE:-tokenpulse}"
[ $# -gt 0 ] || { echo "usage: $0 MODEL.gguf..." >&2; exit 2; }
prompt=$(printf 'ab %.0s' $(seq 254))
gen() { "$1" generate --model "$2" --prompt "$prompt" -n 1 --threads "$3" 2>&1 | awk '/^prefill/ {print $(NF-1) " (" $2 " tok)"}'; }
lb() { "$LLAMA_BIN/llama-bench" -m "$1" -t "$2" -p 256 -n 0 -r 1 2>&1 | awk -F'|' '/pp256/ {gsub(/ /, "", $8); split($8, v, "±"); print v[1]}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-22s %-7s' round file threads
for tp in "${TPS[@]}"; do printf ' %22s' "$(basename "$tp")"; done
printf ' %12s\n' llama-bench
for round in $(seq "${ROUNDS:-3}"); do
	for f in "$@"; do
		for t in ${THREADS:-1 2}; do
			printf '%-5s %-22s %-7s' "$round" "$(basename "$f")" "$t"
			for tp in "${TPS[@]}"; do printf ' %22s' "$(gen "$tp" "$f" "$t")"; done
			printf ' %12s\n' "$(lb "$f" "$t")"
		done
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
