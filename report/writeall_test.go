package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestWriteAll(t *testing.T) {
	tests := []struct {
		name    string
		formats []string
		want    []string
	}{
		{"everything", nil, []string{
			"charts/cdf.svg", "charts/gaps.svg", "charts/load.svg", "charts/overtime.svg", "charts/timeline-12-complex-02.svg", "charts/timeline-7-complex-02.svg", "charts/waterfall.svg",
			"junit.xml", "methodology.md", "report.html", "report.txt",
		}},
		{"junit only", []string{"junit"}, []string{"junit.xml"}},
		{"html and md", []string{"html", "md"}, []string{"methodology.md", "report.html"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if err := WriteAll(dir, reporttest.StallRun(), Options{Formats: tt.formats}); err != nil {
				t.Fatal(err)
			}
			if got := listFiles(t, dir); !slices.Equal(got, tt.want) {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteAllChartsMatchCharts(t *testing.T) {
	dir := t.TempDir()
	run := reporttest.StallRun()
	if err := WriteAll(dir, run, Options{Formats: []string{"svg"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range Charts(run, Options{}) {
		b, err := os.ReadFile(filepath.Join(dir, ChartsDir, c.Name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(c.SVG) {
			t.Errorf("%s.svg differs from Charts()", c.Name)
		}
	}
}

func TestWriteAllUnknownFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteAll(dir, reporttest.StallRun(), Options{Formats: []string{"pdf"}}); err == nil {
		t.Fatal("WriteAll accepted format pdf")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("WriteAll made %s for a bad format", dir)
	}
}
