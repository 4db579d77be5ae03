package publish

import (
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that what it accepts is a
// valid bucket with a clean prefix, and that String gives it back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"s3://perf-runs/nightly/x", "s3://a.b.c/", "s3://ab", "s3://x/../y", "s3://b//c", "http://x/y", "s3://%zz/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			return
		}
		if checkBucket(d.Bucket) != nil {
			t.Fatalf("Parse(%q) accepted bucket %q", s, d.Bucket)
		}
		if strings.HasPrefix(d.Prefix, "/") || strings.HasSuffix(d.Prefix, "/") || strings.Contains(d.Prefix, "//") {
			t.Fatalf("Parse(%q) gave an unclean prefix %q", s, d.Prefix)
		}
		back, err := Parse(d.String())
		if err != nil || back != d {
			t.Fatalf("Parse(%q) = %+v, but Parse(String()) = %+v, %v", s, d, back, err)
		}
	})
}
