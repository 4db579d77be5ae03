package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// ksStatistic returns the Kolmogorov–Smirnov statistic D_n =
// sup |F_n(x) − F(x)| of sample xs against the continuous CDF f.
func ksStatistic(xs []float64, f func(float64) float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		fx := f(x)
		d = max(d, fx-float64(i)/n, float64(i+1)/n-fx)
	}
	return d
}

// ksCritical01 is the asymptotic critical value of D_n at α = 0.01:
// sqrt(−ln(α/2)/2) / sqrt(n) = 1.6276/sqrt(n).
func ksCritical01(n int) float64 { return math.Sqrt(-math.Log(0.01/2)/2) / math.Sqrt(float64(n)) }

func interArrivals(s []time.Duration) []float64 {
	out := make([]float64, 0, len(s))
	for i := 1; i < len(s); i++ {
		out = append(out, (s[i] - s[i-1]).Seconds())
	}
	return out
}

func TestArrivalPoissonKS(t *testing.T) {
	const rate = 50.0
	exp := func(x float64) float64 { return 1 - math.Exp(-rate*x) }
	for _, seed := range []uint64{1, 2, 3} {
		s, err := Arrival{Process: ArrivalPoisson, Rate: rate, Max: 2001}.Schedule(seed)
		if err != nil {
			t.Fatal(err)
		}
		xs := interArrivals(s)
		d, crit := ksStatistic(xs, exp), ksCritical01(len(xs))
		if d > crit {
			t.Errorf("seed %d: KS D = %.4f over %d inter-arrivals > critical %.4f (α = 0.01): not exponential(%v)", seed, d, len(xs), crit, rate)
		}
		// The test has power: the same sample against a rate 10% off fails.
		if off := ksStatistic(xs, func(x float64) float64 { return 1 - math.Exp(-1.1*rate*x) }); off <= crit {
			t.Errorf("seed %d: KS D = %.4f against exponential(%v) does not reject", seed, off, 1.1*rate)
		}
	}
}

func TestArrivalKSStatisticKnown(t *testing.T) {
	// Uniform CDF on [0,1], sample {0.1, 0.5, 0.9}: D = max over the
	// steps of |i/n − x| and |(i+1)/n − x| = max(0.1, 0.2333, 0.1667, 0.1667, 0.2333, 0.1).
	d := ksStatistic([]float64{0.9, 0.1, 0.5}, func(x float64) float64 { return x })
	if math.Abs(d-(1.0/3-0.1)) > 1e-12 {
		t.Errorf("D = %v, want %v", d, 1.0/3-0.1)
	}
	if c := ksCritical01(1000); math.Abs(c-0.05147) > 1e-4 {
		t.Errorf("critical value at n = 1000: %v, want 0.0515", c)
	}
}

func TestArrivalGammaCV(t *testing.T) {
	const rate = 20.0
	for _, b := range []float64{0.5, 1, 4} {
		s, err := Arrival{Process: ArrivalGamma, Rate: rate, Burstiness: b, Max: 20001}.Schedule(7)
		if err != nil {
			t.Fatal(err)
		}
		xs := interArrivals(s)
		var sum, sq float64
		for _, x := range xs {
			sum += x
		}
		mean := sum / float64(len(xs))
		for _, x := range xs {
			sq += (x - mean) * (x - mean)
		}
		cv := math.Sqrt(sq/float64(len(xs)-1)) / mean
		// Over 20,000 draws the CV's standard error is below 1.5% of it
		// for these shapes; 5% is over three of them.
		if want := 1 / math.Sqrt(b); math.Abs(cv-want) > 0.05*want {
			t.Errorf("burstiness %v: CV = %.4f, want 1/sqrt(B) = %.4f ± 5%%", b, cv, want)
		}
		if math.Abs(mean-1/rate) > 0.03/rate {
			t.Errorf("burstiness %v: mean inter-arrival %.5f s, want 1/R = %.5f", b, mean, 1/rate)
		}
	}
}

func TestArrivalGammaShapeOneIsExponential(t *testing.T) {
	s, err := Arrival{Process: ArrivalGamma, Rate: 10, Burstiness: 1, Max: 1501}.Schedule(11)
	if err != nil {
		t.Fatal(err)
	}
	xs := interArrivals(s)
	if d, c := ksStatistic(xs, func(x float64) float64 { return 1 - math.Exp(-10*x) }), ksCritical01(len(xs)); d > c {
		t.Errorf("gamma shape 1: KS D = %.4f > %.4f against exponential", d, c)
	}
}

func TestArrivalGammaSmallShapeKS(t *testing.T) {
	// Shape 0.5, scale 2: a chi-square with 1 degree of freedom, whose
	// CDF is erf(sqrt(x/2)); checks the shape < 1 boost.
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float64, 2000)
	for i := range xs {
		xs[i] = 2 * Gamma(rng, 0.5)
	}
	if d, c := ksStatistic(xs, func(x float64) float64 { return math.Erf(math.Sqrt(x / 2)) }), ksCritical01(len(xs)); d > c {
		t.Errorf("gamma(0.5): KS D = %.4f > %.4f against chi-square(1)", d, c)
	}
}

func TestArrivalConstantExact(t *testing.T) {
	s, err := Arrival{Process: ArrivalConstant, Rate: 4, Max: 9}.Schedule(1)
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range s {
		if want := time.Duration(i) * 250 * time.Millisecond; at != want {
			t.Errorf("arrival %d at %v, want %v", i, at, want)
		}
	}
	if len(s) != 9 {
		t.Errorf("%d arrivals, want 9", len(s))
	}
	// With a duration: every arrival before it, the first at 0.
	s, _ = Arrival{Process: ArrivalConstant, Rate: 4, Duration: time.Second}.Schedule(1)
	if len(s) != 4 || s[3] != 750*time.Millisecond {
		t.Errorf("1 s at 4/s: %v, want 0, 250, 500, 750 ms", s)
	}
	// -n caps a duration.
	s, _ = Arrival{Process: ArrivalConstant, Rate: 4, Duration: time.Second, Max: 2}.Schedule(1)
	if len(s) != 2 {
		t.Errorf("capped at 2: %v", s)
	}
}

func TestArrivalSeeded(t *testing.T) {
	a := Arrival{Process: ArrivalPoisson, Rate: 100, Max: 50}
	x, _ := a.Schedule(3)
	y, _ := a.Schedule(3)
	z, _ := a.Schedule(4)
	if !slices.Equal(x, y) {
		t.Error("the same seed gave two schedules")
	}
	if slices.Equal(x, z) {
		t.Error("two seeds gave the same schedule")
	}
	if x[0] != 0 || !slices.IsSorted(x) {
		t.Errorf("schedule starts at %v, sorted %v", x[0], slices.IsSorted(x))
	}
}

func TestArrivalRampFollowsIntegral(t *testing.T) {
	const rate, ramp = 100.0, 10 * time.Second
	// Constant: the count up to t is Λ(t) to within one arrival.
	a := Arrival{Process: ArrivalConstant, Rate: rate, Ramp: ramp, Duration: 20 * time.Second}
	s, err := a.Schedule(1)
	if err != nil {
		t.Fatal(err)
	}
	for tt := 0.25; tt <= 20; tt += 0.25 {
		n := countUpTo(s, tt)
		if want := a.Expected(tt); math.Abs(float64(n)-want) > 1 {
			t.Errorf("constant, ramp: %d arrivals by %.2f s, want Λ = %.2f", n, tt, want)
		}
	}
	if want := rate*ramp.Seconds()/2 + rate*10; math.Abs(float64(len(s))-want) > 1 {
		t.Errorf("%d arrivals in 20 s, want %.0f", len(s), want)
	}
	// Poisson: the count up to t is Poisson(Λ(t)); within 4 standard
	// deviations at every checkpoint, and the arrivals of the ramp's
	// first half are a quarter of the ramp's.
	p := Arrival{Process: ArrivalPoisson, Rate: rate, Ramp: ramp, Duration: 20 * time.Second}
	s, err = p.Schedule(2)
	if err != nil {
		t.Fatal(err)
	}
	for tt := 1.0; tt <= 20; tt++ {
		n, want := float64(countUpTo(s, tt)), p.Expected(tt)
		if math.Abs(n-want) > 4*math.Sqrt(want)+1 {
			t.Errorf("poisson, ramp: %v arrivals by %v s, want %.1f ± %.1f", n, tt, want, 4*math.Sqrt(want))
		}
	}
	// The rate rises: the ramp's second half holds three times its first.
	first, second := float64(countUpTo(s, 5)), float64(countUpTo(s, 10)-countUpTo(s, 5))
	if r := second / first; r < 2.5 || r > 3.5 {
		t.Errorf("ramp halves hold %v and %v arrivals: ratio %.2f, want 3", first, second, r)
	}
}

func countUpTo(s []time.Duration, sec float64) int {
	n := 0
	for _, at := range s {
		if at.Seconds() <= sec {
			n++
		}
	}
	return n
}

func TestArrivalValidate(t *testing.T) {
	for _, a := range []Arrival{
		{Process: "uniform", Rate: 1, Max: 1},
		{Process: ArrivalPoisson, Rate: 0, Max: 1},
		{Process: ArrivalPoisson, Rate: math.Inf(1), Max: 1},
		{Process: ArrivalPoisson, Rate: 1},
		{Process: ArrivalPoisson, Rate: 1, Max: 1, Burstiness: 2},
		{Process: ArrivalGamma, Rate: 1, Max: 1, Burstiness: -1},
		// A gamma of shape 0 is no distribution: the CLI refused it and
		// the library took it for 1 (Poisson).
		{Process: ArrivalGamma, Rate: 1, Max: 1},
		{Process: ArrivalPoisson, Rate: 1e6, Duration: time.Hour},
		{Process: ArrivalPoisson, Rate: 1, Max: 1, Ramp: -time.Second},
	} {
		if err := a.Validate(); err == nil {
			t.Errorf("%+v: no error", a)
		}
	}
	if s, err := (Arrival{Process: ArrivalClosed}).Schedule(1); err != nil || s != nil {
		t.Errorf("closed loop: schedule %v, %v", s, err)
	}
}
