package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestDocRoundTripsOfTheRest counts the round trips of the calls the other
// round-trip tests leave out against their doc comments, on plain and
// sharded boards, on every backend: SetData one (an HSET or HDEL); Between
// and AroundScore with IncludeData one on an unsharded board (the data in
// the same round trip), two on a sharded one; ProposeBounds two, three on
// a sharded board; Among, SubmitMany and Remove of no members none;
// DropShadow one a live period.
func TestDocRoundTripsOfTheRest(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{
			"plain":          nil,
			"plain-compete":  {lb.WithRanking(lb.Competition)},
			"sharded":        {lb.WithShards(0, 50)},
			"sharded-shadow": {lb.WithShards(0, 50), lb.WithShadowShards(25), lb.WithRanking(lb.Competition)},
		} {
			t.Run(kind, func(t *testing.T) {
				runDocRoundTrips(t, b, opts, strings.HasPrefix(kind, "sharded"), strings.HasSuffix(kind, "shadow"))
			})
		}
	})
}

func runDocRoundTrips(t *testing.T, b *testredis.Backend, opts []lb.Option, sharded, shadow bool) {
	ctx := context.Background()
	opts = append(opts, lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
	board, err := lb.New(b.Client, shardName(t, b), opts...)
	require.NoError(t, err)
	for i := range 40 {
		_, err := board.Submit(ctx, fmt.Sprint("p", i), float64(i*7%150-20), lb.WithData(fmt.Sprint("Player ", i)))
		require.NoError(t, err)
	}
	// by picks the count an unsharded board's doc states, or a sharded one's.
	by := func(plain, shardedTrips int64) int64 {
		if sharded {
			return shardedTrips
		}
		return plain
	}
	periods, err := board.Periods(ctx, lb.In(lb.Daily()))
	require.NoError(t, err)
	live := int64(1 + len(periods)) // alltime's one, daily's readable ones
	d := lb.IncludeData()
	type op struct {
		name string
		want int64
		fn   func() error
	}
	ops := []op{
		{"SetData", 1, func() error { return board.SetData(ctx, "p3", "renamed") }},
		{"SetData new member", 1, func() error { return board.SetData(ctx, "nobody-yet", "hello") }},
		{"SetData clear", 1, func() error { return board.SetData(ctx, "p4", "") }},
		{"Between with data", by(1, 2), func() error { _, err := board.Between(ctx, -5, 60, 10, d); return err }},
		{"AroundScore with data", by(1, 2), func() error { _, _, err := board.AroundScore(ctx, 30, 2, d); return err }},
		{"Among of none", 0, func() error { _, err := board.Among(ctx, nil, d); return err }},
		{"SubmitMany of none", 0, func() error { return board.SubmitMany(ctx, nil) }},
		{"Remove of none", 0, func() error { return board.Remove(ctx) }},
		{"ProposeBounds", by(2, 3), func() error { _, err := board.ProposeBounds(ctx, 4); return err }},
	}
	if shadow {
		ops = append(ops, op{"DropShadow", live, func() error { return board.DropShadow(ctx) }})
	}
	for _, o := range ops {
		require.NoError(t, o.fn(), "%s warm-up", o.name)
		before := b.Client.Calls()
		require.NoError(t, o.fn(), o.name)
		require.Equal(t, o.want, b.Client.Calls()-before, "[%s] %s round trips", b.Name, o.name)
	}
}

// TestSealedReadsTheStoreAlone: Sealed makes no call to Redis, on plain and
// sharded boards: the standings are the store's.
func TestSealedReadsTheStoreAlone(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, opts := range [][]lb.Option{nil, {lb.WithShards(0)}} {
			board, err := lb.New(b.Client, shardName(t, b), append(opts, lb.WithStore(newMemStore()))...)
			require.NoError(t, err)
			before := b.Client.Calls()
			_, ok, err := board.Sealed(context.Background())
			require.NoError(t, err)
			require.False(t, ok)
			require.Equal(t, before, b.Client.Calls(), "Sealed: calls to Redis")
		}
	})
}
