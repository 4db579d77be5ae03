#!/usr/bin/env bash
# Decode speed, tokenpulse against llama.cpp, on the same files in one
# session: for each round, file and thread count, `tokenpulse generate -n
# 128` (one column per binary named in TOKENPULSE, so that a before/after
# pair runs side by side; with VARIANTS=1 also the first binary with
# --spin-wait=-1ns, workers never spinning, and with --repack=false,
# weights in the file's layout and its per-row kernels) and `llama-bench
# -p 0 -n 128`, run one after the other, so that a noisy spell of the
# machine falls on all of them alike. Prints tok/s.
#
#   LLAMA_BIN=../peers/llama.cpp/build/bin docs/perf/decode.sh 125m-q4k.gguf 125m-q8.gguf
#   TOKENPULSE="./tp-before ./tp-after" LLAMA_BIN=... docs/perf/decode.sh 1b-q4_k_m.gguf
#
# TOKENPULSE names the binaries (default: tokenpulse on PATH); ROUNDS (3)
# and THREADS ("1 2") set the loop. Make the files with
# `tokenpulse model synth --preset 125m --type Q4_K -o 125m-q4k.gguf`.
set -euo pipefail
: "${LLAMA_BIN:?set LLAMA_BIN to the directory holding llama-bench}"
read -r -a TPS <<<"${TOKENPULSE:-tokenpulse}"
[ $# -gt 0 ] || { echo "usage: $0 MODEL.gguf..." >&2; exit 2; }
gen() { "$1" generate --model "$2" --prompt "Once upon a time" -n 128 --threads "$3" "${@:4}" 2>&1 | awk '/^decode/ {print $(NF-3)}'; }
lb() { "$LLAMA_BIN/llama-bench" -m "$1" -t "$2" -p 0 -n 128 -r 1 2>&1 | awk -F'|' '/tg128/ {gsub(/ /, "", $8); split($8, v, "±"); print v[1]}'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %-22s %-7s' round file threads
for tp in "${TPS[@]}"; do printf ' %16s' "$(basename "$tp")"; done
[ "${VARIANTS:-0}" = 1 ] && printf ' %16s %16s' nospin norepack
printf ' %12s\n' llama-bench
for round in $(seq "${ROUNDS:-3}"); do
	for f in "$@"; do
		for t in ${THREADS:-1 2}; do
			printf '%-5s %-22s %-7s' "$round" "$(basename "$f")" "$t"
			for tp in "${TPS[@]}"; do printf ' %16s' "$(gen "$tp" "$f" "$t")"; done
			if [ "${VARIANTS:-0}" = 1 ]; then
				printf ' %16s %16s' "$(gen "${TPS[0]}" "$f" "$t" --spin-wait=-1ns)" "$(gen "${TPS[0]}" "$f" "$t" --repack=false)"
			fi
			printf ' %12s\n' "$(lb "$f" "$t")"
		done
	done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
