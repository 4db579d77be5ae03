package bench

import (
	"cmp"
	"math"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestParseShard(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Shard
		ok   bool
	}{{"0/4", Shard{0, 4}, true}, {" 3/4 ", Shard{3, 4}, true}, {"4/4", Shard{}, false}, {"-1/4", Shard{}, false}, {"1", Shard{}, false}, {"a/b", Shard{}, false}, {"0/0", Shard{}, false}} {
		got, err := ParseShard(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v", tt.in, got, err)
		}
	}
}

func TestShardPartSpreadsTheRemainder(t *testing.T) {
	var got []int
	for i := range 4 {
		got = append(got, Shard{i, 4}.Part(10))
	}
	if !slices.Equal(got, []int{3, 3, 2, 2}) {
		t.Errorf("10 over 4 shards: %v, want [3 3 2 2]", got)
	}
}

// shardsOf returns every shard's plan of w split n ways.
func shardsOf(t *testing.T, w Workload, n int) []ShardPlan {
	t.Helper()
	var out []ShardPlan
	for i := range n {
		w.Shard = Shard{i, n}
		if err := w.Validate(); err != nil {
			t.Fatal(err)
		}
		p, err := w.Plan()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestShardsPartitionTheClosedLoop: prompt j of the run's sample goes to
// shard j mod N, once; the concurrency is split with its remainder.
func TestShardsPartitionTheClosedLoop(t *testing.T) {
	w := Workload{Suite: workloadSuite(), Requests: 11, Concurrency: 6, Seed: 3}
	all := w.Suite.Sample(11, 3)
	plans := shardsOf(t, w, 4)
	conc := 0
	for i, p := range plans {
		conc += p.Concurrency
		if p.Total != 11 {
			t.Errorf("shard %d: total %d, want 11", i, p.Total)
		}
		for k, q := range p.Prompts {
			if q.ID != all[i+4*k].ID {
				t.Errorf("shard %d prompt %d = %s, want %s", i, k, q.ID, all[i+4*k].ID)
			}
		}
	}
	if conc != 6 || plans[0].Concurrency != 2 || plans[3].Concurrency != 1 {
		t.Errorf("concurrency split %d (%d..%d), want 6 as 2,2,1,1", conc, plans[0].Concurrency, plans[3].Concurrency)
	}
}

type stamped struct {
	at time.Duration
	id string
}

// merged returns every shard's arrivals with their prompts, in time order.
func merged(plans []ShardPlan) []stamped {
	var out []stamped
	for _, p := range plans {
		for k, at := range p.Schedule {
			out = append(out, stamped{at, p.Prompts[k].ID})
		}
	}
	slices.SortStableFunc(out, func(a, b stamped) int { return cmp.Compare(a.at, b.at) })
	return out
}

// TestShardsPartitionTheOpenLoop: the shards' arrivals together are the
// first -n of the superposition, the j-th of them asking prompt j of the
// run's sample, each once.
func TestShardsPartitionTheOpenLoop(t *testing.T) {
	w := Workload{Suite: workloadSuite(), Requests: 400, Concurrency: 8, Seed: 5, Arrival: Arrival{Process: ArrivalPoisson, Rate: 40, Max: 400}}
	plans := shardsOf(t, w, 4)
	all := merged(plans)
	if len(all) != 400 {
		t.Fatalf("%d arrivals, want 400", len(all))
	}
	sample := w.Suite.Sample(400, 5)
	for j, a := range all {
		if a.id != sample[j].ID {
			t.Fatalf("arrival %d asks %s, want prompt %d of the sample, %s", j, a.id, j, sample[j].ID)
		}
	}
	for i, p := range plans {
		if p.Total != 400 || p.Requests != len(p.Schedule) || p.Requests < 50 {
			t.Errorf("shard %d: %d of %d requests (schedule %d)", i, p.Requests, p.Total, len(p.Schedule))
		}
	}
	// Each shard's own seed: no two shards share a schedule.
	if slices.Equal(plans[0].Schedule[:10], plans[1].Schedule[:10]) {
		t.Error("shards 0 and 1 drew the same arrivals")
	}
}

// TestShardedPoissonIsPoisson: the superposition of 4 shards at R/4 has
// exponential inter-arrivals of mean 1/R (Kolmogorov–Smirnov against the
// exponential CDF); the test is shown able to fail on the arrivals of a
// single shard, whose rate is R/4.
func TestShardedPoissonIsPoisson(t *testing.T) {
	const rate = 50.0
	w := Workload{Suite: workloadSuite(), Requests: 4000, Concurrency: 4, Seed: 9, Arrival: Arrival{Process: ArrivalPoisson, Rate: rate, Max: 4000}}
	plans := shardsOf(t, w, 4)
	gaps := func(ts []time.Duration) []float64 {
		var out []float64
		for i := 1; i < len(ts); i++ {
			out = append(out, (ts[i] - ts[i-1]).Seconds())
		}
		slices.Sort(out)
		return out
	}
	var all []time.Duration
	for _, a := range merged(plans) {
		all = append(all, a.at)
	}
	exp := distuv.Exponential{Rate: rate}
	if d, crit := ksExp(gaps(all), exp); d > crit {
		t.Errorf("merged inter-arrivals: KS distance %.4f to Exp(%g) > %.4f", d, rate, crit)
	}
	if d, crit := ksExp(gaps(plans[0].Schedule), exp); d <= crit {
		t.Errorf("one shard's inter-arrivals pass as Exp(%g) (KS %.4f): the test cannot fail", rate, d)
	}
}

// ksExp is the one-sample Kolmogorov–Smirnov distance of sorted xs from
// dist, and its critical value at α = 0.001.
func ksExp(xs []float64, dist distuv.Exponential) (d, crit float64) {
	n := float64(len(xs))
	for i, x := range xs {
		f := dist.CDF(x)
		d = max(d, math.Abs(float64(i+1)/n-f), math.Abs(f-float64(i)/n))
	}
	return d, 1.95 / math.Sqrt(n)
}

// TestShardedConstantInterleaves: constant arrivals at R over 4 shards
// are, together, exactly 1/R apart.
func TestShardedConstantInterleaves(t *testing.T) {
	w := Workload{Suite: workloadSuite(), Requests: 40, Concurrency: 4, Seed: 1, Arrival: Arrival{Process: ArrivalConstant, Rate: 100, Max: 40}}
	all := merged(shardsOf(t, w, 4))
	for j, a := range all {
		if want := time.Duration(j) * 10 * time.Millisecond; (a.at - want).Abs() > time.Microsecond {
			t.Fatalf("arrival %d at %v, want %v", j, a.at, want)
		}
	}
}

func TestShardRefusals(t *testing.T) {
	for _, w := range []Workload{
		{Suite: workloadSuite(), Requests: 3, Concurrency: 4, Shard: Shard{0, 4}},                               // fewer requests than shards
		{Suite: workloadSuite(), Requests: 40, Concurrency: 3, Shard: Shard{0, 4}},                              // fewer in flight than shards
		{Suite: workloadSuite(), Requests: 40, Concurrency: 4, Shard: Shard{0, 4}, Scenario: ScenarioRapidFire}, // a scenario
	} {
		if err := w.Validate(); err == nil {
			t.Errorf("%+v: no error", w)
		}
	}
}
