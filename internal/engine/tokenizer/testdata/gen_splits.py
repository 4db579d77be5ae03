# Generates splits.json: how the original Hugging Face pre-tokenizer
# expressions (with lookahead) cut a set of texts, according to Python's
# third-party `regex` module (which supports \p{..} and lookahead). The Go
# splitters in pretok.go must cut the same way. Run from this directory:
#
#   python3 gen_splits.py ../../../../../shared/models/tokenizers/ggml-vocab-gpt-2.gguf.inp > splits.json
#
# The inputs avoid what llama.cpp deliberately does differently from the
# expression (unassigned code points, full case folding such as U+017F)
# and characters newer than Go's Unicode tables.
import json, random, sys
import regex

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
# Each pre-tokenizer is a sequence of expressions; each cuts the pieces the
# previous one left (matches and the gaps between them), as llama.cpp does.
PATTERNS = {
    "gpt2": [GPT2],
    "llama3": [r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "qwen2": [r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "smollm": [r"\p{N}", GPT2],
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", r"[0-9][0-9][0-9]"],
}

texts = []
data = open(sys.argv[1], encoding="utf-8").read()
sep = "\n__ggml_vocab_test__\n"
texts += [t for t in data.split(sep)][:-1]
texts += [
    "Hello\r\n\r\nWorld  ", "it's IT'S We'Ll o'clock", "a\u00a0\u00a0b", "x \u3000 y",
    "1234567 890", "$100,000.00!!", "  \n\t  end", "\t\tcode()\n    return x;  \n",
    "émoji 🦙🦙!!\n", "a'", "'", "' s", "don't\n\n\n", "(x)+[y]", "abc123def",
    "\u0661\u0662\u0663\u0664", "\u216b", "\u00bd", "e\u0301t\u00e9", "_init_", "a\r\rb",
]
alphabet = [" ", " ", " ", "\t", "\n", "\r", "a", "Z", "b", "1", "9", "0", "'", "s", "T",
            "l", "e", "v", "r", "d", "m", "!", ".", "-", "\u00a0", "\u3000", "é", "ж", "中",
            "\u0663", "\u00bd", "😀", "\u0301", "_", "$"]
rng = random.Random(7)
for _ in range(300):
    texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 24))))

out = []
def cut(rx, t):
    pieces, pos = [], 0
    for m in rx.finditer(t):
        if m.start() > pos:
            pieces.append(t[pos:m.start()])
        pieces.append(m.group())
        pos = m.end()
    if pos < len(t):
        pieces.append(t[pos:])
    return pieces

for name, pats in PATTERNS.items():
    rxs = [regex.compile(p) for p in pats]
    for t in texts:
        pieces = [t] if t else []
        for rx in rxs:
            pieces = [q for p in pieces for q in cut(rx, p)]
        out.append({"pre": name, "text": t, "pieces": pieces})
print('{"generator": %s, "cases": [' % json.dumps("regex " + regex.__version__))
print(",\n".join(json.dumps(c, ensure_ascii=False) for c in out))
print("]}")
