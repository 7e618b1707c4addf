package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestSealWaitsForClocksBehind: a game server whose clock runs behind the
// sealing job's by less than the board's clock skew still submits into the
// day that the job's clock has just closed, as one running ahead already
// submits into the next (WithClockSkew). Seal sealed the day at the job's
// first look after midnight, so such a score, reached before midnight by
// its server's clock, landed in the day after its final standings were
// sealed and rewarded: Sealed and the hook missed it for good. A period is
// sealed once the skew has passed after its end.
func TestSealWaitsForClocksBehind(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		store := newMemStore()
		day := lb.Daily().Period(future.Add(-24 * time.Hour))
		const skew = time.Second
		job, player := &testClock{now: day.End.Add(-2 * time.Hour)}, &testClock{now: day.End.Add(-2 * time.Hour)}
		name := b.BoardName(t)
		opts := []lb.Option{lb.WithStore(store), lb.WithWindows(lb.Daily()), lb.WithClockSkew(skew)}
		sealer, err := lb.New(b.Client, name, append(opts, lb.WithClock(job.Now))...)
		require.NoError(t, err)
		server, err := lb.New(b.Client, name, append(opts, lb.WithClock(player.Now))...)
		require.NoError(t, err)
		_, err = sealer.Rebuild(ctx)
		require.NoError(t, err)
		_, err = server.Submit(ctx, "ann", 10)
		require.NoError(t, err)

		// Just after midnight by the job's clock; the game server's runs
		// 500 ms behind it, and its players are still in the day.
		job.Set(day.End.Add(100 * time.Millisecond))
		player.Set(day.End.Add(-400 * time.Millisecond))
		var hooked []lb.SealedPeriod
		hook := func(_ context.Context, p lb.SealedPeriod) error { hooked = append(hooked, p); return nil }
		sealed, err := sealer.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, sealed, "a day sealed while a server within the clock skew still submits into it")
		res, err := server.Submit(ctx, "bob", 20)
		require.NoError(t, err)
		require.Equal(t, day.ID, res.Windows[0].Period)

		job.Set(day.End.Add(skew))
		sealed, err = sealer.Seal(ctx, hook)
		require.NoError(t, err)
		want := lb.SealedPeriod{Window: "daily", Period: day.ID, Entries: []lb.Entry{{Member: "bob", Score: 20, Rank: 1}, {Member: "ann", Score: 10, Rank: 2}}}
		require.Equal(t, []lb.SealedPeriod{want}, sealed)
		require.Equal(t, []lb.SealedPeriod{want}, hooked)
		es, ok, err := sealer.Sealed(ctx, lb.At(day.Start))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want.Entries, es)
	})
}
