package check

import (
	"testing"
	"time"
)

func TestVariantTimeout(t *testing.T) {
	tests := []struct {
		name     string
		timeout  time.Duration
		baseTime []time.Duration
		i        int
		want     time.Duration
	}{
		{name: "explicit", timeout: 5 * time.Second, baseTime: []time.Duration{time.Hour}, want: 5 * time.Second},
		{name: "fast case gets the floor", baseTime: []time.Duration{20 * time.Millisecond}, want: MinVariantTimeout},
		{name: "slow case scales", baseTime: []time.Duration{time.Second, 90 * time.Second}, i: 1, want: 900 * time.Second},
		{name: "no control time", baseTime: nil, want: ControlTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &checker{opts: Options{Timeout: tt.timeout}}
			if got := c.timeout(tt.baseTime, tt.i); got != tt.want {
				t.Errorf("timeout(%d) = %v, want %v", tt.i, got, tt.want)
			}
		})
	}
}
