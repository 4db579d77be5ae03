package gate

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestDefaultTiers(t *testing.T) {
	tiers := DefaultTiers()
	if got, want := strings.Join(tiers.Names(), ","), "flagship,mainstream,entry"; got != want {
		t.Errorf("names: got %s, want %s", got, want)
	}
	tests := []struct {
		tier      string
		ttft, gap float64
	}{
		{"flagship", 180, 70},
		{"mainstream", 280, 95},
		{"entry", 420, 130},
	}
	for _, tc := range tests {
		t.Run(tc.tier, func(t *testing.T) {
			rules, err := tiers.Rules(tc.tier)
			if err != nil {
				t.Fatal(err)
			}
			if len(rules) != 2 {
				t.Fatalf("got %d rules, want 2", len(rules))
			}
			want := []struct {
				metric string
				limit  float64
			}{{"ttft", tc.ttft}, {"gap", tc.gap}}
			for i, w := range want {
				r := rules[i]
				if r.Metric != w.metric || r.Stat != "p95" || r.Op != LessEq || r.Limit != w.limit || r.Unit != "ms" {
					t.Errorf("rule %d: got %s (%+v), want %s.p95 <= %vms", i, r, r, w.metric, w.limit)
				}
				if r.Source != "tier:"+tc.tier || r.Scope != measure.Overall || !r.Scoped {
					t.Errorf("rule %d: source %q scope %v, want tier:%s overall", i, r.Source, r.Scope, tc.tier)
				}
			}
		})
	}
	if _, err := tiers.Rules("ultra"); err == nil || !strings.Contains(err.Error(), "flagship, mainstream, entry") {
		t.Errorf("unknown tier error = %v, want one that lists the tiers", err)
	}
}

func TestLoadTiers(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "tiers.yaml")
	os.WriteFile(good, []byte("tiers:\n  - name: kiosk\n    thresholds: [\"ttft.p50 < 1s\", \"[cold] ttft.max < 5s\"]\n"), 0o644)
	tiers, err := LoadTiers(good)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := tiers.Rules("kiosk")
	if err != nil || len(rules) != 2 || rules[0].Limit != 1000 || rules[1].Scope != measure.Cold {
		t.Errorf("got %+v, %v; want ttft.p50 < 1000 ms and a cold rule", rules, err)
	}

	bad := []struct {
		name, yaml, want string
	}{
		{"bad threshold", "tiers:\n  - name: x\n    thresholds: [\"ttft.p95 < 1\"]\n", `tier "x": threshold "ttft.p95 < 1": ttft.p95 is a time`},
		{"unknown field", "tiers:\n  - name: x\n    limits: [a]\n", "field limits not found"},
		{"duplicate", "tiers:\n  - name: x\n    thresholds: [\"ttft.p95 < 1s\"]\n  - name: x\n    thresholds: [\"ttft.p95 < 1s\"]\n", "appears twice"},
		{"no thresholds", "tiers:\n  - name: x\n", "has no thresholds"},
		{"empty", "tiers: []\n", "no tiers"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
			os.WriteFile(p, []byte(tc.yaml), 0o644)
			_, err := LoadTiers(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("got %v, want an error naming %s and containing %q", err, p, tc.want)
			}
		})
	}
}

func TestJudgeWithTier(t *testing.T) {
	run := testRun()
	run.Config.SuiteThresholds = nil
	rules, _ := DefaultTiers().Rules("entry")
	v := Judge(run, rules)
	// Overall warm TTFTs sorted 100,120,140,200,210,220,300: rank 5.7 →
	// 220 + 0.7·80 = 276 ≤ 420. Pooled gaps: rank 19 of 21 is 150 > 130.
	if len(v) != 2 || !v[0].Passed || v[1].Passed || v[0].Source != "tier:entry" {
		t.Fatalf("got %+v, want ttft passing and gap failing on entry", v)
	}
	if math.Abs(v[0].Value-276) > 1e-9 || v[1].Value != 150 {
		t.Errorf("values: got %v and %v, want 276 and 150", v[0].Value, v[1].Value)
	}
	// Requests 5 and 6 have an own gap p95 above 130 ms (rank 1.9 of 3 gaps).
	if len(v[1].Offenders) != 2 || v[1].Offenders[0].Index != 6 || v[1].Offenders[1].Index != 5 {
		t.Errorf("offenders: got %+v, want requests 6 then 5", v[1].Offenders)
	}
}

func TestExperience(t *testing.T) {
	run := testRun()
	rules := DefaultExperience()
	if len(rules) != 4 {
		t.Fatalf("got %d default rows, want 4", len(rules))
	}
	for _, r := range rules {
		if r.Impact == "" || r.Experience == "" {
			t.Errorf("row %s lacks an experience or impact", r.When)
		}
	}
	// testRun: TTFT p95 276 (not > 300), gap p95 150 (> 110), gap max 250
	// (> 200), TTFT std ≈ 69 (> 60, counts on flagship only).
	tests := []struct {
		tier string
		want []string // rule texts triggered
	}{
		{"mainstream", []string{"gap.p95 > 110ms", "gap.max > 200ms"}},
		{"flagship", []string{"gap.p95 > 110ms", "gap.max > 200ms", "ttft.std > 60ms"}},
		{"", []string{"gap.p95 > 110ms", "gap.max > 200ms"}},
	}
	for _, tc := range tests {
		t.Run("tier "+tc.tier, func(t *testing.T) {
			rows := Experience(run, rules, tc.tier)
			var got []string
			for _, r := range rows {
				got = append(got, r.Rule)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if rows[1].Value != 250 || rows[1].Unit != "ms" || rows[1].Experience != "freezes; users think it crashed" || rows[1].Scope != "overall" {
				t.Errorf("max gap row: got %+v", rows[1])
			}
		})
	}

	// A run whose every answer starts at 400 ms triggers the mainstream
	// pause, with the measured p95 beside it; the run's own tier is used
	// when none is given.
	slow := &runfile.Run{SchemaVersion: 1, Device: runfile.Device{Tier: "mainstream"}}
	for i := range 5 {
		slow.Requests = append(slow.Requests, req(i, "c", "p", 400, 20, 20))
	}
	rows := Experience(slow, rules, "")
	if len(rows) != 1 || rows[0].Experience != "a pause before the answer starts" || rows[0].Value != 400 || rows[0].Tier != "mainstream" {
		t.Errorf("got %+v, want only the mainstream pause at 400 ms", rows)
	}
}

func TestParseExperienceErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad condition", "rules:\n  - when: ttft > 3\n    experience: x\n", `rule 1: threshold "ttft > 3"`},
		{"no experience", "rules:\n  - when: ttft.p95 > 3ms\n", `needs both "when" and "experience"`},
		{"unknown field", "rules:\n  - when: ttft.p95 > 3ms\n    experience: x\n    cost: y\n", "field cost not found"},
		{"empty", "rules: []\n", "no rules"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseExperience([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
