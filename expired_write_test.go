package leaderboard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestWriteToPeriodRedisExpired writes, with every kind of write on every
// kind of board, to a daily period whose retention the board's clock
// (behind Redis's by three days: a replay, a server's clock far off) has
// not seen end but Redis's own clock has: Redis deletes such a key as the
// write sets its expiry. Each write must say so as it says a period the
// board's clock sees expired does (Submit and a Batcher's Submit: the
// window Closed, with no standing; Set: ErrExpired), write the all-time
// window beside it as usual, and leave no key of the dead period behind
// (a key written again after Redis deleted it would have no expiry), but
// for a hot top's short-lived mirror.
func TestWriteToPeriodRedisExpired(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		// Midday: at a time of day within the retention (an hour) after
		// midnight, yesterday's period would be live too, and, empty in
		// the store, count as rebuilt.
		clock := time.Now().UTC().AddDate(0, 0, -3).Truncate(24 * time.Hour).Add(12 * time.Hour)
		dead := lb.Daily().Period(clock).ID
		tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: clock.Add(-time.Hour), Resolution: time.Second, MaxScore: 1e6})
		require.NoError(t, err)
		kinds := map[string][]lb.Option{
			"ordinal":          nil,
			"competition":      {lb.WithRanking(lb.Competition)},
			"accumulate":       {lb.WithPolicy(lb.Accumulate)},
			"tie-break":        {lb.WithTieBreak(tb)},
			"sharded":          {lb.WithShards(50)},
			"sharded compete":  {lb.WithShards(50), lb.WithRanking(lb.Competition)},
			"sharded tiebreak": {lb.WithShards(50), lb.WithTieBreak(tb), lb.WithPolicy(lb.Accumulate)},
			"hot top":          {lb.WithHotTop(5)},
			"sharded hot top":  {lb.WithShards(50), lb.WithHotTop(5)},
			"sharded shadow":   {lb.WithShards(50), lb.WithShadowShards(25)},
			"store":            {lb.WithStore(newMemStore())},
		}
		for kind, opts := range kinds {
			t.Run(kind, func(t *testing.T) {
				name := shardName(t, b)
				opts := append(opts, lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRetention(time.Hour),
					lb.WithClock(func() time.Time { return clock }))
				board, err := lb.New(b.Client, name, opts...)
				require.NoError(t, err)
				closed := func(what string, res lb.Result, err error, member string, score float64) {
					t.Helper()
					require.NoError(t, err, what)
					require.Equal(t, "alltime", res.Windows[0].Window, what)
					require.Equal(t, member, res.Windows[0].Standing.Member, what)
					require.Equal(t, score, res.Windows[0].Standing.Score, what)
					require.Positive(t, res.Windows[0].Standing.Rank, what)
					require.Equal(t, lb.WindowResult{Window: "daily", Period: dead, Closed: true,
						Previous: lb.Entry{Member: member}}, res.Windows[1], what)
				}
				res, err := board.Submit(ctx, "ann", 10)
				closed("submit", res, err, "ann", 10)
				res, err = board.Submit(ctx, "bob", 20, lb.WithID("bob-1"))
				closed("submit with id", res, err, "bob", 20)
				res, err = board.Submit(ctx, "cy", 30, lb.WithData("cy's"))
				closed("submit with data", res, err, "cy", 30)
				batcher, err := board.NewBatcher()
				require.NoError(t, err)
				got := make(chan error, 2)
				for i, m := range []string{"dee", "eve"} {
					go func() {
						res, err := batcher.Submit(ctx, m, float64(40+i))
						if err == nil && !res.Windows[1].Closed {
							err = errors.New(m + ": daily window not reported closed")
						}
						got <- err
					}()
				}
				require.NoError(t, <-got)
				require.NoError(t, <-got)
				require.NoError(t, batcher.Close(ctx))
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"fay": 5, "gus": 6}))
				err = board.Set(ctx, "ann", 3, lb.In(lb.Daily()))
				require.ErrorIs(t, err, lb.ErrExpired)
				require.NotErrorIs(t, err, lb.ErrPending, "no Rebuild brings that period back")
				require.NoError(t, board.Set(ctx, "ann", 3))

				n, err := board.Count(ctx)
				require.NoError(t, err)
				require.EqualValues(t, 7, n, "the all-time window holds every member")
				n, err = board.Count(ctx, lb.In(lb.Daily()))
				require.NoError(t, err)
				require.Zero(t, n)
				c := b.Client.Client
				for _, k := range b.Keys(t, "*"+name+"*") {
					if !strings.Contains(k, dead) {
						continue
					}
					// On one node a hot top's mirror is rewritten in the
					// write's round trip, before its reply shows the period
					// gone: it lives its ten seconds.
					ttl, err := c.Do(ctx, c.B().Pttl().Key(k).Build()).AsInt64()
					require.NoError(t, err)
					require.True(t, strings.Contains(k, "::topk:") && ttl > 0 && ttl <= 10_000,
						"key %s of the expired period left, ttl %d ms", k, ttl)
				}
			})
		}
	})
}

// TestIDsRememberedWhateverTheClock retries WithID submissions on boards
// whose clock is three days behind Redis's (a replay), beyond the dedupe
// window: the id set must live its window by Redis's clock, so that every
// retry is reported a duplicate and an Accumulate total counts once; the
// ids a Rebuild gives back too, and a Rebuild does not count a period
// Redis's clock has passed among those it rebuilt.
func TestIDsRememberedWhateverTheClock(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		// Midday: at a time of day within the retention (an hour) after
		// midnight, yesterday's period would be live too, and, empty in
		// the store, count as rebuilt.
		clock := time.Now().UTC().AddDate(0, 0, -3).Truncate(24 * time.Hour).Add(12 * time.Hour)
		for kind, opts := range map[string][]lb.Option{
			"unsharded": nil,
			"sharded":   {lb.WithShards(50)},
		} {
			t.Run(kind, func(t *testing.T) {
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithPolicy(lb.Accumulate),
					lb.WithDedupeWindow(time.Hour), lb.WithClock(func() time.Time { return clock }))...)
				require.NoError(t, err)
				for try := range 3 {
					res, err := board.Submit(ctx, "ann", 10, lb.WithID("ann-1"))
					require.NoError(t, err)
					require.Equal(t, try > 0, res.Duplicate, "try %d", try)
					require.Equal(t, 10.0, res.Standing.Score, "try %d", try)
				}

				stored, err := lb.New(b.Client, name+".rebuilt", append(opts, lb.WithPolicy(lb.Accumulate), lb.WithStore(newMemStore()),
					lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRetention(time.Hour),
					lb.WithDedupeWindow(time.Hour), lb.WithClock(func() time.Time { return clock }))...)
				require.NoError(t, err)
				t.Cleanup(func() { b.Wipe(t, name+".rebuilt") })
				res, err := stored.Submit(ctx, "bob", 5, lb.WithID("bob-1"))
				require.NoError(t, err)
				require.True(t, res.Windows[1].Closed)
				b.Wipe(t, name+".rebuilt")
				rep, err := stored.Rebuild(ctx)
				require.NoError(t, err)
				// The daily period Redis's clock has passed is rebuilt into
				// nothing, and is not counted.
				require.Equal(t, 1, rep.Periods, "%+v", rep)
				require.EqualValues(t, 1, rep.Members, "%+v", rep)
				dead := lb.Daily().Period(clock).ID
				for _, k := range b.Keys(t, "*"+name+".rebuilt*") {
					require.NotContains(t, k, dead, "a key of the expired period left")
				}
				c := b.Client.Client
				ids := b.Keys(t, "*"+name+".rebuilt*:ids")
				require.NotEmpty(t, ids, "Rebuild gives the ids back")
				for _, k := range ids {
					ttl, err := c.Do(ctx, c.B().Pttl().Key(k).Build()).AsInt64()
					require.NoError(t, err)
					require.True(t, ttl > 0 && ttl <= time.Hour.Milliseconds(), "id set %s lives %d ms", k, ttl)
				}
			})
		}
	})
}

// TestPeriodExpiringOnTheEpoch replays into daily periods whose expiry
// (their end plus the default retention, a day) falls just before, on and
// just after the Unix epoch's instant. The one on it was taken for a period
// that never ends (expiry 0): its key got no expiry and the period read as
// live. Each must be closed to writes and ErrExpired to reads, and leave no
// key behind, on every kind of board.
func TestPeriodExpiringOnTheEpoch(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for kind, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(50)}} {
			t.Run(kind, func(t *testing.T) {
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithWindows(lb.Daily()))...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = board.Delete(context.Background()) })
				for _, day := range []int{29, 30, 31} { // 1969-12-30 expires on the epoch
					at := time.Date(1969, 12, day, 12, 0, 0, 0, time.UTC)
					res, err := board.Submit(ctx, "a", 1, lb.WithTime(at))
					require.NoError(t, err, at)
					require.True(t, res.Windows[0].Closed, "%v: %+v", at, res.Windows[0])
					_, err = board.Top(ctx, 3, lb.At(at))
					require.ErrorIs(t, err, lb.ErrExpired, at)
				}
				for _, k := range boardKeys(t, b, name) {
					require.NotContains(t, k, ":1969-12-", "a key of an expired period")
				}
			})
		}
	})
}

// TestPeriodOfTheFarPast replays into daily periods so far in the past
// (300 million years, what a server builds from a client's "at" in seconds
// gone wrong) that their Unix milliseconds do not fit an int64. Their
// expiry wrapped around to some 284 million years ahead: the period took
// the write, under a key no Remove or Delete reaches, and read as live.
// Each must be closed to writes and ErrExpired to reads, and leave no key
// behind, on every kind of board.
func TestPeriodOfTheFarPast(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for kind, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(50)}} {
			t.Run(kind, func(t *testing.T) {
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithWindows(lb.Daily(), lb.Weekly(), lb.Monthly()))...)
				require.NoError(t, err)
				t.Cleanup(func() { b.Wipe(t, name) })
				for _, at := range []time.Time{
					time.Date(-300_000_000, 1, 1, 12, 0, 0, 0, time.UTC),
					time.Unix(-1e16, 0),
					time.Unix(-(1 << 62), 0),
				} {
					res, err := board.Submit(ctx, "a", 1, lb.WithTime(at), lb.WithData("d"), lb.WithID(at.String()))
					require.NoError(t, err, at)
					for _, wr := range res.Windows {
						require.True(t, wr.Closed, "%v: %+v", at, wr)
					}
					for _, w := range []lb.Window{lb.Daily(), lb.Weekly(), lb.Monthly()} {
						_, err = board.Top(ctx, 3, lb.In(w), lb.At(at))
						require.ErrorIs(t, err, lb.ErrExpired, "%v %s", at, w.Name())
					}
				}
				require.Empty(t, boardKeys(t, b, name), "a key of a period of the far past")
			})
		}
	})
}
