#!/usr/bin/env bash
# Decode speed, tokenpulse against llama.cpp, on the same files in one
# session: for each round, file and thread count, `tokenpulse generate`
# (default, then with --spin-wait=-1ns: workers never spin, then with
# --repack=false: Q8_0 weights in the file's layout, the AVX2 kernel) and
# `llama-bench` run one after the other, so that a noisy spell of the
# machine falls on all four alike. Prints tok/s.
#
#   LLAMA_BIN=../peers/llama.cpp/build/bin docs/perf/decode.sh 125m-q4k.gguf 125m-q8.gguf
#
# TOKENPULSE names the binary (default: tokenpulse on PATH); ROUNDS (3)
# and THREADS ("1 2") set the loop. Make the files with
# `tokenpulse model synth --preset 125m --type Q4_K -o 125m-q4k.gguf`.
set -euo pipefail
: "${LLAMA_BIN:?set LLAMA_BIN to the directory holding llama-bench}"
TP=${TOKENPULSE:-tokenpulse}
[ $# -gt 0 ] || { echo "usage: $0 MODEL.gguf..." >&2; exit 2; }
gen() { "$TP" generate --model "$1" --prompt "Once upon a time" -n 128 --threads "$2" "${@:3}" 2>&1 | awk '/^decode/ {print $(NF-3)}'; }
lb() { "$LLAMA_BIN/llama-bench" -m "$1" -t "$2" -p 0 -n 128 -r 1 2>&1 | awk -F'|' '/tg128/ {gsub(/ /, "", $8); split($8, v, "±"); print v[1]}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-28s %-7s %12s %18s %20s %12s\n' round file threads tokenpulse "tokenpulse-nospin" "tokenpulse-norepack" llama-bench
for round in $(seq "${ROUNDS:-3}"); do
	for f in "$@"; do
		for t in ${THREADS:-1 2}; do
			printf '%-5s %-28s %-7s %12s %18s %20s %12s\n' "$round" "$(basename "$f")" "$t" "$(gen "$f" "$t")" "$(gen "$f" "$t" --spin-wait=-1ns)" "$(gen "$f" "$t" --repack=false)" "$(lb "$f" "$t")"
		done
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
