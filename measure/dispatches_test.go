package measure

import (
	"testing"
	"time"
)

func TestSuggestDispatches(t *testing.T) {
	for _, tc := range []struct {
		median     time.Duration
		dispatches int
		want       int
	}{
		{280 * time.Microsecond, 1, 5},  // 4 would do: 5
		{100 * time.Microsecond, 1, 10}, // exactly 10
		{100 * time.Microsecond, 2, 20},
		{30 * time.Microsecond, 1, 50}, // 34 would do: 50
		{999 * time.Microsecond, 1, 2}, // more than one, however close
		{time.Millisecond, 1, 0},       // long enough
		{5 * time.Millisecond, 4, 0},
		{0, 1, 0},
		{time.Microsecond, 0, 0},
	} {
		if got := SuggestDispatches(tc.median, tc.dispatches, 0); got != tc.want {
			t.Errorf("SuggestDispatches(%v, %d) = %d, want %d", tc.median, tc.dispatches, got, tc.want)
		}
	}
	if got := SuggestDispatches(time.Millisecond, 1, 10*time.Millisecond); got != 10 {
		t.Errorf("with a 10ms floor: %d, want 10", got)
	}
}
