package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/durabletest"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// memStore is a Store in memory, for the ordering rules; pgstore is tested
// in its own module against PostgreSQL.
type memStore struct {
	mu     sync.Mutex
	subs   []lb.Submission
	ids    map[string]time.Time // board + "\x00" + id -> received
	fail   error                // Append and Remove fail with it when set
	sealed map[string][]lb.Entry
	// removed holds, by board, window, period and member, how many
	// submissions there were at the member's last removal from the period.
	removed map[string]int
}

func newMemStore() *memStore {
	return &memStore{ids: map[string]time.Time{}, sealed: map[string][]lb.Entry{}, removed: map[string]int{}}
}

func removalKey(board, window, period, member string) string {
	return board + "\x00" + window + "\x00" + period + "\x00" + member
}

func (s *memStore) Remove(_ context.Context, r lb.Removal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	for _, p := range r.Periods {
		for _, m := range r.Members {
			s.removed[removalKey(r.Board, p.Window, p.Period, m)] = len(s.subs)
		}
	}
	return nil
}

func (s *memStore) Append(_ context.Context, sub lb.Submission) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return false, s.fail
	}
	if sub.ID != "" {
		if _, ok := s.ids[sub.Board+"\x00"+sub.ID]; ok {
			return true, nil
		}
		s.ids[sub.Board+"\x00"+sub.ID] = sub.Received
	}
	s.subs = append(s.subs, sub)
	return false, nil
}

func (s *memStore) Standings(_ context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	s.mu.Lock()
	agg := map[string]*lb.StoredStanding{}
	var order []string
	for i, sub := range s.subs {
		if sub.Board != q.Board || (!q.From.IsZero() && sub.At.Before(q.From)) || (!q.To.IsZero() && !sub.At.Before(q.To)) {
			continue
		}
		if n, ok := s.removed[removalKey(q.Board, q.Window, q.Period, sub.Member)]; ok && q.Window != "" && i < n {
			continue // appended before the member's removal from the period
		}
		cur, ok := agg[sub.Member]
		if !ok {
			agg[sub.Member] = &lb.StoredStanding{Member: sub.Member, Score: sub.Score, At: sub.At}
			order = append(order, sub.Member)
			continue
		}
		switch q.Policy {
		case lb.Replace:
			cur.Score, cur.At = sub.Score, sub.At
		case lb.Accumulate:
			cur.Score += sub.Score
			cur.At = sub.At
		default:
			better := (q.Order == lb.HighestFirst && sub.Score > cur.Score) || (q.Order == lb.LowestFirst && sub.Score < cur.Score)
			if better || (sub.Score == cur.Score && sub.At.Before(cur.At)) {
				cur.Score, cur.At = sub.Score, sub.At
			}
		}
	}
	out := make([]lb.StoredStanding, 0, len(order))
	for _, m := range order {
		out = append(out, *agg[m])
	}
	s.mu.Unlock()
	for _, st := range out {
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

func (s *memStore) Seal(_ context.Context, board, window, period string, entries []lb.Entry) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := board + "/" + window + "/" + period
	if _, ok := s.sealed[k]; ok {
		return false, nil
	}
	s.sealed[k] = append([]lb.Entry(nil), entries...)
	return true, nil
}

func (s *memStore) Sealed(_ context.Context, board, window, period string) ([]lb.Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.sealed[board+"/"+window+"/"+period]
	return e, ok, nil
}

func (s *memStore) AppendBatch(ctx context.Context, subs []lb.Submission) ([]bool, error) {
	dup := make([]bool, len(subs))
	for i, sub := range subs {
		var err error
		if dup[i], err = s.Append(ctx, sub); err != nil {
			return nil, err
		}
	}
	return dup, nil
}

// Retract takes back submissions just appended: by board and id, or the
// latest equal one without an id.
func (s *memStore) Retract(_ context.Context, subs []lb.Submission) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range subs {
		for i := len(s.subs) - 1; i >= 0; i-- {
			sub := s.subs[i]
			same := sub.Board == r.Board && sub.ID == r.ID
			if r.ID == "" {
				same = same && sub.Member == r.Member && sub.Score == r.Score && sub.At.Equal(r.At) && sub.Received.Equal(r.Received)
			}
			if same {
				s.subs = append(s.subs[:i], s.subs[i+1:]...)
				delete(s.ids, r.Board+"\x00"+r.ID)
				break
			}
		}
	}
	return nil
}

func (s *memStore) IDReceived(_ context.Context, board, id string) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.ids[board+"\x00"+id]
	return at, ok, nil
}

func (s *memStore) IDsSince(_ context.Context, board string, since time.Time, fn func(string, time.Time) error) error {
	s.mu.Lock()
	var ids []string
	var at []time.Time
	for k, t := range s.ids {
		if b, id, _ := strings.Cut(k, "\x00"); b == board && !t.Before(since) {
			ids, at = append(ids, id), append(at, t)
		}
	}
	s.mu.Unlock()
	for i := range ids {
		if err := fn(ids[i], at[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *memStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// TestSubmitWithIDAppliesOnce retries one id five times at once under
// Accumulate: it adds once, on every backend, with and without a store.
func TestSubmitWithIDAppliesOnce(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, withStore := range []bool{false, true} {
			store := newMemStore()
			for _, sharded := range []bool{false, true} {
				opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily())}
				if withStore {
					opts = append(opts, lb.WithStore(store))
				}
				if sharded {
					opts = append(opts, lb.WithShards(12, 17))
				}
				board, _ := newBoard(t, b, opts...)
				_, err := board.Submit(ctx, "p", 10)
				require.NoError(t, err)

				var wg sync.WaitGroup
				results := make([]lb.Result, 5)
				errs := make([]error, 5)
				for i := range results {
					wg.Add(1)
					go func() {
						defer wg.Done()
						results[i], errs[i] = board.Submit(ctx, "p", 5, lb.WithID("match-42"))
					}()
				}
				wg.Wait()
				applied := 0
				for i, r := range results {
					require.NoError(t, errs[i])
					if !r.Duplicate {
						applied++
						require.True(t, r.Changed)
					} else {
						require.False(t, r.Changed)
						require.Equal(t, 15.0, r.Score, "a duplicate reports the current standing")
					}
				}
				require.Equal(t, 1, applied)
				for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
					st, err := board.Rank(ctx, "p", lb.In(w))
					require.NoError(t, err)
					require.Equal(t, 15.0, st.Score, w.Name())
				}
				if withStore {
					require.Equal(t, 2, store.count(), "the store keeps the id once")
				}
				// Another id is another submission.
				res, err := board.Submit(ctx, "p", 5, lb.WithID("match-43"))
				require.NoError(t, err)
				require.False(t, res.Duplicate)
				require.Equal(t, 20.0, res.Score)
				if withStore {
					store = newMemStore()
				}
			}
		}
	})
}

// TestDedupeWindow lets miniredis's clock pass the window: the id is
// forgotten by Redis and applies again (the store would still refuse it).
func TestDedupeWindow(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	clock := time.Now().Truncate(time.Millisecond)
	b.Mini.SetTime(clock)
	board, _ := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithDedupeWindow(time.Hour),
		lb.WithClock(func() time.Time { return clock }))
	_, err := board.Submit(ctx, "p", 1, lb.WithID("x"))
	require.NoError(t, err)
	clock = clock.Add(59 * time.Minute)
	b.Mini.FastForward(59 * time.Minute)
	res, err := board.Submit(ctx, "p", 1, lb.WithID("x"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	clock = clock.Add(2 * time.Minute)
	b.Mini.FastForward(2 * time.Minute)
	res, err = board.Submit(ctx, "p", 1, lb.WithID("x"))
	require.NoError(t, err)
	require.False(t, res.Duplicate)
	require.Equal(t, 2.0, res.Score)

	_, err = lb.New(b.Client, "x", lb.WithDedupeWindow(0))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
	_, err = lb.New(b.Client, "x", lb.WithStore(nil))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
}

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

// boardView is everything a reader sees of a board, for before/after
// comparisons.
func boardView(t *testing.T, board *lb.Leaderboard, queries ...[]lb.Query) []any {
	t.Helper()
	ctx := context.Background()
	var out []any
	for _, q := range queries {
		top, err := board.Top(ctx, 1000, q...)
		require.NoError(t, err)
		n, err := board.Count(ctx, q...)
		require.NoError(t, err)
		out = append(out, top, n)
		for _, e := range top {
			st, err := board.Rank(ctx, e.Member, q...)
			require.NoError(t, err)
			out = append(out, st)
		}
	}
	return out
}

func TestRebuildAfterWipe(t *testing.T) {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Hour), Resolution: time.Second, MaxScore: 1e6, Decimals: 1})
	require.NoError(t, err)
	variants := map[string][]lb.Option{
		"keepbest":         {},
		"accumulate":       {lb.WithPolicy(lb.Accumulate), lb.WithRanking(lb.Competition)},
		"replace-lowest":   {lb.WithPolicy(lb.Replace), lb.WithOrder(lb.LowestFirst)},
		"tiebreak":         {lb.WithTieBreak(tb), lb.WithPolicy(lb.Accumulate)},
		"sharded":          {lb.WithShards(-2, 0, 3), lb.WithPolicy(lb.Accumulate)},
		"sharded-tiebreak": {lb.WithShards(1, 2), lb.WithTieBreak(tb)},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for name, opts := range variants {
			t.Run(name, func(t *testing.T) {
				store := newMemStore()
				clock := future.Add(-36 * time.Hour) // yesterday's day stays live
				board, bname := newBoard(t, b, append(opts, lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Daily()),
					lb.WithClock(func() time.Time { return clock }))...)
				present, err := board.Present(ctx)
				require.NoError(t, err)
				require.False(t, present, "a board never rebuilt has no marker")
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				present, err = board.Present(ctx)
				require.NoError(t, err)
				require.True(t, present)

				vals := []float64{-3, -1, 0, 0.5, 1, 2.5, 4, 7}
				for i := 0; i < 120; i++ {
					if i == 60 {
						clock = future // the next day
					}
					m := fmt.Sprintf("p%d", (i*7)%23)
					_, err := board.Submit(ctx, m, vals[(i*5)%len(vals)], lb.WithTime(clock.Add(-time.Duration(i%5)*time.Minute)))
					require.NoError(t, err)
				}
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"bulk1": 2, "bulk2": 0.5, "p3": 1}))
				day1 := []lb.Query{lb.In(lb.Daily()), lb.At(future.Add(-36 * time.Hour))}
				views := [][]lb.Query{nil, {lb.In(lb.Daily())}, day1}
				before := boardView(t, board, views...)
				reports, err := board.Verify(ctx)
				require.NoError(t, err)
				require.Len(t, reports, 3, "all time, today, yesterday")
				for _, r := range reports {
					require.True(t, r.Clean(), "%+v", r)
				}

				b.Wipe(t, bname)
				present, err = board.Present(ctx)
				require.NoError(t, err)
				require.False(t, present, "the wipe must show")
				reports, err = board.Verify(ctx)
				require.NoError(t, err)
				require.False(t, reports[0].Clean())
				require.Equal(t, reports[0].StoreMembers, reports[0].MissingCount)

				var progress []lb.RebuildProgress
				rep, err := board.Rebuild(ctx, lb.WithProgress(func(p lb.RebuildProgress) { progress = append(progress, p) }))
				require.NoError(t, err)
				require.Equal(t, 3, rep.Periods)
				require.Empty(t, rep.Refused)
				require.NotEmpty(t, progress)
				require.True(t, progress[len(progress)-1].Done)
				require.Equal(t, 3, progress[len(progress)-1].PeriodsDone)
				require.Equal(t, before, boardView(t, board, views...), "the rebuilt board reads as before")
				reports, err = board.Verify(ctx)
				require.NoError(t, err)
				for _, r := range reports {
					require.True(t, r.Clean(), "%+v", r)
				}
				if strings.HasPrefix(name, "sharded") {
					checks, err := board.Check(ctx, false)
					require.NoError(t, err)
					for _, c := range checks {
						require.True(t, c.Clean(), "%+v", c)
					}
				}

				// Verify sees a member Redis lost and one it holds wrong.
				c := b.Client.Client
				top, err := board.Top(ctx, 2)
				require.NoError(t, err)
				if !strings.HasPrefix(name, "sharded") {
					require.NoError(t, c.Do(ctx, c.B().Zrem().Key("lb:{"+bname+"}:alltime").Member(top[0].Member).Build()).Error())
					require.NoError(t, c.Do(ctx, c.B().Zadd().Key("lb:{"+bname+"}:alltime").ScoreMember().ScoreMember(12345, top[1].Member).Build()).Error())
					reports, err = board.Verify(ctx)
					require.NoError(t, err)
					require.Equal(t, []string{top[0].Member}, reports[0].Missing)
					require.Equal(t, []string{top[1].Member}, reports[0].Different)
					require.Equal(t, int64(0), reports[0].Extra)
				}
			})
		}
	})
}

func TestSealClosedPeriods(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		store := newMemStore()
		clock := future.Add(-24 * time.Hour)
		board, _ := newBoard(t, b, lb.WithStore(store), lb.WithWindows(lb.Daily(), lb.AllTime()),
			lb.WithClock(func() time.Time { return clock }))
		for i, m := range []string{"ann", "bob", "cy"} {
			_, err := board.Submit(ctx, m, float64(10*(i+1)))
			require.NoError(t, err)
		}
		var hooked []lb.SealedPeriod
		hook := func(_ context.Context, p lb.SealedPeriod) error { hooked = append(hooked, p); return nil }
		sealed, err := board.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, sealed, "nothing has closed yet")

		day := lb.Daily().Period(clock)
		clock = future // the day is over
		sealed, err = board.Seal(ctx, hook)
		require.NoError(t, err)
		want := lb.SealedPeriod{Window: "daily", Period: day.ID, Entries: []lb.Entry{{Member: "cy", Score: 30, Rank: 1}, {Member: "bob", Score: 20, Rank: 2}, {Member: "ann", Score: 10, Rank: 3}}}
		require.Equal(t, []lb.SealedPeriod{want}, sealed)
		require.Equal(t, []lb.SealedPeriod{want}, hooked)

		sealed, err = board.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, sealed, "sealed once")
		require.Len(t, hooked, 1, "the hook runs once")

		entries, ok, err := board.Sealed(ctx, lb.At(day.Start))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want.Entries, entries)
		_, ok, err = board.Sealed(ctx)
		require.NoError(t, err)
		require.False(t, ok, "today is not sealed")
	})
}

// TestRebuildAfterRedisKilled: see durabletest.KillAndRebuild; pgstore runs
// the same test against PostgreSQL.
func TestRebuildAfterRedisKilled(t *testing.T) {
	durabletest.KillAndRebuild(t, newMemStore(), "fault")
}

// streamStore streams n made-up members for every period, calling hook
// before each one; the rest is memStore's.
type streamStore struct {
	*memStore
	n    int
	hook func(i int) error
}

func (s *streamStore) Standings(ctx context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	for i := range s.n {
		if s.hook != nil {
			if err := s.hook(i); err != nil {
				return err
			}
		}
		if err := fn(lb.StoredStanding{Member: fmt.Sprintf("m%d", i), Score: float64(s.n - i), At: future}); err != nil {
			return err
		}
	}
	return nil
}

// settledWriters waits until no goroutine of a rebuild's pipeline writer
// is left. (Counting all goroutines would not do: rueidis replaces a
// connection whose round trip a cancelled context cut short.)
func settledWriters(t *testing.T) {
	t.Helper()
	writers := func() int {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		return strings.Count(string(buf), "startPipelineWriter")
	}
	require.Eventually(t, func() bool { return writers() == 0 }, 5*time.Second, 10*time.Millisecond,
		"pipeline writers left: %d", writers())
}

// TestRebuildOverlapStops: the writers that send a rebuild's pipelines
// while the store is read stop with the rebuild, whether the store fails,
// Redis fails or the context is cancelled, and the board is left as it was.
func TestRebuildOverlapStops(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sharded := range []bool{false, true} {
			t.Run(fmt.Sprint("sharded=", sharded), func(t *testing.T) {
				store := &streamStore{memStore: newMemStore(), n: 50_000}
				opts := []lb.Option{lb.WithStore(store), lb.WithClock(fixed(future))}
				if sharded {
					opts = append(opts, lb.WithShards(15_000, 30_000))
				}
				board, name := newBoard(t, b, opts...)
				rep, err := board.Rebuild(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(store.n), rep.Members)
				top, err := board.Top(ctx, 3)
				require.NoError(t, err)
				require.Equal(t, []lb.Entry{{Member: "m0", Score: 50000, Rank: 1}, {Member: "m1", Score: 49999, Rank: 2}, {Member: "m2", Score: 49998, Rank: 3}}, top)
				// What readers see, and which keys there are (Snapshot reads
				// sorted sets only; the marker and index are not).
				snapshot := func() []any {
					var keys []string
					for _, k := range b.Keys(t, "*{"+name+"*") {
						if !strings.HasSuffix(k, ":rebuild") {
							keys = append(keys, k)
						}
					}
					sort.Strings(keys)
					top, err := board.Top(ctx, 20)
					require.NoError(t, err)
					n, err := board.Count(ctx)
					require.NoError(t, err)
					return []any{keys, top, n}
				}
				before := snapshot()

				// The store fails after many pipelines went out.
				boom := errors.New("boom")
				store.hook = func(i int) error {
					if i == 40_000 {
						return boom
					}
					return nil
				}
				_, err = board.Rebuild(ctx)
				require.ErrorIs(t, err, boom)
				settledWriters(t)
				require.Equal(t, before, snapshot(), "a failed rebuild swaps nothing in")

				// The context is cancelled midway.
				cctx, cancel := context.WithCancel(ctx)
				store.hook = func(i int) error {
					if i == 25_000 {
						cancel()
					}
					return nil
				}
				_, err = board.Rebuild(cctx)
				require.ErrorIs(t, err, context.Canceled)
				settledWriters(t)
				require.Equal(t, before, snapshot())

				// Redis refuses the commands: the fresh key becomes a
				// string once the rebuild has cleared it.
				c := b.Client.Client
				store.hook = func(i int) error {
					if i == 0 {
						key := "lb:{" + name + "}:alltime:rebuild"
						if sharded {
							key = "lb:{" + name + "#s0}:alltime:rebuild"
						}
						return c.Do(ctx, c.B().Set().Key(key).Value("x").Build()).Error()
					}
					return nil
				}
				_, err = board.Rebuild(ctx)
				require.ErrorContains(t, err, "WRONGTYPE")
				require.ErrorContains(t, err, "leaderboard: rebuild")
				settledWriters(t)
				require.Equal(t, before, snapshot())

				// And it still rebuilds after all that.
				store.hook = nil
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				settledWriters(t)
				require.Equal(t, before, snapshot())
			})
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
			reports, err := board.Verify(ctx)
			require.NoError(t, err)
			for _, r := range reports {
				require.True(t, r.Clean(), "%+v", r)
			}

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

// driftedStore keeps standings that drifted from its log (drift names
// the members) and says so when checked.
type driftedStore struct {
	*memStore
	drift   []string
	checked []lb.StandingsQuery
}

func (s *driftedStore) CheckStandings(_ context.Context, q lb.StandingsQuery, repair bool) (lb.StandingsCheck, error) {
	s.checked = append(s.checked, q)
	return lb.StandingsCheck{Kept: true, Members: 1, Differ: s.drift, DifferCount: int64(len(s.drift))}, nil
}

// TestVerifyChecksTheStoreAgainstItsLog: Verify asks a StandingsChecker to
// check each period's kept standings against its log, and a drift there
// makes the report unclean even when Redis equals the store's standings.
func TestVerifyChecksTheStoreAgainstItsLog(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	store := &driftedStore{memStore: newMemStore()}
	board, _ := newBoard(t, b, lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithClock(func() time.Time { return future }))
	_, err := board.Submit(ctx, "p", 1)
	require.NoError(t, err)
	reports, err := board.Verify(ctx)
	require.NoError(t, err)
	require.Len(t, store.checked, len(reports), "every live period is checked")
	require.Equal(t, "daily", store.checked[1].Window)
	require.Equal(t, lb.Daily().Period(future).ID, store.checked[1].Period)
	for _, r := range reports {
		require.True(t, r.Clean(), "%+v", r)
	}
	store.drift = []string{"p"}
	reports, err = board.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reports {
		require.False(t, r.Clean(), "kept standings that left the log are not clean")
		require.Equal(t, []string{"p"}, r.Store.Differ)
	}
}
