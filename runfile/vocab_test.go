package runfile

import (
	"os"
	"strings"
	"testing"
)

// TestVocabularyIsDocumented: each value of the run file's vocabulary is
// named in docs/run-format.md on the row of the field that holds it, so
// the constants and the format's description say the same.
func TestVocabularyIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/run-format.md")
	if err != nil {
		t.Fatal(err)
	}
	row := func(field string) string {
		for _, l := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(l, "| `"+field+"`") || strings.Contains(l, ", `"+field+"` |") || strings.Contains(l, "`"+field+"` (") {
				return l
			}
		}
		t.Fatalf("run-format.md has no row for %s", field)
		return ""
	}
	check := func(field string, values ...string) {
		r := row(field)
		for _, v := range values {
			if !strings.Contains(r, "`"+v+"`") {
				t.Errorf("run-format.md's row of %s does not name %q", field, v)
			}
		}
	}
	check("error_kind", string(ErrorHTTP), string(ErrorConnect), string(ErrorCut), string(ErrorMalformed),
		string(ErrorTimeout), string(ErrorCancelled), string(ErrorOverflow))
	check("token_source", string(TokensUsage), string(TokensEvents), string(TokensServer), string(TokensTokenizer))
	check("arrival", string(ArrivalClosed), string(ArrivalPoisson), string(ArrivalGamma), string(ArrivalConstant))
	if !ArrivalPoisson.Open() || ArrivalClosed.Open() || Arrival("").Open() {
		t.Error("Open: want poisson open, closed and empty closed loops")
	}
	if !(Change{Status: ChangeRegressed}).Regressed() || (Change{Status: ChangeNotSignificant}).Regressed() {
		t.Error("Change.Regressed does not follow ChangeRegressed")
	}
}
