package engine

import (
	"math"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// state holds a session's activations and KV cache, all allocated once.
type state struct {
	x       []float32 // (batch, dim) residual stream
	xb      []float32 // (batch, dim) normalised input / projection output
	q       []float32 // (batch, q_dim) queries
	att     []float32 // (batch, q_dim) attention output
	hb      []float32 // (batch, ffn) gate, then silu(gate)*up
	hb2     []float32 // (batch, ffn) up
	logits  []float32 // (vocab) of the last token
	outputs int       // forward passes that computed logits (for tests)
	scratch []float32 // (threads, scratchLen) per-worker space
	scrLen  int
	kCache  []float32 // (layer, ctx, kv_dim), with an f32 cache
	vCache  []float32 // (layer, ctx, kv_dim), with an f32 cache
	// With an f16 cache: the cache in binary16, and the batch's new keys
	// and values in float32 until they are rotated and rounded into it.
	kCache16, vCache16 []uint16  // (layer, ctx, kv_dim)
	kNew, vNew         []float32 // (batch, kv_dim)
	xq                 []byte    // (3, batch, actBytes) the input of a matmul quantised
	actLen             int       // actBytes: the largest quantised input row

	mm   matmulJob
	qj   quantJob
	attn attnJob
}

func newState(m *Model) *state {
	c, b := m.cfg, m.batch
	z := sizesOf(c, m.ctx, b, m.pool.threads, m.w.maxActBytes(), m.kvType) // as counted by estimateMemory
	s := &state{
		x:      make([]float32, b*c.Dim),
		xb:     make([]float32, b*c.Dim),
		q:      make([]float32, b*c.QDim()),
		att:    make([]float32, b*c.QDim()),
		hb:     make([]float32, b*c.FFN),
		hb2:    make([]float32, b*c.FFN),
		logits: make([]float32, c.Vocab),
		scrLen: z.scrLen,
	}
	if m.kvType == KVF16 {
		s.kCache16, s.vCache16 = make([]uint16, z.kv), make([]uint16, z.kv)
		s.kNew, s.vNew = make([]float32, z.kvNew), make([]float32, z.kvNew)
	} else {
		s.kCache, s.vCache = make([]float32, z.kv), make([]float32, z.kv)
	}
	s.scratch = make([]float32, z.threads*s.scrLen)
	s.actLen = z.actLen
	s.xq = make([]byte, 3*b*s.actLen)
	s.mm.s = s
	s.attn.s = s
	return s
}

// matmulJob computes out = W x for up to three matrices sharing the input x
// (q, k and v; gate and up), over the concatenation of their rows in
// units of each matrix's row group (16 rows for a layout that interleaves
// them, else 1), so that no worker's share splits a group.
type matmulJob struct {
	s     *state
	n     int
	mats  [3]*matrix
	outs  [3][]float32 // (batch, rows) each
	ends  [3]int       // cumulative counts of row groups
	x     []float32    // (batch, cols)
	batch int
	// xq[i] is x quantised to mats[i]'s activation type, (batch, xqLen[i]),
	// or nil when mats[i] takes the float path.
	xq    [3][]byte
	xqLen [3]int
}

func (j *matmulJob) runRows(w, lo, hi int) {
	start := 0
	for i := 0; i < j.n; i++ {
		m := j.mats[i]
		end := j.ends[i]
		a, b := max(lo, start)-start, min(hi, end)-start
		if a < b {
			g := m.group()
			a, b = a*g, min(b*g, m.rows)
			if j.xq[i] != nil {
				mulRowsQ(m, j.outs[i], j.xq[i], j.xqLen[i], j.batch, a, b)
			} else {
				mulRows(m, j.outs[i], j.x, j.batch, a, b, j.s.scratch[w*j.s.scrLen:(w+1)*j.s.scrLen])
			}
		}
		start = end
	}
}

// mulRowsQ computes rows [a, b) of out = W x for each of batch inputs
// already quantised to W's activation type (xq, rows of n bytes): integer
// dot products, as llama.cpp computes them, so a row's result does not
// depend on the batch it came in. A batch goes through the rows in tiles
// small enough to stay in the cache while every input passes over them:
// with a matrix-product kernel (MatMulQ) each tile's weights are read
// once for a tile of inputs; without, once per input.
func mulRowsQ(m *matrix, out []float32, xq []byte, n, batch, a, b int) {
	rows, rb := m.rows, m.rowBytes
	if mm := m.kern.MatMulQ; mm != nil {
		g := m.group()
		tile := max(1, mmTileBytes/(rb*g)) * g
		for lo := a; lo < b; lo += tile {
			hi := min(lo+tile, b)
			mm(out[lo:], rows, xq, n, batch, m.data[lo*rb:hi*rb])
		}
		return
	}
	tile := b - a
	if batch > 1 {
		tile = max(1, tileBytes/rb)
	}
	for lo := a; lo < b; lo += tile {
		hi := min(lo+tile, b)
		w := m.data[lo*rb : hi*rb]
		for i := 0; i < batch; i++ {
			m.kern.DotQRows(out[i*rows+lo:i*rows+hi], xq[i*n:(i+1)*n], w)
		}
	}
}

// mmTileBytes is the size of the tile of weight rows a matrix-product
// kernel reads once per tile of inputs: small enough to stay in the L2
// cache for the next tile of inputs.
const mmTileBytes = 256 << 10

// tileBytes is the size of the tile of weight rows a batched product
// keeps in cache while every input of the batch passes over it.
const tileBytes = 16 << 10

// mulRows computes rows [a, b) of out = W x for each of batch inputs, for
// weights with no integer path (the float types). With one input each row
// goes through the fused dot product; with several, each row is decoded
// once into buf and reused for every input.
func mulRows(m *matrix, out, x []float32, batch, a, b int, buf []float32) {
	cols, rows := m.cols, m.rows
	if w := m.f32; w != nil && batch == 1 {
		x = x[:cols]
		for r := a; r < b; r++ {
			out[r] = quant.DotF32(x, w[r*cols:(r+1)*cols])
		}
		return
	}
	if batch == 1 {
		x = x[:cols]
		dotf := m.kern.Dot
		for r := a; r < b; r++ {
			out[r] = dotf(x, m.data[r*m.rowBytes:(r+1)*m.rowBytes])
		}
		return
	}
	buf = buf[:cols]
	for r := a; r < b; r++ {
		row := buf
		if m.f32 != nil {
			row = m.f32[r*cols : (r+1)*cols]
		} else {
			m.kern.Dequant(buf, m.data[r*m.rowBytes:(r+1)*m.rowBytes])
		}
		i := 0
		for ; i+4 <= batch; i += 4 {
			out[i*rows+r], out[(i+1)*rows+r], out[(i+2)*rows+r], out[(i+3)*rows+r] =
				dot4(row, x[i*cols:], x[(i+1)*cols:], x[(i+2)*cols:], x[(i+3)*cols:])
		}
		for ; i < batch; i++ {
			out[i*rows+r] = dot(row, x[i*cols:(i+1)*cols])
		}
	}
}

// quantJob quantises batch input rows of cols elements to k's activation
// type, rows of n bytes each in xq: a batched prefill shares the work.
type quantJob struct {
	k    *quant.Kernel
	x    []float32
	cols int
	xq   []byte
	n    int
}

func (j *quantJob) runRows(_, lo, hi int) {
	for b := lo; b < hi; b++ {
		j.k.QuantizeAct(j.xq[b*j.n:(b+1)*j.n], j.x[b*j.cols:(b+1)*j.cols])
	}
}

// attnJob computes causal attention for (batch × heads) rows of one layer.
type attnJob struct {
	s     *state
	m     *Model
	layer int
	pos   int // position of the first token of the batch
}

func (j *attnJob) runRows(w, lo, hi int) {
	s, c := j.s, j.m.cfg
	hd, qd, kvd, heads, group := c.HeadDim(), c.QDim(), c.KVDim(), c.Heads, c.Group()
	scale := float32(1 / math.Sqrt(float64(hd)))
	base := j.layer * j.m.ctx * kvd
	scores := s.scratch[w*s.scrLen : (w+1)*s.scrLen]
	for idx := lo; idx < hi; idx++ {
		b, h := idx/heads, idx%heads
		p := j.pos + b
		q := s.q[b*qd+h*hd : b*qd+(h+1)*hd]
		off := base + (h/group)*hd
		sc := scores[:p+1]
		out := s.att[b*qd+h*hd : b*qd+(h+1)*hd]
		clear(out)
		if s.kCache16 != nil {
			// As llama.cpp computes with its f16 cache: the query and the
			// attention weights rounded to f16 too, products summed in
			// float32.
			quant.RoundF16(q)
			quant.ScoresF16(sc, q, s.kCache16[off:off+p*kvd+hd], kvd)
			scaleSoftmax(sc, scale)
			quant.RoundF16(sc)
			quant.WeightedSumF16(out, sc, s.vCache16[off:off+p*kvd+hd], kvd)
			continue
		}
		quant.Scores(sc, q, s.kCache[off:off+p*kvd+hd], kvd)
		scaleSoftmax(sc, scale)
		quant.WeightedSum(out, sc, s.vCache[off:off+p*kvd+hd], kvd)
	}
}

// matmul runs out_i = W_i x for the given matrices on the pool.
func (m *Model) matmul(s *state, x []float32, batch int, mats []*matrix, outs ...[]float32) {
	j := &s.mm
	j.n, j.x, j.batch = len(mats), x, batch
	total := 0
	used := 0 // slots of s.xq taken
	for i, w := range mats {
		j.mats[i], j.outs[i] = w, outs[i]
		total += (w.rows + w.group() - 1) / w.group()
		j.ends[i] = total
		j.xq[i], j.xqLen[i] = nil, 0
		k := w.kern
		if w.f32 != nil || k.DotQ == nil {
			continue
		}
		// Quantise x once per activation type: q, k and v (gate and up)
		// usually share it.
		for p := 0; p < i; p++ {
			if j.xq[p] != nil && j.mats[p].kern.ActType == k.ActType {
				j.xq[i], j.xqLen[i] = j.xq[p], j.xqLen[p]
			}
		}
		if j.xq[i] != nil {
			continue
		}
		n := k.ActRowBytes(w.cols)
		buf := s.xq[used*batch*s.actLen : used*batch*s.actLen+batch*n]
		used++
		s.qj = quantJob{k: k, x: x, cols: w.cols, xq: buf, n: n}
		m.pool.run(&s.qj, batch, 8*w.cols)
		j.xq[i], j.xqLen[i] = buf, n
	}
	m.pool.run(j, total, mats[0].cols*batch*mats[0].group())
}

// forward runs tokens (at most the batch size) through the model at
// positions pos, pos+1, ..., writing their keys and values into the
// cache, and, when logits is set, leaves the logits of the last token in
// s.logits. A prompt's batches before its last need no logits: the
// output matrix (the vocabulary's rows, as large as several layers) is
// then not read at all.
//
// stop, when not nil, is asked between layers: once it says true,
// forward returns false at once, the cache holding the batch's keys and
// values for some layers only (so the caller must not count the batch as
// run). A batch of hundreds of prompt tokens takes seconds on a large
// model; a cancelled request does not hold the engine that long.
func (m *Model) forward(s *state, tokens []int32, pos int, logits bool, stop func() bool) bool {
	c, w := m.cfg, m.w
	B, dim, qd, kvd, ffn := len(tokens), c.Dim, c.QDim(), c.KVDim(), c.FFN
	for b, t := range tokens {
		w.tokenEmbd.kern.Dequant(s.x[b*dim:(b+1)*dim], w.tokenEmbd.row(int(t)))
	}
	half := c.RopeDim / 2
	var mats [3]*matrix
	for l := range w.layers {
		if stop != nil && stop() {
			m.pool.rest()
			return false
		}
		ly := &w.layers[l]
		for b := 0; b < B; b++ {
			rmsnorm(s.xb[b*dim:(b+1)*dim], s.x[b*dim:(b+1)*dim], ly.attnNorm, c.NormEps)
		}
		kv := (l*m.ctx + pos) * kvd
		var kOut, vOut []float32
		if s.kCache16 != nil {
			kOut, vOut = s.kNew[:B*kvd], s.vNew[:B*kvd]
		} else {
			kOut, vOut = s.kCache[kv:kv+B*kvd], s.vCache[kv:kv+B*kvd]
		}
		mats[0], mats[1], mats[2] = &ly.wq, &ly.wk, &ly.wv
		m.matmul(s, s.xb, B, mats[:3], s.q, kOut, vOut)
		for b := 0; b < B; b++ {
			q := s.q[b*qd : (b+1)*qd]
			k := kOut[b*kvd : (b+1)*kvd]
			if ly.bq != nil {
				add(q, ly.bq)
			}
			if ly.bk != nil {
				add(k, ly.bk)
			}
			if ly.bv != nil {
				add(vOut[b*kvd:(b+1)*kvd], ly.bv)
			}
			p := pos + b
			cos, sin := m.ropeCos[p*half:(p+1)*half], m.ropeSin[p*half:(p+1)*half]
			rope(q, c.HeadDim(), cos, sin, c.RopeNeox)
			rope(k, c.HeadDim(), cos, sin, c.RopeNeox)
		}
		if s.kCache16 != nil {
			quant.ToF16(s.kCache16[kv:kv+B*kvd], kOut)
			quant.ToF16(s.vCache16[kv:kv+B*kvd], vOut)
		}
		s.attn.m, s.attn.layer, s.attn.pos = m, l, pos
		m.pool.run(&s.attn, B*c.Heads, (pos+B)*c.HeadDim()*2)
		mats[0] = &ly.wo
		m.matmul(s, s.att, B, mats[:1], s.xb)
		add(s.x[:B*dim], s.xb[:B*dim])
		for b := 0; b < B; b++ {
			rmsnorm(s.xb[b*dim:(b+1)*dim], s.x[b*dim:(b+1)*dim], ly.ffnNorm, c.NormEps)
		}
		mats[0], mats[1] = &ly.wGate, &ly.wUp
		m.matmul(s, s.xb, B, mats[:2], s.hb, s.hb2)
		swiglu(s.hb[:B*ffn], s.hb2[:B*ffn])
		mats[0] = &ly.wDown
		m.matmul(s, s.hb, B, mats[:1], s.xb)
		add(s.x[:B*dim], s.xb[:B*dim])
	}
	if logits {
		last := s.x[(B-1)*dim : B*dim]
		rmsnorm(s.xb[:dim], last, w.outputNorm, c.NormEps)
		mats[0] = &w.output
		m.matmul(s, s.xb[:dim], 1, mats[:1], s.logits)
		s.outputs++
	}
	m.pool.rest()
	return true
}
