package leaderboard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDistinct: distinct keeps each member's first place, returns the
// caller's slice itself when nothing repeats, and never writes into it.
func TestDistinct(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"a"}, []string{"a"}},
		{[]string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{[]string{"a", "a"}, []string{"a"}},
		{[]string{"b", "a", "b", "c", "a", "c", "d"}, []string{"b", "a", "c", "d"}},
	} {
		in := append([]string(nil), c.in...)
		got := distinct(in)
		require.Equal(t, c.want, got, "%q", c.in)
		require.Equal(t, c.in, in, "the caller's slice is untouched")
		if len(got) == len(in) && len(in) > 0 {
			require.Same(t, &in[0], &got[0], "no repeats: the same slice")
		}
	}
}
