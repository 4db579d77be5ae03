package gate

import "testing"

func TestOfSoC(t *testing.T) {
	tiers := DefaultTiers()
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"SM8650", "pineapple"}, "flagship"},
		{[]string{"", "Snapdragon 8 gen 3"}, "flagship"},
		{[]string{"MT6896", "mt6896"}, "mainstream"},
		{[]string{"sm4450"}, "entry"},
		{[]string{"Tensor G3", "zuma"}, ""},
		{nil, ""},
	} {
		got, ok := tiers.OfSoC(c.names...)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("OfSoC(%q) = %q %v, want %q", c.names, got, ok, c.want)
		}
	}
	own, err := ParseTiers([]byte("tiers:\n  - name: lab\n    thresholds: [ttft.p95 <= 1s]\n    socs: [Tensor G3]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := own.OfSoC("tensor g3"); got != "lab" {
		t.Errorf("a tiers file of one's own maps Tensor G3 to %q", got)
	}
}
