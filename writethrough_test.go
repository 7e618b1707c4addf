package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestStoreFirst: a store failure leaves Redis untouched; a Redis failure
// after the store wrote reports ErrPending.
func TestStoreFirst(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Accumulate} {
			store := newMemStore()
			board, name := newBoard(t, b, lb.WithPolicy(policy), lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Weekly()))
			_, err := board.Submit(ctx, "p", 3)
			require.NoError(t, err)
			before := b.Snapshot(t, name)

			store.fail = errors.New("connection refused")
			_, err = board.Submit(ctx, "p", 7)
			require.ErrorContains(t, err, "store: connection refused")
			require.NotErrorIs(t, err, lb.ErrPending)
			require.Equal(t, before, b.Snapshot(t, name), "Redis must be untouched")
			store.fail = nil

			// Break Redis for this board: its all-time key holds a string.
			c := b.Client.Client
			require.NoError(t, c.Do(ctx, c.B().Set().Key("lb:{"+name+"}:alltime").Value("x").Build()).Error())
			_, err = board.Submit(ctx, "p", 9, lb.WithID("late"))
			require.ErrorIs(t, err, lb.ErrPending)
			require.ErrorContains(t, err, "WRONGTYPE")
			require.Equal(t, 2, store.count(), "the submission is durable")
			require.Equal(t, fmt.Sprint(9.0), fmt.Sprint(store.subs[1].Score))
		}
	})
}

// TestSubmitTellsTheStoreItsPeriods: the store gets the board's policy,
// order and every live period a submission is written to.
func TestSubmitTellsTheStoreItsPeriods(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	store := newMemStore()
	clock := future
	board, _ := newBoard(t, b, lb.WithStore(store), lb.WithPolicy(lb.Accumulate), lb.WithOrder(lb.LowestFirst),
		lb.WithWindows(lb.AllTime(), lb.Daily(), lb.Weekly()), lb.WithClock(func() time.Time { return clock }))
	day, week := lb.Daily().Period(clock), lb.Weekly().Period(clock)
	all := []lb.SubmissionPeriod{
		{Window: "alltime", Period: "alltime"},
		{Window: "daily", Period: day.ID, Start: day.Start, End: day.End},
		{Window: "weekly", Period: week.ID, Start: week.Start, End: week.End},
	}
	_, err := board.Submit(ctx, "p", 1)
	require.NoError(t, err)
	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"q": 2, "r": 3}))
	require.Equal(t, 3, store.count())
	for _, sub := range store.subs {
		require.Equal(t, lb.Accumulate, sub.Policy)
		require.Equal(t, lb.LowestFirst, sub.Order)
		require.Equal(t, all, sub.Periods, sub.Member)
	}

	// Three days back the daily period has expired (one period of
	// retention): that window is not written, so not listed.
	old := clock.Add(-72 * time.Hour)
	res, err := board.Submit(ctx, "p", 1, lb.WithTime(old))
	require.NoError(t, err)
	require.True(t, res.Windows[1].Closed)
	last := store.subs[len(store.subs)-1]
	require.Len(t, last.Periods, 2)
	require.Equal(t, "alltime", last.Periods[0].Window)
	require.Equal(t, "weekly", last.Periods[1].Window)
	require.Equal(t, lb.Weekly().Period(old).ID, last.Periods[1].Period)
}

// notRemover is a store that does not record removals.
type notRemover struct{ *memStore }

func (notRemover) Remove() {} // hides memStore's

// TestRemoveReachesTheStore: with a Remover store, Remove is recorded
// first and a Rebuild keeps the member removed, counting only what was
// submitted after; a store failure leaves Redis untouched, a Redis failure
// after it is ErrPending. Without one, a Rebuild brings the member back.
func TestRemoveReachesTheStore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sharded := range []bool{false, true} {
			store := newMemStore()
			clock := future
			opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()),
				lb.WithClock(func() time.Time { return clock })}
			if sharded {
				opts = append(opts, lb.WithShards(5))
			}
			board, name := newBoard(t, b, opts...)
			for _, m := range []string{"ann", "bob", "cy"} {
				_, err := board.Submit(ctx, m, 3)
				require.NoError(t, err)
			}
			// Yesterday's standing stays: Remove touches today's period.
			_, err := board.Submit(ctx, "bob", 1, lb.WithTime(clock.Add(-24*time.Hour)))
			require.NoError(t, err)
			require.NoError(t, board.Remove(ctx, "bob"))
			_, err = board.Submit(ctx, "cy", 4)
			require.NoError(t, err)
			require.NoError(t, board.Remove(ctx, "cy"))
			_, err = board.Submit(ctx, "cy", 2) // after the removal: counts alone
			require.NoError(t, err)
			yesterday := []lb.Query{lb.In(lb.Daily()), lb.At(clock.Add(-24 * time.Hour))}
			views := [][]lb.Query{nil, {lb.In(lb.Daily())}, yesterday}
			before := boardView(t, board, views...)
			top, err := board.Top(ctx, 10)
			require.NoError(t, err)
			require.Equal(t, []lb.Entry{{Member: "ann", Score: 3, Rank: 1}, {Member: "cy", Score: 2, Rank: 2}}, top)

			b.Wipe(t, name)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			require.Equal(t, before, boardView(t, board, views...), "removed members stay removed")
			requireVerified(t, board)

			store.fail = errors.New("connection refused")
			err = board.Remove(ctx, "ann")
			require.ErrorContains(t, err, "store: connection refused")
			require.NotErrorIs(t, err, lb.ErrPending)
			require.Equal(t, before, boardView(t, board, views...), "Redis must be untouched")
			store.fail = nil

			// Without a Remover, a rebuild brings them back.
			plain, err := lb.New(b.Client, name, append(opts, lb.WithStore(notRemover{store}))...)
			require.NoError(t, err)
			require.NoError(t, plain.Remove(ctx, "ann"))
			_, err = plain.Rebuild(ctx)
			require.NoError(t, err)
			st, err := plain.Rank(ctx, "ann")
			require.NoError(t, err)
			require.Equal(t, 3.0, st.Score)

			if !sharded {
				// Redis fails after the store recorded the removal.
				c := b.Client.Client
				require.NoError(t, c.Do(ctx, c.B().Set().Key("lb:{"+name+"}:alltime").Value("x").Build()).Error())
				err = board.Remove(ctx, "ann")
				require.ErrorIs(t, err, lb.ErrPending)
				require.ErrorContains(t, err, "WRONGTYPE")
			}
		}
	})
}

// plainStore is a store with none of the optional interfaces (no
// IDKeeper, no Retractor, no Remover).
type plainStore struct{ lb.Store }

// TestRefusedSubmitManyLeavesNoRow: SubmitMany's batch refused by Redis
// (an overflowing total) is retracted from the store.
func TestRefusedSubmitManyLeavesNoRow(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sharded := range []bool{false, true} {
			store := newMemStore()
			opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate)}
			if sharded {
				opts = append(opts, lb.WithShards(0))
			}
			board, _ := newBoard(t, b, opts...)
			require.NoError(t, board.SubmitMany(ctx, map[string]float64{"p": math.MaxFloat64}))
			err := board.SubmitMany(ctx, map[string]float64{"p": math.MaxFloat64, "q": 1})
			require.ErrorIs(t, err, lb.ErrInvalidScore)
			require.Equal(t, 1, store.count(), "the refused batch is retracted")
			_, err = board.Rank(ctx, "q")
			require.ErrorIs(t, err, lb.ErrNotRanked)
		}
	})
}

// failingRetractor cannot take a refused submission back.
type failingRetractor struct{ *memStore }

func (failingRetractor) Retract(context.Context, []lb.Submission) error {
	return errors.New("store down")
}

// TestRefusalWhenRetractFails: the caller still gets the refusal's
// sentinel, and is told the submission stays in the store.
func TestRefusalWhenRetractFails(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	store := newMemStore()
	board, _ := newBoard(t, b, lb.WithStore(failingRetractor{store}), lb.WithPolicy(lb.Accumulate))
	_, err := board.Submit(ctx, "p", math.MaxFloat64)
	require.NoError(t, err)
	_, err = board.Submit(ctx, "p", math.MaxFloat64)
	require.ErrorIs(t, err, lb.ErrInvalidScore)
	require.ErrorContains(t, err, "store down")
	require.ErrorContains(t, err, "stays in the store")
}

// oneAtATime is a store without AppendBatch whose Append fails from the
// failAt-th call on; a Retractor when retracts.
type oneAtATime struct {
	lb.Store
	n, failAt int
}

func (s *oneAtATime) Append(ctx context.Context, sub lb.Submission) (bool, error) {
	if s.n++; s.n >= s.failAt {
		return false, errors.New("connection reset")
	}
	return s.Store.Append(ctx, sub)
}

type oneAtATimeRetractor struct {
	*oneAtATime
	lb.Retractor
}

// TestStoreFailsPartWay: a store that takes submissions one at a time and
// fails at the third of a SubmitMany's or a batch's leaves none of them
// when it can retract (a store error, Redis untouched); when it cannot,
// the two it took stay, and their callers (the SubmitMany; the batch's
// first two callers) get ErrPending, the third caller the store's error.
func TestStoreFailsPartWay(t *testing.T) {
	for _, retracts := range []bool{true, false} {
		t.Run(fmt.Sprintf("retracts=%v", retracts), func(t *testing.T) {
			b := testredis.Mini(t)
			ctx := context.Background()
			mem := newMemStore()
			failing := &oneAtATime{Store: mem, failAt: 3}
			var store lb.Store = failing
			if retracts {
				store = oneAtATimeRetractor{failing, mem}
			}
			board, _ := newBoard(t, b, lb.WithStore(store), lb.WithPolicy(lb.Accumulate))
			err := board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3})
			require.Error(t, err)
			require.Equal(t, !retracts, errors.Is(err, lb.ErrPending), "SubmitMany: %v", err)
			kept := 2
			if retracts {
				kept = 0
			}
			require.Equal(t, kept, mem.count(), "rows the store holds")
			n, err := board.Count(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "Redis untouched")

			failing.n, failing.failAt = 0, 3
			before := mem.count()
			bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
			require.NoError(t, err)
			got := runBatcherOn(t, bt, []*batchCall{{member: "a", score: 1}, {member: "b", score: 2}, {member: "c", score: 3}})
			for i, c := range got {
				require.Error(t, c.err)
				require.Equal(t, !retracts && i < 2, errors.Is(c.err, lb.ErrPending), "caller %d: %v", i, c.err)
			}
			require.Equal(t, before+kept, mem.count(), "rows the store holds after the batch")
			n, err = board.Count(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "Redis untouched")
		})
	}
}

// removeHook is a store whose Remove runs before, or after, once it has
// recorded the removal: a writer between RemoveBetween's read and its
// store step, or between its store step and its Redis step.
type removeHook struct {
	*memStore
	before, after func()
}

func (h *removeHook) Remove(ctx context.Context, r lb.Removal) error {
	if f := h.before; f != nil {
		h.before = nil
		f()
	}
	err := h.memStore.Remove(ctx, r)
	if f := h.after; f != nil {
		h.after = nil
		f()
	}
	return err
}

// TestRemoveBetweenRemovesWhatItRecorded: RemoveBetween(900, +Inf) reads a
// cheater at 1000 and a player at 950 and records their removal; the
// cheater's legitimate 10 replaces the 1000 and another player enters at
// 990 either before the store records the removal or after it, before
// Redis removes them. Redis removes both members the store recorded (the
// cheater too, though it left the range), and leaves the newcomer (not
// read). Before the record, the 10 is one of the submissions the removal
// covers: the store agrees with Redis (Verify, a Rebuild). After it, the
// store holds the 10 that Redis removed, as after Remove: Verify names the
// cheater missing and a Rebuild brings it back; the store never lacks what
// Redis holds. On plain and sharded boards, with and without a tie-break.
func TestRemoveBetweenRemovesWhatItRecorded(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: future.Add(-time.Hour), Resolution: time.Second, MaxScore: 1e6})
		require.NoError(t, err)
		for name, opts := range map[string][]lb.Option{
			"plain": nil, "sharded": {lb.WithShards(100, 500)}, "tiebreak": {lb.WithTieBreak(tb)},
			"sharded tiebreak": {lb.WithTieBreak(tb), lb.WithShards(100, 500)},
		} {
			for _, recorded := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/recorded=%v", name, recorded), func(t *testing.T) {
					removeBetweenRace(t, b, opts, recorded)
				})
			}
		}
	})
}

// removeBetweenRace is a case of TestRemoveBetweenRemovesWhatItRecorded:
// the writes come after the store recorded the removal when recorded.
func removeBetweenRace(t *testing.T, b *testredis.Backend, opts []lb.Option, recorded bool) {
	ctx := context.Background()
	store := &removeHook{memStore: newMemStore()}
	board, _ := newBoard(t, b, append(opts, lb.WithStore(store), lb.WithPolicy(lb.Replace), lb.WithClock(fixed(future)))...)
	for m, s := range map[string]float64{"cheater": 1000, "fast": 950, "honest": 5} {
		_, err := board.Submit(ctx, m, s)
		require.NoError(t, err)
	}
	write := func() {
		for m, s := range map[string]float64{"cheater": 10, "late": 990} {
			_, err := board.Submit(ctx, m, s)
			require.NoError(t, err)
		}
	}
	if recorded {
		store.after = write
	} else {
		store.before = write
	}
	n, err := board.RemoveBetween(ctx, 900, math.Inf(1))
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "removed: the two members read")
	want := []lb.Entry{{Member: "late", Score: 990, Rank: 1}, {Member: "honest", Score: 5, Rank: 2}}
	top, err := board.Top(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, want, top)
	reps, err := board.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reps {
		if recorded {
			require.Equal(t, []string{"cheater"}, r.Missing, "the store holds the 10: %+v", r)
		} else {
			require.True(t, r.Clean(), "the store agrees: %+v", r)
		}
	}
	if recorded {
		want = []lb.Entry{want[0], {Member: "cheater", Score: 10, Rank: 2}, {Member: "honest", Score: 5, Rank: 3}}
	}
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	top, err = board.Top(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, want, top, "after a Rebuild")
}

// lostAnswerStore takes every submission and then answers as a store call
// whose ctx ran out after its commit does: the write is stored, the caller
// hears context.DeadlineExceeded.
type lostAnswerStore struct{ *memStore }

func (s lostAnswerStore) Append(ctx context.Context, sub lb.Submission) (bool, error) {
	if _, err := s.memStore.Append(ctx, sub); err != nil {
		return false, err
	}
	return false, fmt.Errorf("store: append: %w", context.DeadlineExceeded)
}

// TestStoreAnswerLost: a store call cut short by its ctx may have stored
// the write, so its error says so (not ErrPending, which says it is
// stored; not a bare "Redis was not written"), Redis stays untouched, and
// the retry with the same WithID that the error advises counts it once,
// in Redis and at the next Rebuild.
func TestStoreAnswerLost(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		mem := newMemStore()
		lost, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithStore(lostAnswerStore{mem}))
		before := b.Snapshot(t, name)
		_, err := lost.Submit(ctx, "p", 5, lb.WithID("match-1"))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NotErrorIs(t, err, lb.ErrPending)
		require.ErrorContains(t, err, "the store may hold it: retry with the same WithID")
		require.Equal(t, before, b.Snapshot(t, name), "Redis must be untouched")
		require.Equal(t, 1, mem.count(), "the store took it")

		board, err := lb.New(b.Client, name, lb.WithPolicy(lb.Accumulate), lb.WithStore(mem))
		require.NoError(t, err)
		res, err := board.Submit(ctx, "p", 5, lb.WithID("match-1"))
		require.NoError(t, err)
		require.Equal(t, 5.0, res.Score)
		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		st, err := board.Rank(ctx, "p")
		require.NoError(t, err)
		require.Equal(t, 5.0, st.Score, "counted once")
	})
}

// TestRemoveOfMemberTheStoreCannotHold: a member the store refuses as a
// member (textStore, as pgstore: a NUL byte) never reached it, so Remove
// records only the others in the store, and removes every one of them from
// Redis, scores and data, the refused one's written before the board had
// a store included (README, "API tour": Remove).
func TestRemoveOfMemberTheStoreCannotHold(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {5}} {
			ctx := context.Background()
			name := shardName(t, b)
			opts := []lb.Option{lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)), lb.WithShards(shards...)}
			before, err := lb.New(b.Client, name, opts...)
			require.NoError(t, err)
			for _, m := range []string{"a\x00b", "ok"} {
				_, err := before.Submit(ctx, m, 1, lb.WithData("d"))
				require.NoError(t, err)
			}
			mem := newMemStore()
			board, err := lb.New(b.Client, name, append(opts, lb.WithStore(textStore{mem}))...)
			require.NoError(t, err)
			require.NoError(t, board.Remove(ctx, "a\x00b", "ok"))
			for _, q := range []lb.Query{lb.In(lb.AllTime()), lb.In(lb.Daily())} {
				st, err := board.Ranks(ctx, []string{"a\x00b", "ok"}, q, lb.IncludeData())
				require.NoError(t, err)
				require.Equal(t, []lb.Standing{{Entry: lb.Entry{Member: "a\x00b"}}, {Entry: lb.Entry{Member: "ok"}}}, st,
					"shards %v: both members gone from Redis, with their data", shards)
			}
			var recorded []string
			for k := range mem.removed {
				recorded = append(recorded, k)
			}
			require.Len(t, recorded, 3, "shards %v: ok's removal from every readable period (yesterday's too) alone", shards)
			for _, k := range recorded {
				require.True(t, strings.HasSuffix(k, "ok"), "shards %v: %q", shards, k)
			}
		}
	})
}
