package tokenizer

import "strings"

// symbol is a run of bytes [start, start+n) of the text being merged, in a
// doubly linked list of the symbols still alive (n == 0 once merged away).
// id is the token whose text the run is, or -1 when unknown or none.
type symbol struct {
	start, n   int32
	prev, next int32
	id         int32
}

// bigram is a candidate merge of symbols left and right, which together
// had size bytes when it was queued. For SentencePiece, key is the score
// of the merged token (higher first); for byte-level BPE it is minus the
// merge rank (lower rank first). Ties go to the leftmost pair. id is the
// token the merge makes (-1 when unknown or none).
type bigram struct {
	left, right int32
	size        int32
	id          int32
	key         float64
}

// queue is a binary max-heap of bigrams.
type queue []bigram

func (q queue) before(i, j int) bool {
	return q[i].key > q[j].key || q[i].key == q[j].key && q[i].left < q[j].left
}

func (q *queue) push(b bigram) {
	*q = append(*q, b)
	h := *q
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.before(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *queue) pop() bigram {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.before(l, m) {
			m = l
		}
		if r < len(h) && h.before(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// splitSymbols cuts text into one symbol per UTF-8 sequence (by lead byte,
// clipped at the end), linked in order.
func splitSymbols(text string, syms []symbol) []symbol {
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1, id: -1})
		off += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// merge runs the queue to the end: it merges the best pair, then queues
// the new pairs the merged symbol forms with its neighbours. pair returns
// the key of a pair and the id of the token it makes, or false when the
// pair cannot merge. q is scratch space.
func merge(syms []symbol, q *queue, pair func(l, r *symbol) (key float64, id int32, ok bool)) {
	*q = (*q)[:0]
	try := func(l, r int32) {
		if l < 0 || r < 0 { // an end of the list has no pair there
			return
		}
		L, R := &syms[l], &syms[r]
		if key, id, ok := pair(L, R); ok {
			q.push(bigram{left: l, right: r, size: L.n + R.n, id: id, key: key})
		}
	}
	for i := 1; i < len(syms); i++ {
		try(int32(i-1), int32(i))
	}
	for len(*q) > 0 {
		b := q.pop()
		L, R := &syms[b.left], &syms[b.right]
		// Skip a pair made stale by an earlier merge.
		if L.n == 0 || R.n == 0 || L.n+R.n != b.size {
			continue
		}
		L.n += R.n
		L.id = b.id
		R.n = 0
		L.next = R.next
		if R.next >= 0 {
			syms[R.next].prev = b.left
		}
		try(L.prev, b.left)
		try(b.left, L.next)
	}
}

// encodeSPM is llama.cpp's SentencePiece session on text whose spaces are
// already "▁": pairs merge when they form a token, highest score first;
// symbols that are not tokens fall back to byte tokens.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	syms := splitSymbols(text, make([]symbol, 0, len(text)))
	var q queue
	merge(syms, &q, func(L, R *symbol) (float64, int32, bool) {
		if int(L.n+R.n) > t.maxLen { // no token is that long
			return 0, -1, false
		}
		id, ok := t.ids[text[L.start:L.start+L.n+R.n]]
		if !ok {
			return 0, -1, false
		}
		return float64(t.scores[id]), id, true
	})
	for i := int32(0); len(syms) > 0 && i != -1; i = syms[i].next {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.ids[s]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(s); j++ {
			if id := t.spmBytes[s[j]]; id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}

// encodeBPE is llama.cpp's BPE session: pre-tokenize, map bytes to
// characters, then merge each word by rank.
func (t *Tokenizer) encodeBPE(text string, out []int32) []int32 {
	cpts := decodeCpts(text, make([]rune, 0, len(text)))
	pieces := []int{len(cpts)}
	for _, st := range t.stages {
		pieces = st(cpts, pieces)
	}
	var (
		raw  []byte
		word strings.Builder
		syms []symbol
		q    queue
	)
	start := 0
	for _, n := range pieces {
		raw = raw[:0]
		for _, r := range cpts[start : start+n] {
			raw = appendCpt(raw, r)
		}
		start += n
		word.Reset()
		for _, b := range raw {
			word.WriteString(byteEnc[b])
		}
		w := word.String()
		if t.pre.ignoreMerges {
			if id, ok := t.ids[w]; ok {
				out = append(out, id)
				continue
			}
		}
		syms = splitSymbols(w, syms[:0])
		for i := range syms { // each character of w stands for one byte
			syms[i].id = t.byteIDs[raw[i]]
		}
		merge(syms, &q, func(L, R *symbol) (float64, int32, bool) {
			if L.id >= 0 && R.id >= 0 {
				m, ok := t.mergeIDs[uint64(L.id)<<32|uint64(R.id)]
				if ok || !t.oddMerges {
					return -float64(m.rank), m.id, ok
				}
			}
			if !t.oddMerges {
				return 0, -1, false
			}
			l, r := w[L.start:L.start+L.n], w[R.start:R.start+R.n]
			rank, ok := t.merges[mergePair{l, r}]
			if !ok {
				return 0, -1, false
			}
			id, known := t.ids[w[L.start:R.start+R.n]]
			if !known {
				id = -1
			}
			return -float64(rank), id, true
		})
		for i := int32(0); len(syms) > 0 && i != -1; i = syms[i].next {
			if id := syms[i].id; id >= 0 {
				out = append(out, id)
				continue
			}
			s := w[syms[i].start : syms[i].start+syms[i].n]
			if id, ok := t.ids[s]; ok {
				out = append(out, id)
				continue
			}
			for j := 0; j < len(s); j++ {
				if id, ok := t.ids[s[j:j+1]]; ok {
					out = append(out, id)
				}
			}
		}
	}
	return out
}
