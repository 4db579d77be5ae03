#!/bin/sh
# mixref.sh records llama.cpp's reference for TestMixFallbackAgrees
# (../mix-qwen2-192x8-Q4_K_M.json): a small qwen2-shaped model whose rows
# of 192 are not a multiple of 256, like the 0.5B's 896, so llama.cpp's
# Q4_K_M gives most tensors its fallback types (Q5_0, Q8_0).
#
# What it does: writes the F32 source with `tokenpulse model synth` (the
# test writes the same file again from the same seed), quantises it with
# llama.cpp's llama-quantize Q4_K_M, records each tensor's type and the
# sha256 of its bytes (and the same for Q5_K_M, whose Q5_K falls back to
# Q5_1), then runs llama-server on llama.cpp's file (F32 KV
# cache, 2 threads) and records, for two prompts, the prompt tokens, 24
# greedy tokens and the top-10 log-probabilities at each, with the same
# request as internal/fixture/testdata/models/synth/README.md describes.
#
# Usage (from the repository root; needs curl and python3):
#   LLAMA=/work/peers/llama.cpp/build/bin sh internal/engine/quantize/testdata/mixref/mixref.sh
set -eu
LLAMA=${LLAMA:-/work/peers/llama.cpp/build/bin}
PORT=${PORT:-18431}
OUT=internal/engine/quantize/testdata/mix-qwen2-192x8-Q4_K_M.json
tmp=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/tokenpulse" ./cmd/tokenpulse
"$tmp/tokenpulse" model synth --arch qwen2 --dim 192 --layers 8 --heads 6 --kv-heads 2 --ffn 512 \
	--vocab 512 --ctx 512 --type F32 --seed 7 -o "$tmp/src.gguf" >/dev/null
"$LLAMA/llama-quantize" "$tmp/src.gguf" "$tmp/q.gguf" Q4_K_M 2 >"$tmp/quantize.log" 2>&1
"$LLAMA/llama-quantize" "$tmp/src.gguf" "$tmp/q5.gguf" Q5_K_M 2 >"$tmp/quantize5.log" 2>&1
go run ./internal/engine/quantize/testdata/mixref/dump.go "$tmp/q5.gguf" >"$tmp/q5.json"
go run ./internal/engine/quantize/testdata/mixref/dump.go "$tmp/src.gguf" >"$tmp/src.json"
go run ./internal/engine/quantize/testdata/mixref/dump.go "$tmp/q.gguf" >"$tmp/q.json"
"$LLAMA/llama-server" -m "$tmp/q.gguf" --host 127.0.0.1 --port "$PORT" -c 512 -np 1 -t 2 --seed 42 \
	--no-webui --cache-type-k f32 --cache-type-v f32 >"$tmp/server.log" 2>&1 &
srv=$!
i=0
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do
	i=$((i + 1))
	[ $i -lt 120 ] || { echo "llama-server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
	sleep 0.5
done
commit=$(git -C "$LLAMA/../.." rev-parse HEAD 2>/dev/null || echo unknown)
PORT=$PORT TMPD=$tmp COMMIT=$commit OUT=$OUT python3 - <<'PY'
import json, os, urllib.request
port, tmp = os.environ["PORT"], os.environ["TMPD"]
def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
request = {"n_predict": 24, "temperature": 0, "top_k": 1, "top_p": 1.0, "min_p": 0.0, "typical_p": 1.0,
           "repeat_penalty": 1.0, "repeat_last_n": 0, "presence_penalty": 0.0, "frequency_penalty": 0.0,
           "dry_multiplier": 0.0, "xtc_probability": 0.0, "mirostat": 0, "seed": 42, "n_probs": 10,
           "post_sampling_probs": False, "cache_prompt": False, "return_tokens": True, "stream": False}
def tokbytes(tok):
    # synth's vocabulary: 3 control tokens, then the 256 byte tokens.
    if 3 <= tok < 259:
        return bytes([tok - 3])
    return post("/detokenize", {"tokens": [tok]})["content"].encode()
def complete(b):
    # llama.cpp's validate_utf8: no multi-byte character cut off at the end.
    for i in range(1, min(4, len(b)) + 1):
        c = b[-i]
        if (c & 0xE0) == 0xC0 and i < 2 or (c & 0xF0) == 0xE0 and i < 3 or (c & 0xF8) == 0xF0 and i < 4:
            return False
    return True
prompts = []
for text in ["Once upon a time", "The little dog was"]:
    toks = post("/tokenize", {"content": text, "add_special": True})["tokens"]
    r = post("/completion", dict(request, prompt=toks))
    # llama-server reports probabilities only for the tokens after which
    # the text is whole UTF-8 (its validate_utf8): a byte token that starts
    # a multi-byte character gets none. Replay that rule to put each
    # reported entry at its position; positions without one get null.
    probs, top, pending = iter(r.get("completion_probabilities", [])), [], b""
    for tok in r["tokens"]:
        pending += tokbytes(tok)
        if complete(pending):
            e = next(probs)
            assert e["id"] == tok, (e["id"], tok)
            top.append([{"id": c["id"], "logprob": c["logprob"]} for c in e["top_logprobs"]])
        else:
            top.append(None)
    assert next(probs, None) is None
    prompts.append({"prompt": text, "prompt_tokens": toks, "output_tokens": r["tokens"], "top_probs": top})
src, q, q5 = (json.load(open(f"{tmp}/{n}.json")) for n in ("src", "q", "q5"))
out = {"provenance": "internal/engine/quantize/testdata/mixref/mixref.sh; llama.cpp " + os.environ["COMMIT"],
       "synth": "model synth --arch qwen2 --dim 192 --layers 8 --heads 6 --kv-heads 2 --ffn 512 --vocab 512 --ctx 512 --type F32 --seed 7",
       "source_tensor_sha256": src["tensor_sha256"], "general_file_type": q["general_file_type"],
       "tensor_types": q["tensor_types"], "tensor_sha256": q["tensor_sha256"],
       "llama_server_args": ["-c", "512", "-np", "1", "-t", "2", "--seed", "42", "--no-webui", "--cache-type-k", "f32", "--cache-type-v", "f32"],
       "request": request, "prompts": prompts,
       "q5_k_m": {"general_file_type": q5["general_file_type"], "tensor_types": q5["tensor_types"], "tensor_sha256": q5["tensor_sha256"]}}
json.dump(out, open(os.environ["OUT"], "w"), indent=1, sort_keys=True)
PY
echo "wrote $OUT"
