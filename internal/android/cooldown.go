package android

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// CooldownSpec is what --cooldown waits for: a battery temperature
// ("38C": at or below 38 °C) or a time ("2m").
type CooldownSpec struct {
	Text string
	// TempC > 0 waits for the battery to be at or below it; else Wait.
	TempC float64
	Wait  time.Duration
}

// ParseCooldown parses --cooldown.
func ParseCooldown(s string) (CooldownSpec, error) {
	t := strings.TrimSpace(s)
	if up := strings.ToUpper(t); strings.HasSuffix(up, "C") {
		num := strings.TrimSuffix(strings.TrimSuffix(up, "C"), "°")
		v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || v <= 0 || v > 100 {
			return CooldownSpec{}, fmt.Errorf("--cooldown %q: want a battery temperature like 38C (above 0, at most 100) or a time like 2m", s)
		}
		return CooldownSpec{Text: t, TempC: v}, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d <= 0 {
		return CooldownSpec{}, fmt.Errorf("--cooldown %q: want a battery temperature like 38C or a time like 2m", s)
	}
	return CooldownSpec{Text: t, Wait: d}, nil
}

// Clock is the time a cooldown waits by; tests give their own.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

// CooldownPoll is how often a temperature cooldown reads the battery.
const CooldownPoll = 5 * time.Second

// Cooldown waits as spec says, for at most limit when it waits for a
// temperature, and reports each reading to progress. The temperature is
// the battery's: the one every device has, and the one that lags (a
// cooled battery means a cooled body, not just idle cores).
func Cooldown(ctx context.Context, a *ADB, spec CooldownSpec, limit time.Duration, clk Clock, progress func(string)) (*runfile.Cooldown, error) {
	start := clk.Now()
	rec := &runfile.Cooldown{Until: spec.Text}
	if spec.TempC <= 0 {
		progress(fmt.Sprintf("cooling down for %s", spec.Wait))
		if err := clk.Sleep(ctx, spec.Wait); err != nil {
			return nil, err
		}
		rec.Reached = true
		rec.WaitedMS = float64(clk.Now().Sub(start)) / 1e6
		return rec, nil
	}
	for {
		h, err := ReadHeat(ctx, a, clk.Now())
		if err != nil {
			return nil, err
		}
		if h.BatteryC == nil {
			return nil, fmt.Errorf("--cooldown %s: the device gives no battery temperature; wait for a time instead (--cooldown 2m)", spec.Text)
		}
		waited := clk.Now().Sub(start)
		rec.WaitedMS = float64(waited) / 1e6
		if *h.BatteryC <= spec.TempC {
			rec.Reached = true
			return rec, nil
		}
		if waited >= limit {
			progress(fmt.Sprintf("the battery is still at %.1f °C after %s; starting anyway", *h.BatteryC, limit))
			return rec, nil
		}
		progress(fmt.Sprintf("cooling down: battery %.1f °C, waiting for %.1f °C", *h.BatteryC, spec.TempC))
		if err := clk.Sleep(ctx, CooldownPoll); err != nil {
			return nil, err
		}
	}
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns the time.
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
