package pgstore

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestBoardOnStore drives a board on the store through Redis: a submission
// Redis refuses leaves no row and no taken id, Verify reports kept
// standings that drifted from the log until a repair, a reset period
// rebuilds with only what came after, and a deleted board rebuilds empty.
func TestBoardOnStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "q", 2, leaderboard.WithID("y"))
		require.NoError(t, err)
		requireVerify(t, board, true)
		_, err = s.pool.Exec(ctx, `UPDATE `+s.tKept+` SET score = score + 1 WHERE board = $1 AND member = 'q'`, name)
		require.NoError(t, err)
		requireVerify(t, board, false)
		c, err := s.CheckStandings(ctx, leaderboard.StandingsQuery{Board: name, Policy: leaderboard.Accumulate,
			Window: "alltime", Period: "alltime"}, true)
		require.NoError(t, err)
		require.True(t, c.Repaired)
		requireVerify(t, board, true)

		_, err = board.Submit(ctx, "p", 1.5e308)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "p", 1.5e308, leaderboard.WithID("x")) // the total overflows
		require.ErrorIs(t, err, leaderboard.ErrInvalidScore)
		require.Equal(t, 2, boardRows(t, s, name))
		res, err := board.Submit(ctx, "q", 2, leaderboard.WithID("x")) // the corrected retry
		require.NoError(t, err)
		require.False(t, res.Duplicate)
		require.Equal(t, 3, boardRows(t, s, name))
		requireVerify(t, board, true)

		// Reset through the board: the store forgets the period first, so a
		// Rebuild keeps it empty but for what came after.
		require.NoError(t, board.Reset(ctx))
		_, err = board.Submit(ctx, "r", 4)
		require.NoError(t, err)
		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		top, err := board.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []leaderboard.Entry{{Member: "r", Score: 4, Rank: 1}}, top)
		requireVerify(t, board, true)

		require.NoError(t, board.Delete(ctx))
		rep, err := board.Rebuild(ctx)
		require.NoError(t, err)
		require.Zero(t, rep.Members)
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		requireVerify(t, board, true)
	})
}

// requireVerify checks that Verify is clean, or that it is not and blames
// the store's kept standings.
func requireVerify(t *testing.T, board *leaderboard.Leaderboard, clean bool) {
	t.Helper()
	reports, err := board.Verify(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, reports)
	for _, r := range reports {
		require.Equal(t, clean, r.Clean(), "%+v", r)
		if !clean {
			require.True(t, r.Store.Kept)
			require.Equal(t, []string{"q"}, r.Store.Differ)
		}
	}
}

// TestSetOnStore: a board's Set goes to the store first, so a Rebuild
// keeps it, combined with the later submissions by the policy, and Verify
// finds the kept standings, Redis and the log in agreement.
func TestSetOnStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		for policy, want := range map[leaderboard.Policy]float64{leaderboard.KeepBest: 5, leaderboard.Replace: 1, leaderboard.Accumulate: 6} {
			name := b.BoardName(t) + "-" + policy.String()
			board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(policy))
			require.NoError(t, err)
			for _, score := range []float64{7, 2} {
				_, err = board.Submit(ctx, "q", score)
				require.NoError(t, err)
			}
			_, err = board.Submit(ctx, "r", 3)
			require.NoError(t, err)
			require.NoError(t, board.Set(ctx, "q", 5)) // below KeepBest's 7: a correction holds anyway
			_, err = board.Submit(ctx, "q", 1)
			require.NoError(t, err)
			requireVerify(t, board, true)

			b.Wipe(t, name)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			st, err := board.Rank(ctx, "q")
			require.NoError(t, err)
			require.Equal(t, want, st.Score, "%v", policy)
			requireVerify(t, board, true)
		}
	})
}

// TestRemoveRepeatedMember: Remove(ctx, "a", "a", "b") removes a and b on
// a board with a store that records removals, as it does without one, and
// the store records each once: a Rebuild keeps both out.
func TestRemoveRepeatedMember(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s))
		require.NoError(t, err)
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3}))
		require.NoError(t, board.Remove(ctx, "a", "a", "b"))
		for _, m := range []string{"a", "b"} {
			_, err = board.Rank(ctx, m)
			require.ErrorIs(t, err, leaderboard.ErrNotRanked, m)
		}
		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "c alone after the Rebuild")
	})
}

// TestRemoveBetweenOnStore: RemoveBetween records each chunk's members in
// the store before Redis removes them, so a Rebuild keeps them out (in
// chunks of MaxN: more than one here), and the members' later submissions
// count again.
func TestRemoveBetweenOnStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()))
		require.NoError(t, err)
		scores := map[string]float64{}
		for i := range leaderboard.MaxN + 200 {
			scores[fmt.Sprintf("cheat%04d", i)] = 1e6 + float64(i)
		}
		for i := range 50 {
			scores[fmt.Sprintf("fair%02d", i)] = float64(i)
		}
		require.NoError(t, board.SubmitMany(ctx, scores))
		n, err := board.RemoveBetween(ctx, 1e6, math.Inf(1))
		require.NoError(t, err)
		require.Equal(t, int64(leaderboard.MaxN+200), n)
		_, err = board.Submit(ctx, "cheat0007", 12) // a fair score after the clean-up
		require.NoError(t, err)

		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		total, err := board.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(51), total, "the fair members and the cheat's later score")
		st, err := board.Rank(ctx, "cheat0007")
		require.NoError(t, err)
		require.Equal(t, 12.0, st.Score)
		day, err := board.Count(ctx, leaderboard.In(leaderboard.Daily()))
		require.NoError(t, err)
		require.Equal(t, int64(leaderboard.MaxN+200+50), day, "RemoveBetween cleans one window: the daily board keeps them")
		requireVerify(t, board, true)
	})
}

// TestBatcherOnStore: a Batcher's batches reach the store first, every
// submission of a member folded in Redis one row of its own in the store
// (AppendBatch with repeated members), so that Verify finds the store, its
// kept standings and Redis in agreement and a Rebuild gives the same board;
// a submission Redis refuses leaves no row.
func TestBatcherOnStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		for _, policy := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate} {
			name := b.BoardName(t) + "-" + policy.String()
			board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(policy),
				leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()))
			require.NoError(t, err)
			_, err = board.Submit(ctx, "big", 1.5e308) // keeps the store's standings kept from here on
			require.NoError(t, err)
			bt, err := board.NewBatcher(leaderboard.WithBatchWindow(20 * time.Millisecond))
			require.NoError(t, err)
			var wg sync.WaitGroup
			var refused atomic.Int64
			for i := range 300 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					m, score := fmt.Sprintf("m%d", i%7), float64(i%13)
					if i%50 == 0 {
						m, score = "big", 1.5e308 // Accumulate: over the range with what is stored
					}
					_, err := bt.Submit(ctx, m, score)
					if err != nil {
						assert.ErrorIs(t, err, leaderboard.ErrInvalidScore)
						refused.Add(1)
					}
				}()
			}
			wg.Wait()
			require.NoError(t, bt.Close(ctx))
			if policy == leaderboard.Accumulate {
				require.Equal(t, int64(6), refused.Load())
			} else {
				require.Zero(t, refused.Load())
			}
			require.Equal(t, 1+300-int(refused.Load()), boardRows(t, s, name), "one row a submission, none for a refused one")
			requireVerify(t, board, true)
			before, err := board.Top(ctx, 20)
			require.NoError(t, err)
			b.Wipe(t, name)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			after, err := board.Top(ctx, 20)
			require.NoError(t, err)
			require.Equal(t, before, after, "%v", policy)
		}
	})
}

// boardView reads the whole default window of a board: every entry best
// first, and each one's standing.
func boardView(t *testing.T, board *leaderboard.Leaderboard, q ...leaderboard.Query) []any {
	t.Helper()
	ctx := context.Background()
	top, err := board.Top(ctx, leaderboard.MaxN, q...)
	require.NoError(t, err)
	out := []any{top}
	for _, e := range top {
		st, err := board.Rank(ctx, e.Member, q...)
		require.NoError(t, err)
		out = append(out, st)
	}
	return out
}

// requireRebuildKeeps requires Verify clean, then a Rebuild after Redis
// lost the board to give back what view read before (the board Redis had,
// no standing refused), and Verify clean again.
func requireRebuildKeeps(t *testing.T, b *testredis.Backend, name string, board *leaderboard.Leaderboard, view func() []any) {
	t.Helper()
	requireVerify(t, board, true)
	before := view()
	b.Wipe(t, name)
	rep, err := board.Rebuild(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Refused, "an acknowledged standing refused at Rebuild")
	require.Equal(t, before, view(), "the Rebuild gives the board Redis had")
	requireVerify(t, board, true)
}

// removeHookStore is the store with a hook run inside Remove, before the
// store records the removal: what another server does meanwhile.
type removeHookStore struct {
	*Store
	beforeRemove func()
}

func (h *removeHookStore) Remove(ctx context.Context, r leaderboard.Removal) error {
	if f := h.beforeRemove; f != nil {
		h.beforeRemove = nil
		f()
	}
	return h.Store.Remove(ctx, r)
}

// TestRemoveBetweenMovedOutOnStore: RemoveBetween with a store reads a
// chunk's members, records their removal, then removes them from Redis.
// A member whose concurrent Submit (appended before the removal) moves it
// out of the range in between is removed from Redis too, as the store no
// longer counts that Submit: Verify is clean and a Rebuild gives the same
// board, plain and sharded. (Redis kept it once, and the Rebuild then
// dropped the member's acknowledged submissions.)
func TestRemoveBetweenMovedOutOnStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {10, 30}} {
			ctx := context.Background()
			s := newStore(t)
			name := b.BoardName(t) + fmt.Sprint(len(shards))
			hook := &removeHookStore{Store: s}
			opts := []leaderboard.Option{leaderboard.WithPolicy(leaderboard.Accumulate)}
			if shards != nil {
				opts = append(opts, leaderboard.WithShards(shards...))
			}
			board, err := leaderboard.New(b.Client, name, append(opts, leaderboard.WithStore(hook))...)
			require.NoError(t, err)
			other, err := leaderboard.New(b.Client, name, append(opts, leaderboard.WithStore(s))...) // another server
			require.NoError(t, err)
			require.NoError(t, board.SubmitMany(ctx, map[string]float64{"m": 5, "fair": 50}))
			hook.beforeRemove = func() {
				_, err := other.Submit(ctx, "m", 15) // m: 20, out of [0, 10]
				require.NoError(t, err)
			}
			n, err := board.RemoveBetween(ctx, 0, 10)
			require.NoError(t, err)
			require.Equal(t, int64(1), n, "m was read in the range and its removal recorded")
			_, err = board.Rank(ctx, "m")
			require.ErrorIs(t, err, leaderboard.ErrNotRanked)
			requireRebuildKeeps(t, b, name, board, func() []any { return boardView(t, board) })
		}
	})
}

// TestAccumulateDecimalsRebuild: on an Accumulate board with a tie-break
// keeping Decimals, Redis adds the scaled integers (1 + 2 tenths, exactly
// 0.3) and the store the float64s (0.1 + 0.2 = 0.30000000000000004, more
// fraction digits than the tie-break keeps): Verify finds them equal and a
// Rebuild keeps the member (it refused the standing, and the member's
// acknowledged submissions were gone from the board).
func TestAccumulateDecimalsRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		tb, err := leaderboard.EarlierFirst(leaderboard.TimeOrder{Epoch: time.Now().Add(-24 * time.Hour).Truncate(time.Hour),
			Resolution: time.Second, MaxScore: 1e6, Decimals: 1})
		require.NoError(t, err)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate),
			leaderboard.WithTieBreak(tb))
		require.NoError(t, err)
		for _, v := range []float64{0.1, 0.2} {
			_, err = board.Submit(ctx, "p", v)
			require.NoError(t, err)
		}
		_, err = board.Submit(ctx, "q", 1)
		require.NoError(t, err)
		requireRebuildKeeps(t, b, name, board, func() []any { return boardView(t, board) })
	})
}

// TestTieBreakNanosRebuild: a tie-break whose Epoch carries a fraction of
// a microsecond (Epoch: time.Now(), a launch instant), and submissions at
// nanosecond times: the board picks each tie-break slot from the time cut
// to the microsecond, as the store keeps it, so Verify is clean and a
// Rebuild gives the same order. (Redis took the slot of the nanosecond
// time, the Rebuild that of the store's microsecond: z moved ahead of a.)
func TestTieBreakNanosRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		base := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
		epoch := base.Add(500 * time.Nanosecond) // a launch instant, as time.Now() gives it
		now := epoch.Add(time.Hour)
		tb, err := leaderboard.EarlierFirst(leaderboard.TimeOrder{Epoch: epoch, Resolution: time.Second, MaxScore: 1e6})
		require.NoError(t, err)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithTieBreak(tb),
			leaderboard.WithClock(func() time.Time { return now }))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "a", 10, leaderboard.WithTime(epoch.Add(500*time.Millisecond))) // slot 0
		require.NoError(t, err)
		// Slot 1 by its nanoseconds, slot 0 by its microseconds: the
		// board takes slot 0, as a Rebuild from the store does.
		_, err = board.Submit(ctx, "z", 10, leaderboard.WithTime(epoch.Add(time.Second+200*time.Nanosecond)))
		require.NoError(t, err)
		requireRebuildKeeps(t, b, name, board, func() []any { return boardView(t, board) })
	})
}

// nanoSeason is a user's own window (API.md: "or the user's own"): hourly
// seasons counted from a launch instant, which carries nanoseconds as
// time.Now() gives them.
type nanoSeason struct{ start time.Time }

func (w nanoSeason) Name() string { return "season" }
func (w nanoSeason) Period(t time.Time) leaderboard.Period {
	n := t.Sub(w.start) / time.Hour
	if t.Before(w.start) {
		n--
	}
	s := w.start.Add(n * time.Hour)
	return leaderboard.Period{ID: "s" + strconv.Itoa(int(n)+1000), Start: s, End: s.Add(time.Hour)}
}

// TestCustomWindowNanosRebuild: a user's window whose periods start at an
// instant with a fraction of a microsecond (a season counted from launch :=
// time.Now()), and a submission less than that fraction after a period's
// start: the board picks its period from its time cut to the microsecond,
// as the store keeps it (the season before), so a Rebuild gives every
// season back as Redis had it. (Redis wrote it into the later season, the
// store counted it in the one before: a Rebuild moved the acknowledged
// score to last season's board.)
func TestCustomWindowNanosRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		start := time.Now().UTC().Truncate(time.Hour).Add(500 * time.Nanosecond)
		now := start.Add(90 * time.Minute)
		w := nanoSeason{start}
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithWindows(w),
			leaderboard.WithClock(func() time.Time { return now }))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "a", 10, leaderboard.WithTime(start.Add(time.Hour+200*time.Nanosecond)))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "b", 20, leaderboard.WithTime(start.Add(time.Hour+time.Microsecond)))
		require.NoError(t, err)
		seasons := func() []any {
			return append(boardView(t, board), boardView(t, board, leaderboard.At(start.Add(time.Minute)))...)
		}
		require.Len(t, seasons()[0], 1, "b is on the current season's board")
		requireRebuildKeeps(t, b, name, board, seasons)
	})
}

// TestBatcherAccumulateFractionsRebuild: a Batcher writes a member's
// Accumulate submissions that are not whole numbers one by one, in order,
// as the store adds them ((0.1 + 0.2) + 0.3): Verify is clean and a Rebuild
// gives the same total. (It folded them into one addition of 0.2 + 0.3:
// Redis held 0.6, the store 0.6000000000000001.)
func TestBatcherAccumulateFractionsRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "p", 0.1)
		require.NoError(t, err)
		bt, err := board.NewBatcher(leaderboard.WithBatchWindow(time.Second))
		require.NoError(t, err)
		var wg sync.WaitGroup
		for _, v := range []float64{0.2, 0.3} { // one batch: folded into one write of 0.5
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := bt.Submit(ctx, "p", v)
				assert.NoError(t, err)
			}()
		}
		wg.Wait()
		require.NoError(t, bt.Close(ctx))
		requireRebuildKeeps(t, b, name, board, func() []any { return boardView(t, board) })
	})
}

// TestStoreRefusalIsTheCallersOwn: a member the store cannot hold (not
// valid UTF-8 without NUL bytes) is refused before anything is sent, by
// every write (CheckSubmission). A Batcher's batch held it: the store
// refused the batch's one append, and every caller of that batch got
// ErrInvalidMember for another player's name. Nothing of a refused
// submission is written: no row, no score, no call to Redis.
func TestStoreRefusalIsTheCallersOwn(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		cc := &testredis.CountingClient{Client: b.Client}
		board, err := leaderboard.New(cc, name, leaderboard.WithStore(s),
			leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()))
		require.NoError(t, err)
		bad := []string{"bad\x00name", "bad\xffname"}

		bt, err := board.NewBatcher(leaderboard.WithBatchWindow(50 * time.Millisecond))
		require.NoError(t, err)
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				_, err := bt.Submit(ctx, fmt.Sprintf("good%d", i), float64(i))
				assert.NoError(t, err, "good%d beside a bad name in its batch", i)
			})
		}
		for _, m := range bad {
			wg.Go(func() {
				_, err := bt.Submit(ctx, m, 7)
				assert.ErrorIs(t, err, leaderboard.ErrInvalidMember, "%q", m)
			})
		}
		wg.Wait()
		require.NoError(t, bt.Close(ctx))
		require.Equal(t, 6, boardRows(t, s, name), "a row for each good submission")
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(6), n)

		calls := cc.Calls()
		for _, m := range bad {
			_, err := board.Submit(ctx, m, 1)
			require.ErrorIs(t, err, leaderboard.ErrInvalidMember, "Submit %q", m)
			err = board.Set(ctx, m, 1)
			require.ErrorIs(t, err, leaderboard.ErrInvalidMember, "Set %q", m)
			err = board.SubmitMany(ctx, map[string]float64{"good9": 9, m: 1})
			require.ErrorIs(t, err, leaderboard.ErrInvalidMember, "SubmitMany with %q", m)
		}
		require.Equal(t, calls, cc.Calls(), "calls to Redis for refused submissions")
		require.Equal(t, 6, boardRows(t, s, name), "rows for refused submissions")
	})
}
