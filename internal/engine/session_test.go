package engine

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

func bundledModel(t testing.TB, opts Options) *Model {
	t.Helper()
	return loadModel(t, "", opts)
}

var onceUpon = []int32{1, 403, 407, 261, 378} // "Once upon a time" with BOS

func TestSamplingSeeded(t *testing.T) {
	m := bundledModel(t, Options{})
	s := m.NewSession()
	params := []struct {
		name string
		p    Params
	}{
		{"temperature", Params{MaxTokens: 40, Temperature: 1}},
		{"top-k", Params{MaxTokens: 40, Temperature: 0.9, TopK: 20}},
		{"top-p", Params{MaxTokens: 40, Temperature: 1.2, TopP: 0.9}},
		{"min-p", Params{MaxTokens: 40, Temperature: 1.5, MinP: 0.05}},
		{"penalty", Params{MaxTokens: 40, Temperature: 0.8, RepeatPenalty: 1.3}},
	}
	greedy, _ := generate(t, s, onceUpon, Params{MaxTokens: 40})
	for _, c := range params {
		t.Run(c.name, func(t *testing.T) {
			p := c.p
			p.Seed = 7
			a, _ := generate(t, s, onceUpon, p)
			b, _ := generate(t, s, onceUpon, p)
			if !slices.Equal(a, b) {
				t.Errorf("same seed gave\n%v\n%v", a, b)
			}
			differs := !slices.Equal(a, greedy)
			for seed := uint64(8); seed < 12 && !differs; seed++ {
				p.Seed = seed
				c, _ := generate(t, s, onceUpon, p)
				differs = !slices.Equal(c, a)
			}
			if !differs {
				t.Errorf("sampling never departed from greedy or seed 7 over 5 seeds")
			}
		})
	}
}

// TestSamplerFilters checks each filter on a hand-made distribution.
func TestSamplerFilters(t *testing.T) {
	// probabilities at temperature 1: ids 0..4 ∝ 0.5, 0.25, 0.15, 0.07, 0.03
	probs := []float64{0.5, 0.25, 0.15, 0.07, 0.03}
	logits := make([]float32, len(probs))
	for i, p := range probs {
		logits[i] = float32(math.Log(p))
	}
	cases := []struct {
		name    string
		p       Params
		allowed []int32
	}{
		{"greedy", Params{}, []int32{0}},
		{"top-k 2", Params{Temperature: 1, TopK: 2}, []int32{0, 1}},
		{"top-p 0.7", Params{Temperature: 1, TopP: 0.7}, []int32{0, 1}},
		{"top-p 0.8", Params{Temperature: 1, TopP: 0.8}, []int32{0, 1, 2}},
		{"min-p 0.2", Params{Temperature: 1, MinP: 0.2}, []int32{0, 1, 2}},
		{"all", Params{Temperature: 1}, []int32{0, 1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			smp := newSampler(len(logits))
			smp.seed(1)
			seen := map[int32]int{}
			for i := 0; i < 2000; i++ {
				seen[smp.sample(slices.Clone(logits), &c.p, nil)]++
			}
			for id := range seen {
				if !slices.Contains(c.allowed, id) {
					t.Errorf("sampled id %d, allowed %v", id, c.allowed)
				}
			}
			if len(seen) != len(c.allowed) {
				t.Errorf("sampled %v, want every one of %v", seen, c.allowed)
			}
		})
	}
	t.Run("repeat penalty", func(t *testing.T) {
		smp := newSampler(2)
		l := []float32{1.0, 0.9}
		if got := smp.sample(l, &Params{RepeatPenalty: 2}, []int32{0, 0}); got != 1 {
			t.Errorf("greedy with id 0 penalised = %d, want 1", got)
		}
		if got, want := l[0], float32(0.5); got != want {
			t.Errorf("penalised logit = %v, want %v (penalised once)", got, want)
		}
	})
}

func TestCancelInsideEmit(t *testing.T) {
	m := bundledModel(t, Options{})
	s := m.NewSession()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []int32
	res, err := s.Generate(ctx, onceUpon, Params{MaxTokens: 40}, func(tok Token) error {
		got = append(got, tok.ID)
		if len(got) == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if len(got) != 3 || res.OutputTokens != 3 || res.StopReason != "cancelled" {
		t.Errorf("got %d tokens, result %+v; want 3 tokens and stop reason cancelled", len(got), res)
	}
}

func TestEmitErrorStops(t *testing.T) {
	m := bundledModel(t, Options{})
	stop := errors.New("client gone")
	n := 0
	_, err := m.NewSession().Generate(context.Background(), onceUpon, Params{MaxTokens: 40}, func(Token) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("err = %v after %d tokens, want %v after 1", err, n, stop)
	}
}

func TestCancelledBeforePrefill(t *testing.T) {
	m := bundledModel(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := m.NewSession().Generate(ctx, onceUpon, Params{MaxTokens: 5}, func(Token) error {
		t.Error("emit called after cancellation")
		return nil
	})
	if !errors.Is(err, context.Canceled) || res.StopReason != "cancelled" {
		t.Errorf("err = %v, result %+v", err, res)
	}
}

func TestContextLimits(t *testing.T) {
	m := bundledModel(t, Options{Ctx: 16})
	s := m.NewSession()
	if _, err := s.Generate(context.Background(), onceUpon, Params{MaxTokens: 12}, func(Token) error { return nil }); !errors.Is(err, ErrContextFull) {
		t.Errorf("5+12 tokens in 16: err = %v, want ErrContextFull", err)
	}
	got, res := generate(t, s, onceUpon, Params{})
	if res.StopReason != "context" || len(got) != 16-len(onceUpon)+1 {
		t.Errorf("MaxTokens 0: %d tokens, stop %q; want %d, context", len(got), res.StopReason, 16-len(onceUpon)+1)
	}
	// The file's context_length is not trusted: a larger context loads,
	// with a warning, within the memory check.
	var warned []string
	big, err := Load(context.Background(), Options{Ctx: 4096, Threads: 1, Warn: func(msg string) { warned = append(warned, msg) }})
	if err != nil {
		t.Fatalf("Load with a context larger than the model's: %v", err)
	}
	defer big.Close()
	if w := big.Info().Warnings; len(w) != 1 || !slices.Equal(w, warned) || !strings.Contains(w[0], "context size 4096 exceeds the model's own 512") {
		t.Errorf("warnings = %q, passed to Warn: %q", w, warned)
	}
	if _, err := Load(context.Background(), Options{Ctx: maxCtx + 1}); !errors.Is(err, ErrOption) {
		t.Errorf("Load with a context beyond the engine's limit: err = %v, want ErrOption", err)
	}
	if _, err := s.Generate(context.Background(), []int32{1, 9999}, Params{MaxTokens: 1}, func(Token) error { return nil }); err == nil {
		t.Error("Generate accepted a token outside the vocabulary")
	}
}

func TestDefaultContextClamped(t *testing.T) {
	m := bundledModel(t, Options{})
	// The bundled stories260K was trained with 512 < DefaultCtx (its GGUF's
	// 128 is the converter's placeholder, overridden for the bundled model).
	if got, want := m.Ctx(), 512; got != want {
		t.Errorf("ctx = %d, want %d", got, want)
	}
}

func TestWarmupAndInfo(t *testing.T) {
	m := bundledModel(t, Options{Threads: 2, BatchSize: 8})
	w, err := m.Warmup(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w.Load <= 0 || w.FirstForward <= 0 || w.Total != w.Load+w.PageIn+w.KVInit+w.FirstForward {
		t.Errorf("warm-up = %+v", w)
	}
	info := m.Info()
	want := Info{Arch: "llama", Name: "llama", Ctx: 512, CtxTrain: 512, Vocab: 512, Bundled: true,
		SHA256: "047bf46455a544931cff6fef14d7910154c56afbc23ab1c5e56a72e69912c04b", FileBytes: 1185376,
		Quantization: "F32: 48", Threads: 2, Batch: 8, KVType: "f32", Template: "raw", Kernels: quant.Accel()}
	params := info.Params
	mem := info.Memory
	info.Params, info.TensorTypes, info.Memory = 0, nil, Memory{}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("info =\n%+v\nwant\n%+v", info, want)
	}
	if params < 290000 || params > 300000 {
		t.Errorf("params = %d, want about 292.8K", params)
	}
	// The memory Load checked is what a session allocates.
	st := m.NewSession().st
	f32s := len(st.x) + len(st.xb) + len(st.q) + len(st.att) + len(st.hb) + len(st.hb2) + len(st.logits) + len(st.scratch)
	if mem.Weights != uint64(info.FileBytes) || mem.KVCache != 4*uint64(len(st.kCache)+len(st.vCache)) ||
		mem.Buffers != 4*uint64(f32s)+uint64(len(st.xq)) || mem.Rope != 4*uint64(len(m.ropeCos)+len(m.ropeSin)) ||
		mem.Sessions != 1 || mem.Total != mem.Weights+mem.Decoded+mem.Rope+mem.KVCache+mem.Buffers || mem.Limit < mem.Total {
		t.Errorf("memory = %+v", mem)
	}
	// The warmed session is handed out first and still generates correctly.
	got, _ := generate(t, m.NewSession(), onceUpon, Params{MaxTokens: 3})
	if want := []int32{432, 383, 286}; !slices.Equal(got, want) {
		t.Errorf("after warm-up got %v, want %v", got, want)
	}
}

func TestTokenText(t *testing.T) {
	m := bundledModel(t, Options{})
	var b strings.Builder
	prompt := m.Tokenizer().Encode("Once upon a time", true, false)
	if !slices.Equal(prompt, onceUpon) {
		t.Fatalf("prompt = %v, want %v", prompt, onceUpon)
	}
	_, err := m.NewSession().Generate(context.Background(), prompt, Params{MaxTokens: 11}, func(tok Token) error {
		b.WriteString(tok.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), ", there was a little girl named Lily."; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
}

func TestChatTemplates(t *testing.T) {
	msgs := []Message{{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "Bye"}}
	cases := []struct {
		name string
		tmpl string
		want string
	}{
		{"chatml", "{% for m in messages %}<|im_start|>{{m.role}}...", "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n"},
		{"llama3", "<|start_header_id|>' + message['role'] + '<|end_header_id|>", "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"llama2", "{{ bos_token + '[INST] ' + content + ' [/INST]' }}", "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] Bye [/INST]"},
		{"zephyr", "<|user|>\n{{ message['content'] }}</s>", "<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\nHello</s>\n<|user|>\nBye</s>\n<|assistant|>\n"},
		{"raw", "", "Be brief.\nHi\nHello\nBye"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmpl := detectTemplate(c.tmpl)
			if tmpl.String() != c.name {
				t.Errorf("detected %q, want %q", tmpl, c.name)
			}
			if got := tmpl.apply(msgs); got != c.want {
				t.Errorf("apply =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// TestConcurrentSessions runs sessions of one model in parallel: each must
// produce the same tokens as when run alone.
func TestConcurrentSessions(t *testing.T) {
	m := bundledModel(t, Options{Threads: 2, BatchSize: 4})
	want, _ := generate(t, m.NewSession(), onceUpon, Params{MaxTokens: 30})
	const n = 4
	results := make(chan []int32, n)
	for i := 0; i < n; i++ {
		go func() {
			var got []int32
			_, err := m.NewSession().Generate(context.Background(), onceUpon, Params{MaxTokens: 30}, func(tok Token) error {
				got = append(got, tok.ID)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			results <- got
		}()
	}
	for i := 0; i < n; i++ {
		if got := <-results; !slices.Equal(got, want) {
			t.Errorf("concurrent session got\n%v\nwant\n%v", got, want)
		}
	}
}

// TestSamplerDistribution checks that sampling follows the tempered
// softmax: frequencies over many draws match the probabilities.
func TestSamplerDistribution(t *testing.T) {
	logits := []float32{2, 1, 0.5, 0, -1}
	cases := []struct {
		name string
		p    Params
	}{
		{"T=1", Params{Temperature: 1}},
		{"T=0.5", Params{Temperature: 0.5}},
		{"T=2 top-k 3", Params{Temperature: 2, TopK: 3}},
	}
	const draws = 40000
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := len(logits)
			if c.p.TopK > 0 {
				n = c.p.TopK
			}
			want := make([]float64, n)
			var sum float64
			for i := range want {
				want[i] = math.Exp(float64(logits[i]) / float64(c.p.Temperature))
				sum += want[i]
			}
			smp := newSampler(len(logits))
			smp.seed(42)
			counts := make([]int, len(logits))
			for i := 0; i < draws; i++ {
				counts[smp.sample(slices.Clone(logits), &c.p, nil)]++
			}
			for i := range counts {
				p := 0.0
				if i < n {
					p = want[i] / sum
				}
				got := float64(counts[i]) / draws
				// 5 standard errors of a binomial proportion, at least 0.002.
				tol := max(5*math.Sqrt(p*(1-p)/draws), 0.002)
				if math.Abs(got-p) > tol {
					t.Errorf("token %d: frequency %.4f, want %.4f ± %.4f", i, got, p, tol)
				}
			}
		})
	}
}

// TestDecodeStepAllocatesNothing holds the decode loop to no allocation
// per token: a forward pass on the pool plus sampling.
func TestDecodeStepAllocatesNothing(t *testing.T) {
	path := synthFile(t, synth.Spec{Arch: "qwen2", Dim: 256, Layers: 1, Heads: 4, KVHeads: 2, FFN: 512, Vocab: 400, Ctx: 256, Type: quant.Q8_0, Seed: 4})
	for _, threads := range []int{1, 2} {
		m := loadModel(t, path, Options{Threads: threads})
		s := m.NewSession()
		pos := 0
		p := Params{Temperature: 0.8, TopK: 40, TopP: 0.9, RepeatPenalty: 1.1}
		allocs := testing.AllocsPerRun(100, func() {
			s.one[0] = s.smp.sample(s.st.logits, &p, s.recentTokens())
			s.remember(s.one[0])
			m.forward(s.st, s.one[:], pos, true, nil)
			pos++
		})
		if allocs != 0 {
			t.Errorf("%d threads: %v allocations per decode step, want 0", threads, allocs)
		}
	}
}

// TestIgnoreEOS finds a seeded sample that ends early at an
// end-of-generation token (at a temperature high enough that stories260K,
// which rarely ends a story with </s>, samples it), then checks that the same request with
// IgnoreEOS runs to MaxTokens without ever emitting one. (The tokens
// before that point may differ: the masked distribution draws otherwise.)
func TestIgnoreEOS(t *testing.T) {
	m := bundledModel(t, Options{})
	s := m.NewSession()
	const maxTokens = 200
	for seed := uint64(1); seed <= 40; seed++ {
		p := Params{MaxTokens: maxTokens, Temperature: 30, Seed: seed}
		_, res := generate(t, s, onceUpon, p)
		if res.StopReason != "stop" {
			continue
		}
		p.IgnoreEOS = true
		got, res := generate(t, s, onceUpon, p)
		if res.StopReason != "length" || len(got) != maxTokens {
			t.Fatalf("seed %d with IgnoreEOS: %d tokens, stop %q; want %d, length", seed, len(got), res.StopReason, maxTokens)
		}
		for i, id := range got {
			if m.Tokenizer().IsEOG(id) {
				t.Fatalf("seed %d with IgnoreEOS: token %d is end-of-generation %d", seed, i, id)
			}
		}
		return
	}
	t.Fatal("no seed in 1..40 ended at an end-of-generation token before 200 tokens; the test needs one")
}
