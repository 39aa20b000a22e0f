package tokens

import "testing"

func TestForContextMatchesReferenceSplits(t *testing.T) {
	tests := []struct {
		name   string
		window int64
		want   Budget
	}{
		{"128K", 128_000, Budget{Content: 76_800, Response: 51_200, Files: 23_040, History: 38_400}},
		{"1M", 1_048_576, Budget{Content: 838_860, Response: 209_716, Files: 335_544, History: 335_544}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ForContext(tt.window); got != tt.want {
				t.Errorf("ForContext(%d) = %+v, want %+v", tt.window, got, tt.want)
			}
		})
	}
}

func TestEstimateRoundsUp(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "a": 1, "abc": 1, "abcd": 2} {
		if got := Estimate(in); got != want {
			t.Errorf("Estimate(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestBytesWithinInvertsTheEstimate(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 2, 7, 100, 1080, 123_457, 1 << 30} {
		b := BytesWithin(n)
		if got := EstimateBytes(b); got > n {
			t.Errorf("EstimateBytes(BytesWithin(%d)) = %d, over the budget", n, got)
		}
		if got := EstimateBytes(b + 4); got <= n {
			t.Errorf("BytesWithin(%d) = %d leaves room: %d bytes are still %d tokens", n, b, b+4, got)
		}
	}
}
