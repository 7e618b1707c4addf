package leaderboard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// hotModelKinds are the boards TestHotTopModel runs: every policy, both
// orders, both rank modes, both tie-breaks, unsharded and sharded.
func hotModelKinds(t *testing.T, epoch time.Time) []struct {
	name string
	opts []lb.Option
} {
	tb := func(mk func(lb.TimeOrder) (lb.TieBreak, error)) lb.Option {
		b, err := mk(lb.TimeOrder{Epoch: epoch, Resolution: time.Second, MaxScore: 1000})
		require.NoError(t, err)
		return lb.WithTieBreak(b)
	}
	shards := lb.WithShards(3, 6)
	return []struct {
		name string
		opts []lb.Option
	}{
		{"keepbest", nil},
		{"replace", []lb.Option{lb.WithPolicy(lb.Replace)}},
		{"accumulate", []lb.Option{lb.WithPolicy(lb.Accumulate)}},
		{"lowest/replace", []lb.Option{lb.WithOrder(lb.LowestFirst), lb.WithPolicy(lb.Replace)}},
		{"competition/accumulate", []lb.Option{lb.WithRanking(lb.Competition), lb.WithPolicy(lb.Accumulate)}},
		{"earlier", []lb.Option{tb(lb.EarlierFirst)}},
		{"later/replace/lowest", []lb.Option{tb(lb.LaterFirst), lb.WithPolicy(lb.Replace), lb.WithOrder(lb.LowestFirst)}},
		{"sharded", []lb.Option{shards}},
		{"sharded/replace/competition", []lb.Option{shards, lb.WithPolicy(lb.Replace), lb.WithRanking(lb.Competition)}},
		{"sharded/lowest/accumulate", []lb.Option{shards, lb.WithOrder(lb.LowestFirst), lb.WithPolicy(lb.Accumulate)}},
		{"sharded/later", []lb.Option{shards, tb(lb.LaterFirst)}},
		{"store/accumulate", []lb.Option{lb.WithStore(newMemStore()), lb.WithPolicy(lb.Accumulate)}},
		{"sharded/store", []lb.Option{shards, lb.WithStore(newMemStore())}},
	}
}

// TestHotTopModel: after every kind of write (Submit and Set, into the
// top, out of it and below it; SubmitMany, Remove, RemoveBetween, Reset,
// SetData, a Batcher's batch) by one of two processes with WithHotTop,
// and after a day's rollover, every read the mirror serves (Top(n) for n
// <= k, Range and Page within k) and those past it, by either process and
// by a third that never wrote, equal the same board's without WithHotTop,
// at once: the clients do not track keys, so every read reads the mirror
// in Redis, which each write leaves right (or gone) before it returns.
// Scores are small integers, so that ties sit at the k-th place.
func TestHotTopModel(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		base := time.Now().UTC().Truncate(time.Second)
		for j, kind := range hotModelKinds(t, base.AddDate(0, 0, -3)) {
			t.Run(kind.name, func(t *testing.T) {
				// One k a kind, in turn (the suite's time): a mirror of
				// one entry, and one of three where ties sit at its edge.
				ks := []int{1 + 2*(j%2)}
				if kind.name == "sharded" {
					ks = append(ks, lb.MaxN) // a mirror never full
				}
				for i, k := range ks {
					t.Run(fmt.Sprint(k), func(t *testing.T) {
						runHotModel(t, b, kind.opts, k, uint64(i), strings.Contains(kind.name, "store"))
					})
				}
			})
		}
	})
}

type hotModel struct {
	t                  *testing.T
	clock              *testClock
	a, o, fresh, plain *lb.Leaderboard
	bt                 *lb.Batcher
	k                  int
	store              bool // the board has a store: Rebuild runs
}

// newHotModel is a model of three hot boards of kind on one board name of
// b, through hot (their client), beside the plain board through b's own
// client, and a Batcher of the first, closed when the test ends.
func newHotModel(t *testing.T, b *testredis.Backend, hot rueidis.Client, kind []lb.Option, k int) *hotModel {
	name := shardName(t, b)
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	opts := append([]lb.Option{lb.WithClock(clock.Now), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRetention(48 * time.Hour)}, kind...)
	m := &hotModel{t: t, clock: clock, k: k}
	for _, p := range []**lb.Leaderboard{&m.a, &m.o, &m.fresh} {
		var err error
		*p, err = lb.New(hot, name, append(slices.Clone(opts), lb.WithHotTop(k))...)
		require.NoError(t, err)
	}
	var err error
	m.plain, err = lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	m.bt, err = m.a.NewBatcher(lb.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.bt.Close(context.Background())) })
	return m
}

func runHotModel(t *testing.T, b *testredis.Backend, kind []lb.Option, k int, seed uint64, store bool) {
	ctx := context.Background()
	m := newHotModel(t, b, b.Client, kind, k)
	m.store = store
	clock := m.clock
	rng := rand.New(rand.NewPCG(seed, 4242))
	for step := range 40 {
		what := m.step(ctx, rng)
		clock.Set(clock.Now().Add(time.Second))
		m.check(ctx, fmt.Sprintf("step %d: %s", step, what))
	}
}

// step makes one random write and says what it was.
func (m *hotModel) step(ctx context.Context, rng *rand.Rand) string {
	t := m.t
	w := []*lb.Leaderboard{m.a, m.o}[rng.IntN(2)]
	mem := fmt.Sprintf("m%d", rng.IntN(10))
	s := float64(rng.IntN(10))
	daily := lb.In(lb.Daily())
	switch x := rng.IntN(20); {
	case x < 7:
		_, err := w.Submit(ctx, mem, s)
		require.NoError(t, err)
		return fmt.Sprintf("Submit(%s, %v)", mem, s)
	case x < 9:
		q := []lb.Query{}
		if rng.IntN(2) == 0 {
			q = append(q, daily)
		}
		require.NoError(t, w.Set(ctx, mem, s, q...))
		return fmt.Sprintf("Set(%s, %v, %d)", mem, s, len(q))
	case x < 11:
		_, err := m.bt.Submit(ctx, mem, s)
		require.NoError(t, err)
		return fmt.Sprintf("Batcher.Submit(%s, %v)", mem, s)
	case x == 11:
		other := fmt.Sprintf("m%d", rng.IntN(10))
		require.NoError(t, w.SubmitMany(ctx, map[string]float64{mem: s, other: float64(rng.IntN(10))}))
		return "SubmitMany"
	case x == 12:
		require.NoError(t, w.Remove(ctx, mem))
		return "Remove(" + mem + ")"
	case x == 13:
		_, err := w.RemoveBetween(ctx, s, s+1, daily)
		require.NoError(t, err)
		return fmt.Sprintf("RemoveBetween(%v, daily)", s)
	case x == 14:
		_, err := w.RemoveBetween(ctx, s, s)
		require.NoError(t, err)
		return fmt.Sprintf("RemoveBetween(%v)", s)
	case x == 15:
		require.NoError(t, w.Reset(ctx, daily))
		return "Reset(daily)"
	case x == 16:
		require.NoError(t, w.SetData(ctx, mem, "d"))
		return "SetData"
	case x == 17:
		m.clock.Set(m.clock.Now().Add(24 * time.Hour))
		return "a day later"
	case x == 18 && rng.IntN(2) == 0:
		_, err := w.Submit(ctx, mem, s, lb.WithTime(m.clock.Now().Add(-24*time.Hour)))
		require.NoError(t, err)
		return fmt.Sprintf("Submit(%s, %v) a day before", mem, s)
	case x == 18 && m.store:
		_, err := w.Rebuild(ctx)
		require.NoError(t, err)
		return "Rebuild"
	case x == 18 && rng.IntN(4) == 0:
		require.NoError(t, w.Delete(ctx))
		return "Delete"
	}
	// Reads that build mirrors and snapshots.
	for _, q := range [][]lb.Query{nil, {daily}} {
		_, err := w.Top(ctx, m.k, q...)
		require.NoError(t, err)
	}
	return "Top"
}

// check requires every hot reader's reads of both windows to be the
// plain board's.
func (m *hotModel) check(ctx context.Context, what string) {
	t := m.t
	daily := lb.In(lb.Daily())
	for _, q := range [][]lb.Query{nil, {daily}, {daily, lb.At(m.clock.Now().Add(-24 * time.Hour))}} {
		want := m.reads(ctx, m.plain, q)
		for i, r := range []*lb.Leaderboard{m.a, m.o, m.fresh} {
			require.Equal(t, want, m.reads(ctx, r, q), "%s: reader %d, window %d", what, i, len(q))
		}
	}
}

func (m *hotModel) reads(ctx context.Context, board *lb.Leaderboard, q []lb.Query) []any {
	t := m.t
	var out []any
	for _, n := range []int{1, m.k, min(m.k+1, lb.MaxN)} {
		es, err := board.Top(ctx, n, q...)
		require.NoError(t, err)
		out = append(out, es)
	}
	es, err := board.Range(ctx, 1, int64(m.k), q...)
	require.NoError(t, err)
	p, err := board.Page(ctx, 1, m.k, q...)
	require.NoError(t, err)
	return append(out, es, p)
}

// TestHotTopOneCallFails: every kind of write, with each one of its calls
// failing in turn (not sent, or sent and its reply lost), leaves the
// mirror as the board stands once it returns, or gone: with one call
// failing, the upkeep of the mirror that follows it (a delete in one more
// round trip, see hotLost) goes through, so no stale top may be left to
// expire. Either process and a third that never wrote read what the
// board without WithHotTop reads.
func TestHotTopOneCallFails(t *testing.T) {
	// Each kind of board under KeepBest on some backends and Accumulate on
	// the others, in turn (the suite's time): both policies' writes on
	// each kind and each backend.
	turn := 0
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		policy := []lb.Policy{lb.KeepBest, lb.Accumulate}[(turn+turn/len(hotKinds))%2]
		turn++
		t.Run(fmt.Sprint(policy), func(t *testing.T) { runHotOneCallFails(t, b, append(slices.Clone(kind), lb.WithPolicy(policy))) })
	})
}

func runHotOneCallFails(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	ctx := context.Background()
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	for _, w := range hotFaultWrites() {
		for i := int64(1); i <= 24; i++ { // a sharded Rebuild takes thousands: its first 12

			name := shardName(t, b)
			fc := &faultClient{Client: b.Client}
			opts := append([]lb.Option{lb.WithClock(clock.Now), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithStore(newMemStore())}, kind...)
			m := &hotModel{t: t, clock: clock, k: 3}
			var err error
			m.a, err = lb.New(fc, name, append(slices.Clone(opts), lb.WithHotTop(3))...)
			require.NoError(t, err)
			m.o, err = lb.New(b.Client, name, append(slices.Clone(opts), lb.WithHotTop(3))...)
			require.NoError(t, err)
			m.fresh = m.o
			m.plain, err = lb.New(b.Client, name, opts...)
			require.NoError(t, err)
			require.NoError(t, m.o.SubmitMany(ctx, map[string]float64{"a": 10, "b": 20, "c": 30, "d": 40, "e": 50, "z": 1}))
			m.check(ctx, "before") // both processes have seen the mirror full
			fc.lost.Store(i%2 == 0)
			fc.nth.Store((i + 1) / 2)
			w.write(ctx, m.a)
			left := fc.nth.Swap(0)
			fc.lost.Store(false)
			m.check(ctx, fmt.Sprintf("%s, call %d failed (lost %v)", w.name, (i+1)/2, i%2 == 0))
			if left > 0 {
				break // the write took fewer calls
			}
		}
	}
}

type hotFaultWrite struct {
	name  string
	write func(context.Context, *lb.Leaderboard)
}

// hotFaultWrites are the writes of TestHotTopOneCallFails; each may fail.
func hotFaultWrites() []hotFaultWrite {
	daily := lb.In(lb.Daily())
	return []hotFaultWrite{
		{"Submit into the top", func(ctx context.Context, b *lb.Leaderboard) { _, _ = b.Submit(ctx, "x", 100) }},
		{"Submit from below into the top", func(ctx context.Context, b *lb.Leaderboard) { _, _ = b.Submit(ctx, "z", 45) }},
		{"Submit of the best out of it", func(ctx context.Context, b *lb.Leaderboard) { _, _ = b.Submit(ctx, "e", -100) }},
		{"Set", func(ctx context.Context, b *lb.Leaderboard) { _ = b.Set(ctx, "e", 0) }},
		{"Set daily", func(ctx context.Context, b *lb.Leaderboard) { _ = b.Set(ctx, "z", 99, daily) }},
		{"SubmitMany", func(ctx context.Context, b *lb.Leaderboard) {
			_ = b.SubmitMany(ctx, map[string]float64{"z": 60, "y": 2})
		}},
		{"Remove", func(ctx context.Context, b *lb.Leaderboard) { _ = b.Remove(ctx, "e") }},
		{"RemoveBetween", func(ctx context.Context, b *lb.Leaderboard) { _, _ = b.RemoveBetween(ctx, 35, 55) }},
		{"Reset", func(ctx context.Context, b *lb.Leaderboard) { _ = b.Reset(ctx) }},
		{"Delete", func(ctx context.Context, b *lb.Leaderboard) { _ = b.Delete(ctx) }},
		{"Rebuild", func(ctx context.Context, b *lb.Leaderboard) { _, _ = b.Rebuild(ctx) }},
		{"Batcher", func(ctx context.Context, b *lb.Leaderboard) {
			bt, err := b.NewBatcher(lb.WithBatchWindow(time.Millisecond))
			if err != nil {
				panic(err)
			}
			_, _ = bt.Submit(ctx, "z", 70)
			_ = bt.Close(ctx)
		}},
	}
}

// TestHotTopModelCached is TestHotTopModel with clients that track keys
// (rueidis's cache, on the real Redis and the Cluster): each process's
// reads come from its memory, and show every write within moments (Redis
// invalidates a copy after the write's reply), never the mirror's 10
// seconds later.
func TestHotTopModelCached(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		if b.Mini != nil {
			return // miniredis does not track keys: TestHotTopModel
		}
		base := time.Now().UTC().Truncate(time.Second)
		for i, kind := range hotModelKinds(t, base.AddDate(0, 0, -3)) {
			t.Run(kind.name, func(t *testing.T) { runHotModelCached(t, b, kind.opts, 3, uint64(i)) })
		}
	})
}

func runHotModelCached(t *testing.T, b *testredis.Backend, kind []lb.Option, k int, seed uint64) {
	ctx := context.Background()
	m := newHotModel(t, b, b.Caching(t), kind, k)
	clock := m.clock
	rng := rand.New(rand.NewPCG(seed, 99))
	for step := range 50 {
		what := m.step(ctx, rng)
		clock.Set(clock.Now().Add(time.Second))
		m.eventually(ctx, fmt.Sprintf("step %d: %s", step, what))
	}
}

// eventually is check, allowing each reader a second for invalidations
// to arrive.
func (m *hotModel) eventually(ctx context.Context, what string) {
	daily := lb.In(lb.Daily())
	for _, q := range [][]lb.Query{nil, {daily}, {daily, lb.At(m.clock.Now().Add(-24 * time.Hour))}} {
		want := m.reads(ctx, m.plain, q)
		for i, r := range []*lb.Leaderboard{m.a, m.o, m.fresh} {
			deadline := time.Now().Add(time.Second)
			got := m.reads(ctx, r, q)
			for !reflect.DeepEqual(want, got) && time.Now().Before(deadline) {
				time.Sleep(2 * time.Millisecond)
				got = m.reads(ctx, r, q)
			}
			require.Equal(m.t, want, got, "%s: reader %d, window %d", what, i, len(q))
		}
	}
}

// TestHotTopConcurrentCached: processes that track keys write and read
// one board at once (every kind of write, and reads that build mirrors);
// once they stop, each one's cached top shows the board within a second,
// round after round: no rewrite read before a write lands after it, and
// no write that reached the top is left out of the mirror.
func TestHotTopConcurrentCached(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for i, kind := range hotModelKinds(t, time.Now().AddDate(0, 0, -3)) {
			if strings.Contains(kind.name, "store") {
				continue
			}
			t.Run(kind.name, func(t *testing.T) { runHotConcurrentCached(t, b, kind.opts, uint64(i)) })
		}
	})
}

func runHotConcurrentCached(t *testing.T, b *testredis.Backend, kind []lb.Option, seed uint64) {
	ctx := context.Background()
	name := shardName(t, b)
	clock := &testClock{now: time.Now().UTC().Truncate(time.Second)}
	opts := append([]lb.Option{lb.WithClock(clock.Now), lb.WithWindows(lb.AllTime(), lb.Daily())}, kind...)
	const procs, k = 4, 3
	m := &hotModel{t: t, clock: clock, k: k}
	var boards []*lb.Leaderboard
	for range procs {
		c := b.Caching(t)
		if c == nil {
			c = b.Client
		}
		board, err := lb.New(c, name, append(slices.Clone(opts), lb.WithHotTop(k))...)
		require.NoError(t, err)
		boards = append(boards, board)
	}
	var err error
	m.plain, err = lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	for round := range 6 {
		var wg sync.WaitGroup
		for p, board := range boards {
			rng := rand.New(rand.NewPCG(seed, uint64(round*procs+p)))
			wg.Go(func() {
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
				if err != nil {
					panic(err)
				}
				defer func() { _ = bt.Close(ctx) }()
				w := &hotModel{t: t, clock: clock, k: k, a: board, o: board, bt: bt}
				for range 25 {
					w.concurrentStep(ctx, rng)
				}
			})
		}
		wg.Wait()
		for i, board := range boards {
			m.a, m.o, m.fresh = board, board, board
			m.eventually(ctx, fmt.Sprintf("round %d, process %d", round, i))
		}
	}
}

// concurrentStep is step without the steps that fail t from another
// goroutine or move the clock: errors are left to the reads after.
func (m *hotModel) concurrentStep(ctx context.Context, rng *rand.Rand) {
	mem := fmt.Sprintf("m%d", rng.IntN(10))
	s := float64(rng.IntN(10))
	daily := lb.In(lb.Daily())
	switch x := rng.IntN(16); {
	case x < 6:
		_, _ = m.a.Submit(ctx, mem, s)
	case x < 8:
		_ = m.a.Set(ctx, mem, s, daily)
	case x < 10:
		_, _ = m.bt.Submit(ctx, mem, s)
	case x == 10:
		_ = m.a.SubmitMany(ctx, map[string]float64{mem: s, "m9": float64(rng.IntN(10))})
	case x == 11:
		_ = m.a.Remove(ctx, mem)
	case x == 12:
		_, _ = m.a.RemoveBetween(ctx, s, s+1, daily)
	case x == 13:
		_ = m.a.Reset(ctx, daily)
	default:
		_, _ = m.a.Top(ctx, m.k)
		_, _ = m.a.Top(ctx, m.k, daily)
	}
}
