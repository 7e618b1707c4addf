package leaderboard

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
)

// FuzzFormatScore checks that every finite score survives the trip through
// its decimal form (what Redis parses with strtod) bit for bit, except that
// -0 is stored as 0.
func FuzzFormatScore(f *testing.F) {
	for _, s := range []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 12.34, 1e22, 1e-300, 5e-324,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2} {
		f.Add(math.Float64bits(s))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		s := math.Float64frombits(bits)
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return
		}
		str := formatScore(s)
		back, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("formatScore(%v) = %q does not parse: %v", s, str, err)
		}
		want := s
		if s == 0 {
			want = 0
		}
		if math.Float64bits(back) != math.Float64bits(want) {
			t.Fatalf("formatScore(%v) = %q parses back as %v", s, str, back)
		}
	})
}

// TestWrapOnce: an operation's error names the package once, however many
// steps wrapped it, and still unwraps to its cause.
func TestWrapOnce(t *testing.T) {
	inner := wrap("submit", io.EOF)
	for _, c := range []struct {
		err  error
		want string
	}{
		{wrap("set", inner), "leaderboard: set: submit: EOF"},
		{wrap("set", fmt.Errorf("%w: adding 1 to \"a\"", ErrInvalidScore)), "leaderboard: set: invalid score: adding 1 to \"a\""},
		{wrap("top", rueidis.Nil), "leaderboard: top: unexpected nil reply"},
	} {
		require.EqualError(t, c.err, c.want)
	}
	require.ErrorIs(t, wrap("set", inner), io.EOF)
	require.ErrorIs(t, wrap("set", fmt.Errorf("%w: x", ErrInvalidScore)), ErrInvalidScore)
}
