package api

import (
	"strings"
	"testing"
)

func TestExtraObjectBounds(t *testing.T) {
	nest := func(levels int) string { // levels of objects and arrays, the outer object included
		return `{"a":` + strings.Repeat("[", levels-1) + strings.Repeat("]", levels-1) + "}"
	}
	for _, ok := range []string{
		nest(MaxExtraBodyDepth),
		`{"a":"` + strings.Repeat("[", 1000) + `"}`, // brackets in a string are text
		`{"a":"\"[[[[\\"}`,
		`{"a":"` + strings.Repeat("x", MaxExtraBodyBytes-8) + `"}`,
	} {
		if _, err := ExtraObject([]byte(ok)); err != nil {
			t.Errorf("%.60s…: %v", ok, err)
		}
	}
	for _, tc := range []struct{ body, want string }{
		{nest(MaxExtraBodyDepth + 1), "nested 65 levels or more"},
		{nest(10000), "nested 65 levels or more"},
		{`{"a":"` + strings.Repeat("x", MaxExtraBodyBytes) + `"}`, "at most 64 KiB"},
	} {
		if _, err := ExtraObject([]byte(tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s…: err %v, want %q", tc.body, err, tc.want)
		}
	}
}
