package leaderboard_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// refusedByNew checks that New refuses opts with ErrInvalidArgument,
// returns no board and sends nothing to Redis.
func refusedByNew(t *testing.T, b *testredis.Backend, what string, opts ...lb.Option) {
	t.Helper()
	calls := b.Client.Calls()
	board, err := lb.New(b.Client, b.BoardName(t), opts...)
	require.ErrorIs(t, err, lb.ErrInvalidArgument, what)
	require.Nil(t, board, what)
	require.Equal(t, calls, b.Client.Calls(), "%s: New sends nothing to Redis", what)
}

func takenByNew(t *testing.T, b *testredis.Backend, what string, opts ...lb.Option) {
	t.Helper()
	_, err := lb.New(b.Client, b.BoardName(t), opts...)
	require.NoError(t, err, what)
}

func mustTieBreak(t *testing.T, o lb.TimeOrder) lb.TieBreak {
	t.Helper()
	tb, err := lb.EarlierFirst(o)
	require.NoError(t, err)
	return tb
}

// TestNewRefusesUnreachableShards: with a tie-break, a board stores no
// score beyond MaxScore, nor one with more fraction digits than Decimals.
// Bounds that leave a shard no score it could ever hold (a bound above
// MaxScore, one at or below -MaxScore, two with no storable score between
// them) were taken by New, and the board kept, named and read shards that
// could never hold a member. A bound is compared with the plain score, so
// one between two storable scores is fine (ProposeBounds gives one just
// above a spike).
func TestNewRefusesUnreachableShards(t *testing.T) {
	b := testredis.Mini(t)
	whole := mustTieBreak(t, lb.TimeOrder{Epoch: future.Add(-time.Hour), Resolution: time.Second, MaxScore: 1000})
	cents := mustTieBreak(t, lb.TimeOrder{Epoch: future.Add(-time.Hour), Resolution: time.Minute, MaxScore: 1000, Decimals: 2})
	odd := mustTieBreak(t, lb.TimeOrder{Epoch: future.Add(-time.Hour), Resolution: time.Second, MaxScore: 1000.5})
	for what, tc := range map[string]struct {
		tb     lb.TieBreak
		bounds []float64
	}{
		"a bound above MaxScore":                 {whole, []float64{10, 1001}},
		"the only bound above MaxScore":          {whole, []float64{1e9}},
		"a bound at -MaxScore":                   {whole, []float64{-1000, 10}},
		"a bound below -MaxScore":                {whole, []float64{-5000}},
		"no whole score between two bounds":      {whole, []float64{10.2, 10.5}},
		"a fraction above MaxScore":              {cents, []float64{1000.005}},
		"no cent between two bounds":             {cents, []float64{0.011, 0.019}},
		"above the largest storable of 1000.5":   {odd, []float64{1000.5}},
		"at the smallest storable of -1000.5":    {odd, []float64{-1000}},
		"the last of several bounds beyond them": {whole, []float64{-999, 0, 999, 1000, 1000.5}},
	} {
		refusedByNew(t, b, what, lb.WithTieBreak(tc.tb), lb.WithShards(tc.bounds...))
		refusedByNew(t, b, what+" (shadow)", lb.WithTieBreak(tc.tb), lb.WithShards(0), lb.WithShadowShards(tc.bounds...))
	}
	for what, tc := range map[string]struct {
		tb     lb.TieBreak
		bounds []float64
	}{
		"MaxScore itself":                {whole, []float64{1000}},
		"just above -MaxScore":           {whole, []float64{-999, 0, 1000}},
		"just above a spike at 0":        {whole, []float64{0, math.SmallestNonzeroFloat64}},
		"a half, between two scores":     {whole, []float64{10.5}},
		"a cent at MaxScore":             {cents, []float64{-999.99, 0.01, 1000}},
		"the largest storable of 1000.5": {odd, []float64{1000}},
	} {
		takenByNew(t, b, what, lb.WithTieBreak(tc.tb), lb.WithShards(tc.bounds...))
	}
	takenByNew(t, b, "no tie-break, any finite bound", lb.WithShards(-math.MaxFloat64, math.MaxFloat64))
}

// TestNewRefusesSubMillisecondDedupe: Redis remembers a WithID id to the
// millisecond (the id's forget time and the id set's PEXPIRE). A window
// under a millisecond was taken and counted as 0: the id was forgotten as
// it was recorded, and every retry applied again.
func TestNewRefusesSubMillisecondDedupe(t *testing.T) {
	b := testredis.Mini(t)
	for _, d := range []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond - 1} {
		refusedByNew(t, b, d.String(), lb.WithDedupeWindow(d))
	}
	takenByNew(t, b, "1ms", lb.WithDedupeWindow(time.Millisecond))
}
