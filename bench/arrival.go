package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// The arrival processes of an open loop ([Arrival.Process]), runfile's
// vocabulary.
const (
	// ArrivalClosed is the closed loop: no schedule, each of
	// [Workload.Concurrency] workers sends its next request when its
	// previous one ends.
	ArrivalClosed = runfile.ArrivalClosed
	// ArrivalPoisson: exponential inter-arrivals of mean 1/Rate.
	ArrivalPoisson = runfile.ArrivalPoisson
	// ArrivalGamma: gamma inter-arrivals of shape Burstiness and scale
	// 1/(Rate·Burstiness), so of mean 1/Rate and coefficient of variation
	// 1/√Burstiness (vLLM's benchmark_serving --burstiness): below 1
	// burstier than Poisson, 1 is Poisson, above 1 steadier.
	ArrivalGamma = runfile.ArrivalGamma
	// ArrivalConstant: exactly 1/Rate between arrivals.
	ArrivalConstant = runfile.ArrivalConstant
)

// MaxScheduled bounds the requests one schedule may hold (a rate times a
// duration beyond it is refused rather than allocated): the most a run
// file holds, so that no run is made that report would refuse.
const MaxScheduled = runfile.MaxRequests

// Arrival describes an open loop's schedule: when each measured request
// is to be sent, whatever happened to the requests before it.
//
// Times are offsets from the schedule's origin, the instant the open loop
// begins (after the cold and warm-up requests). The first arrival is at
// the origin; each later one follows the one before by an inter-arrival
// drawn from Process. With Ramp > 0 the rate rises linearly from 0 to
// Rate over Ramp and then stays at Rate: the schedule is drawn in
// operational time (as at a constant rate 1) and mapped through the
// inverse of Λ(t) = ∫₀ᵗ r(u) du, so the expected number of arrivals up
// to t is Λ(t) for every process, and without a ramp the inter-arrivals
// are exactly those of Process at Rate.
type Arrival struct {
	// Process is ArrivalPoisson, ArrivalGamma or ArrivalConstant
	// (ArrivalClosed and "" are the closed loop, no schedule).
	Process runfile.Arrival
	// Rate is the target rate in requests per second (> 0).
	Rate float64
	// Burstiness is the gamma process's shape: > 0 with ArrivalGamma (1
	// is Poisson), 0 with the others.
	Burstiness float64
	// Duration, when > 0, ends the schedule: every arrival before it,
	// at most Max when Max > 0. Without it the schedule holds Max
	// arrivals.
	Duration time.Duration
	// Max is the number of arrivals (without Duration), or a cap on them
	// (with Duration; 0: none).
	Max int
	// Ramp, when > 0, is how long the rate takes to rise linearly from 0
	// to Rate.
	Ramp time.Duration
}

// Open reports whether a describes an open loop (a schedule).
func (a Arrival) Open() bool { return a.Process.Open() }

// Validate reports what makes a unusable.
func (a Arrival) Validate() error {
	switch a.Process {
	case "", ArrivalClosed:
		return nil
	case ArrivalPoisson, ArrivalConstant, ArrivalGamma:
	default:
		return fmt.Errorf("unknown arrival %q (want poisson, gamma or constant)", a.Process)
	}
	switch {
	case !(a.Rate > 0) || math.IsInf(a.Rate, 0):
		return fmt.Errorf("the rate must be a finite number of requests per second > 0, not %v", a.Rate)
	case a.Burstiness < 0 || math.IsNaN(a.Burstiness) || math.IsInf(a.Burstiness, 0),
		a.Process == ArrivalGamma && a.Burstiness == 0:
		return fmt.Errorf("the burstiness must be a finite number > 0, not %v", a.Burstiness)
	case a.Burstiness != 0 && a.Process != ArrivalGamma:
		return errors.New("the burstiness shapes the gamma arrival only")
	case a.Duration < 0 || a.Ramp < 0 || a.Max < 0:
		return errors.New("the duration, the ramp and the request count must be ≥ 0")
	case a.Duration == 0 && a.Max == 0:
		return errors.New("an open loop needs a duration or a request count")
	case a.Max > MaxScheduled:
		return fmt.Errorf("%d requests: at most %d can be scheduled", a.Max, MaxScheduled)
	}
	if a.Duration > 0 && a.Max == 0 {
		// The expected count, with room for a bursty draw.
		if want := a.Rate * a.Duration.Seconds(); want > MaxScheduled/2 {
			return fmt.Errorf("rate × duration is %.0f requests: at most %d can be scheduled", want, MaxScheduled/2)
		}
	}
	return nil
}

// ArrivalStream is the PCG stream of the schedule's generator, so that
// the schedule and the suite sample drawn with the same seed are
// independent.
const ArrivalStream = 0x6172726976616c // "arrival"

// Schedule returns the arrival offsets a describes, drawn from a PCG
// generator seeded with seed (and [ArrivalStream]): the same arrival and
// seed give the same schedule. It returns nil for a closed loop.
func (a Arrival) Schedule(seed uint64) ([]time.Duration, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if !a.Open() {
		return nil, nil
	}
	rng := rand.New(rand.NewPCG(seed, ArrivalStream))
	shape := a.Burstiness
	// Inter-arrivals of mean 1 in operational time.
	next := func() float64 {
		switch a.Process {
		case ArrivalConstant:
			return 1
		case ArrivalGamma:
			return Gamma(rng, shape) / shape
		}
		return rng.ExpFloat64()
	}
	limit := MaxScheduled
	if a.Max > 0 {
		limit = a.Max
	}
	end := math.Inf(1)
	if a.Duration > 0 {
		end = a.Duration.Seconds()
	}
	var out []time.Duration
	if a.Max > 0 {
		out = make([]time.Duration, 0, a.Max)
	}
	s := 0.0 // operational time: expected arrivals so far
	for len(out) < limit {
		t := a.inverse(s)
		if t >= end {
			break
		}
		out = append(out, time.Duration(math.Round(t*1e9)))
		s += next()
	}
	if len(out) == limit && a.Max == 0 {
		return nil, fmt.Errorf("the schedule holds more than %d requests", MaxScheduled)
	}
	return out, nil
}

// Expected returns Λ(t), the expected number of arrivals in [0, t] (the
// integral of the rate), t in seconds.
func (a Arrival) Expected(t float64) float64 {
	r, T := a.Rate, a.Ramp.Seconds()
	switch {
	case t <= 0:
		return 0
	case T > 0 && t < T:
		return r * t * t / (2 * T)
	case T > 0:
		return r*T/2 + r*(t-T)
	}
	return r * t
}

// inverse is Λ⁻¹(s) in seconds.
func (a Arrival) inverse(s float64) float64 {
	r, T := a.Rate, a.Ramp.Seconds()
	if T > 0 {
		if s < r*T/2 {
			return math.Sqrt(2 * T * s / r)
		}
		return T + (s-r*T/2)/r
	}
	return s / r
}

// Gamma draws from the gamma distribution of the given shape (> 0) and
// scale 1, by Marsaglia and Tsang's method ("A simple method for
// generating gamma variables", 2000); a shape below 1 is boosted by
// U^(1/shape).
func Gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return Gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x {
			return d * v
		}
		if u > 0 && math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
