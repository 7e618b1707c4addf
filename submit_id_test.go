package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// idsKey is the id set where Redis remembers the WithID ids of board name's
// Submits of member: the board's, or on a sharded board the member's
// partition's.
func idsKey(name, member string, sharded bool) string {
	if sharded {
		return keys.NewBoard("lb", name).Partitions().Of(keys.PartitionOf(member)).IDs()
	}
	return "lb:{" + name + "}:ids"
}

func remembered(t *testing.T, b *testredis.Backend, key string) []string {
	t.Helper()
	c := b.Client.Client
	ids, err := c.Do(context.Background(), c.B().Zrange().Key(key).Min("0").Max("-1").Build()).AsStrSlice()
	require.NoError(t, err)
	return ids
}

func score(t *testing.T, board *lb.Leaderboard, member string, q ...lb.Query) float64 {
	t.Helper()
	st, err := board.Rank(context.Background(), member, q...)
	require.NoError(t, err)
	return st.Score
}

// TestWithIDAppliedOnceAcrossRebuild: the store is the truth for ids and
// Redis's id set a cache of it. After Redis loses the board and Rebuild
// brings the scores back, a retry is a duplicate (Rebuild restored the ids
// of the dedupe window); after the window, the store's answer wins over
// Redis's forgetting; a retry of a submission that reached the store but
// not Redis (ErrPending) is applied exactly once.
func TestWithIDAppliedOnceAcrossRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sharded := range []bool{false, true} {
			store := newMemStore()
			clock := future
			opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Monthly()),
				lb.WithDedupeWindow(time.Hour), lb.WithClock(func() time.Time { return clock })}
			if sharded {
				opts = append(opts, lb.WithShards(6))
			}
			board, name := newBoard(t, b, opts...)
			_, err := board.Submit(ctx, "p", 5, lb.WithID("a"))
			require.NoError(t, err)
			_, err = board.Submit(ctx, "p", 3)
			require.NoError(t, err)

			b.Wipe(t, name)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			require.Equal(t, []string{"a"}, remembered(t, b, idsKey(name, "p", sharded)), "Rebuild restores the window's ids")
			res, err := board.Submit(ctx, "p", 5, lb.WithID("a"))
			require.NoError(t, err)
			require.True(t, res.Duplicate, "a retry after Rebuild is a duplicate")
			require.False(t, res.Changed)
			require.Equal(t, 8.0, res.Score)
			require.Equal(t, 8.0, score(t, board, "p", lb.In(lb.Monthly())))

			// Past Redis's window the store still remembers the id, and wins.
			clock = clock.Add(2 * time.Hour)
			res, err = board.Submit(ctx, "p", 5, lb.WithID("a"))
			require.NoError(t, err)
			require.True(t, res.Duplicate, "the store remembers the id for good")
			require.Equal(t, 8.0, res.Score)
			require.Equal(t, 8.0, score(t, board, "p"))

			// Stored, not in Redis (the ctx ended between the two): the
			// retry applies it, once.
			gone, cancel := context.WithCancel(ctx)
			store.afterAppend = cancel
			_, err = board.Submit(gone, "p", 2, lb.WithID("b"))
			store.afterAppend = nil
			require.ErrorIs(t, err, lb.ErrPending)
			require.Equal(t, 8.0, score(t, board, "p"))
			for i, dup := range []bool{false, true} {
				res, err = board.Submit(ctx, "p", 2, lb.WithID("b"))
				require.NoError(t, err)
				require.Equal(t, dup, res.Duplicate, "retry %d", i)
				require.Equal(t, 10.0, res.Score)
			}
			requireVerified(t, board)
		}
	})
}

// TestStoreDuplicateWinsWithoutIDKeeper: a store that cannot say when it
// received an id is taken at its word: a duplicate is never applied again,
// even when Redis has forgotten the id (after a wipe and Rebuild).
func TestStoreDuplicateWinsWithoutIDKeeper(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		store := newMemStore()
		board, name := newBoard(t, b, lb.WithStore(plainStore{store}), lb.WithPolicy(lb.Accumulate))
		_, err := board.Submit(ctx, "p", 5, lb.WithID("a"))
		require.NoError(t, err)
		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		require.Empty(t, remembered(t, b, idsKey(name, "p", false)), "the store cannot list its ids")
		res, err := board.Submit(ctx, "p", 5, lb.WithID("a"))
		require.NoError(t, err)
		require.True(t, res.Duplicate)
		require.Equal(t, 5.0, score(t, board, "p"))
		require.Empty(t, remembered(t, b, idsKey(name, "p", false)), "a store-reported duplicate is not recorded as applied by Redis")
	})
}

// TestRefusedSubmissionTakesNoID: a submission Redis refuses (an
// Accumulate total that would overflow, or pass a tie-break's MaxScore)
// writes nothing: no score, no id in Redis, no row and no id in a store
// that retracts; the corrected retry with the same id is applied.
func TestRefusedSubmissionTakesNoID(t *testing.T) {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: future.AddDate(-1, 0, 0), Resolution: time.Second, MaxScore: 100})
	require.NoError(t, err)
	cases := []struct {
		name        string
		opts        []lb.Option
		first, bad  float64
		fixed, want float64
		sentinel    error
	}{
		{"overflow", nil, 1.5e308, 1.5e308, -1e308, 1.5e308 - 1e308, lb.ErrInvalidScore},
		{"max score", []lb.Option{lb.WithTieBreak(tb)}, 90, 20, 5, 95, lb.ErrPrecision},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, c := range cases {
			for _, sharded := range []bool{false, true} {
				for _, withStore := range []bool{false, true} {
					store := newMemStore()
					opts := append([]lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()),
						lb.WithClock(func() time.Time { return future })}, c.opts...)
					if sharded {
						opts = append(opts, lb.WithShards(50))
					}
					if withStore {
						opts = append(opts, lb.WithStore(store))
					}
					board, name := newBoard(t, b, opts...)
					where := func(s string) string { return c.name + " " + s }
					_, err := board.Submit(ctx, "p", c.first)
					require.NoError(t, err, where("first"))
					_, err = board.Submit(ctx, "p", c.bad, lb.WithID("x"))
					require.ErrorIs(t, err, c.sentinel, where("refused"))
					require.NotErrorIs(t, err, lb.ErrPending)
					require.Empty(t, remembered(t, b, idsKey(name, "p", sharded)), where("a refused id is not remembered"))
					require.Equal(t, c.first, score(t, board, "p", lb.In(lb.Daily())))
					if withStore {
						require.Equal(t, 1, store.count(), where("the store keeps no refused row"))
						_, _, held, _ := store.IDReceived(ctx, name, "x")
						require.False(t, held, where("the store keeps no refused id"))
					}
					res, err := board.Submit(ctx, "p", c.fixed, lb.WithID("x"))
					require.NoError(t, err, where("corrected retry"))
					require.False(t, res.Duplicate, where("the corrected retry is applied"))
					require.Equal(t, c.want, res.Score)
				}
			}
		}
	})
}

// TestClockSkew: a WithTime a little after the board's clock (another game
// server's clock) is taken as now; one beyond the skew is refused and
// writes nothing.
func TestClockSkew(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		// One millisecond before midnight: 50 ms ahead is tomorrow.
		clock := future.Truncate(24 * time.Hour).Add(24*time.Hour - time.Millisecond)
		board, name := newBoard(t, b, lb.WithWindows(lb.Daily()), lb.WithClock(func() time.Time { return clock }))
		res, err := board.Submit(ctx, "p", 1, lb.WithTime(clock.Add(50*time.Millisecond)))
		require.NoError(t, err)
		require.Equal(t, lb.Daily().Period(clock).ID, res.Windows[0].Period, "taken as now")

		before := b.Snapshot(t, name)
		_, err = board.Submit(ctx, "q", 1, lb.WithTime(clock.Add(1001*time.Millisecond)))
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
		require.Equal(t, before, b.Snapshot(t, name))

		strict, _ := newBoard(t, b, lb.WithClockSkew(0), lb.WithClock(func() time.Time { return clock }))
		_, err = strict.Submit(ctx, "p", 1, lb.WithTime(clock.Add(time.Millisecond)))
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
		wide, _ := newBoard(t, b, lb.WithClockSkew(time.Minute), lb.WithClock(func() time.Time { return clock }))
		_, err = wide.Submit(ctx, "p", 1, lb.WithTime(clock.Add(59*time.Second)))
		require.NoError(t, err)

		_, err = lb.New(b.Client, "x", lb.WithClockSkew(-time.Second))
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
	})
}

// TestIDOfAnotherMemberWithAStore: with a store that keeps ids (an
// IDKeeper), a submission whose id the store holds for another member is a
// duplicate and writes nothing, within the dedupe window too, on plain and
// sharded boards alike (a sharded board's Redis keeps ids per partition of
// members and has not seen it), and the store and Redis agree.
func TestIDOfAnotherMemberWithAStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for name, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(10)}} {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				board, _ := newBoard(t, b, append(opts, lb.WithStore(newMemStore()), lb.WithClock(fixed(future)))...)
				_, err := board.Submit(ctx, "a", 5, lb.WithID("match-1"))
				require.NoError(t, err)
				res, err := board.Submit(ctx, "b", 7, lb.WithID("match-1"))
				require.NoError(t, err)
				require.True(t, res.Duplicate)
				_, err = board.Rank(ctx, "b")
				require.ErrorIs(t, err, lb.ErrNotRanked)
				requireVerified(t, board)
			})
		}
	})
}
