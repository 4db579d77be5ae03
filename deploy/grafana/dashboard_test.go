package grafana

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/tokenpulse/tokenpulse/internal/pgtest"
	"github.com/tokenpulse/tokenpulse/internal/store"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			RawSQL string `json:"rawSql"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// grafanaMacros expands what Grafana's PostgreSQL data source expands in
// a query: the time filter (over all time here) and the variables
// ($target, $model, $device: a quoted list, as a multi-value variable).
func expand(q string, vars map[string]string) string {
	q = regexp.MustCompile(`\$__unixEpochNanoFilter\((\w+)\)`).ReplaceAllString(q, "$1 BETWEEN 0 AND 9223372036854775807")
	for k, v := range vars {
		q = strings.ReplaceAll(q, "$"+k, "'"+strings.ReplaceAll(v, "'", "''")+"'")
	}
	return q
}

// TestDashboardQueriesRun runs every query of tokenpulse.json against a
// PostgreSQL history holding one run: each must run and return that run.
func TestDashboardQueriesRun(t *testing.T) {
	b, err := os.ReadFile("tokenpulse.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("tokenpulse.json: %v", err)
	}
	url := pgtest.Database(t)
	run := &runfile.Run{
		SchemaVersion: runfile.SchemaVersion, StartedAt: time.Date(2026, 11, 29, 2, 0, 0, 0, time.UTC),
		Target: runfile.Target{URL: "http://h:8080/v1", Model: "m's"}, Device: runfile.Device{Hostname: "ci-1", Label: "pixel-8"},
	}
	for i := range 3 {
		run.Requests = append(run.Requests, runfile.Request{Index: i, Status: 200, TTFTNS: 50e6, E2ENS: 90e6, OutputTokens: 3, ContentEvents: 3,
			TokenTimesNS: []int64{50e6, 70e6, 90e6}})
	}
	measure.Summarize(run)
	if _, err := store.Record(url, run); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vars := map[string]string{"target": run.Target.Key(), "model": run.Target.Model, "device": run.Device.Key()}
	ctx := context.Background()
	count := func(what, q string) int {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Errorf("%s: %v\n%s", what, err, q)
			return 0
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		return n
	}
	queries := 0
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		queries++
		if n := count("variable "+v.Name, v.Query); n != 1 {
			t.Errorf("variable %s: %d values, want 1", v.Name, n)
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			queries++
			q := expand(tg.RawSQL, vars)
			if strings.Contains(q, "$") {
				t.Errorf("panel %q: a macro or variable is left unexpanded:\n%s", p.Title, q)
				continue
			}
			if n := count("panel "+p.Title, q); n != 1 {
				t.Errorf("panel %q: %d rows, want the one run", p.Title, n)
			}
		}
	}
	if len(d.Panels) < 6 || queries < 10 {
		t.Errorf("%d panels, %d queries: the dashboard lost its panels", len(d.Panels), queries)
	}
}
