package stats

import (
	"reflect"
	"testing"
)

func TestRanksDesc(t *testing.T) {
	got := RanksDesc([]float64{5, 9, 0, 5, 1}, []bool{true, true, false, true, true})
	if want := []int{2, 1, 5, 3, 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("RanksDesc = %v, want %v (missing last, ties in order)", got, want)
	}
}
