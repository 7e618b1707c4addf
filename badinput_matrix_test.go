package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// textStore is a memStore that refuses, as pgstore does, members and ids
// that are not valid UTF-8 or hold NUL bytes.
type textStore struct{ *memStore }

func (textStore) CheckSubmission(sub lb.Submission) error {
	for what, s := range map[string]string{"member": sub.Member, "id": sub.ID} {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
			if what == "member" {
				return fmt.Errorf("%w: %s %q", lb.ErrInvalidMember, what, s)
			}
			return fmt.Errorf("%w: %s %q", lb.ErrInvalidArgument, what, s)
		}
	}
	return nil
}

// rows is everything the store holds, to prove a refused call added nothing.
func (s *memStore) rows() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(len(s.subs), s.ids, s.idFor, s.sealed, s.removed, s.corrected)
}

// badCall is one call with bad input and the sentinel it must return.
type badCall struct {
	name string
	want error
	call func(ctx context.Context) error
}

// badCalls lists bad input for every method of board; tb tells whether the
// board has the tie-break badTieBreak, store whether it has a store, sharded
// whether it has shards.
func badCalls(board *lb.Leaderboard, tb, store, sharded bool) []badCall {
	long := strings.Repeat("x", lb.MaxMemberLen+1)
	nan, inf := math.NaN(), math.Inf(1)
	unknown := lb.In(lb.Named("season", lb.Daily()))
	at := lb.At(future)
	var cs []badCall
	add := func(name string, want error, call func(ctx context.Context) error) {
		cs = append(cs, badCall{name, want, call})
	}
	submit := func(m string, s float64, o ...lb.SubmitOption) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := board.Submit(ctx, m, s, o...); return err }
	}
	for _, m := range []string{"", long} {
		add(fmt.Sprintf("Submit member %d bytes", len(m)), lb.ErrInvalidMember, submit(m, 1))
		add(fmt.Sprintf("Submit member %d bytes WithID", len(m)), lb.ErrInvalidMember, submit(m, 1, lb.WithID("id-m"), lb.WithData("d")))
		add("SubmitMany member", lb.ErrInvalidMember, func(ctx context.Context) error {
			return board.SubmitMany(ctx, map[string]float64{"new": 1, m: 1})
		})
		add("Set member", lb.ErrInvalidMember, func(ctx context.Context) error { return board.Set(ctx, m, 1) })
		add("SetData member", lb.ErrInvalidMember, func(ctx context.Context) error { return board.SetData(ctx, m, "d") })
		add("Remove member", lb.ErrInvalidMember, func(ctx context.Context) error { return board.Remove(ctx, "seed", m) })
	}
	for _, s := range []float64{nan, inf, -inf} {
		add(fmt.Sprintf("Submit %v", s), lb.ErrInvalidScore, submit("new", s, lb.WithID("id-s"), lb.WithData("d")))
		add(fmt.Sprintf("Submit seed %v", s), lb.ErrInvalidScore, submit("seed", s))
		add(fmt.Sprintf("SubmitMany %v", s), lb.ErrInvalidScore, func(ctx context.Context) error {
			return board.SubmitMany(ctx, map[string]float64{"new": 1, "new2": s})
		})
		add(fmt.Sprintf("Set %v", s), lb.ErrInvalidScore, func(ctx context.Context) error { return board.Set(ctx, "seed", s) })
		add(fmt.Sprintf("Set new %v", s), lb.ErrInvalidScore, func(ctx context.Context) error { return board.Set(ctx, "new", s) })
	}
	if tb {
		for _, s := range []float64{1001, -1001, 0.5, math.MaxFloat64} {
			add(fmt.Sprintf("Submit tb %v", s), lb.ErrPrecision, submit("new", s, lb.WithID("id-tb"), lb.WithData("d")))
			add(fmt.Sprintf("SubmitMany tb %v", s), lb.ErrPrecision, func(ctx context.Context) error {
				return board.SubmitMany(ctx, map[string]float64{"new": 1, "new2": s})
			})
			add(fmt.Sprintf("Set tb %v", s), lb.ErrPrecision, func(ctx context.Context) error { return board.Set(ctx, "new", s) })
		}
		add("Submit before epoch", lb.ErrPrecision, submit("new", 1, lb.WithTime(future.Add(-1000*time.Hour))))
	}
	for _, id := range []string{"", strings.Repeat("i", lb.MaxIDLen+1)} {
		add(fmt.Sprintf("WithID %d bytes", len(id)), lb.ErrInvalidArgument, submit("new", 1, lb.WithID(id), lb.WithData("d")))
	}
	add("WithData too long", lb.ErrInvalidArgument, submit("new", 1, lb.WithData(strings.Repeat("d", lb.MaxDataLen+1))))
	add("WithData too long seed", lb.ErrInvalidArgument, submit("seed", 99, lb.WithData(strings.Repeat("d", lb.MaxDataLen+1))))
	add("SetData too long", lb.ErrInvalidArgument, func(ctx context.Context) error {
		return board.SetData(ctx, "seed", strings.Repeat("d", lb.MaxDataLen+1))
	})
	add("nil SubmitOption", lb.ErrInvalidArgument, submit("new", 1, lb.WithData("d"), nil))
	add("WithTime zero", lb.ErrInvalidArgument, submit("new", 1, lb.WithData("d"), lb.WithTime(time.Time{})))
	add("WithTime ahead", lb.ErrInvalidArgument, submit("new", 1, lb.WithData("d"), lb.WithTime(future.Add(time.Hour))))
	for _, q := range []lb.Query{nil, unknown, at, lb.At(time.Time{})} {
		add("Set query", lb.ErrInvalidArgument, func(ctx context.Context) error { return board.Set(ctx, "new", 1, q) })
		add("Reset query", lb.ErrInvalidArgument, func(ctx context.Context) error { return board.Reset(ctx, q) })
		add("RemoveBetween query", lb.ErrInvalidArgument, func(ctx context.Context) error {
			_, err := board.RemoveBetween(ctx, -inf, inf, q)
			return err
		})
		add("Periods query", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Periods(ctx, q); return err })
	}
	for _, r := range [][2]float64{{nan, 1}, {1, nan}, {2, 1}, {inf, -inf}} {
		add("RemoveBetween range", lb.ErrInvalidArgument, func(ctx context.Context) error {
			_, err := board.RemoveBetween(ctx, r[0], r[1])
			return err
		})
	}
	for _, n := range []int{0, 1, -1, lb.MaxProposedShards + 1} {
		add(fmt.Sprintf("ProposeBounds %d", n), lb.ErrInvalidArgument, func(ctx context.Context) error {
			_, err := board.ProposeBounds(ctx, n)
			return err
		})
	}
	add("ProposeBounds nil query", lb.ErrInvalidArgument, func(ctx context.Context) error {
		_, err := board.ProposeBounds(ctx, 2, nil)
		return err
	})
	for _, o := range [][]lb.BatchOption{{nil}, {lb.WithBatchSize(0)}, {lb.WithBatchSize(lb.MaxN + 1)}, {lb.WithBatchSize(-1)},
		{lb.WithBatchWindow(0)}, {lb.WithBatchWindow(-time.Second)}, {lb.WithBatchWindow(time.Minute + 1)}} {
		add("NewBatcher option", lb.ErrInvalidArgument, func(context.Context) error { _, err := board.NewBatcher(o...); return err })
	}
	add("Sealed nil query", lb.ErrInvalidArgument, func(ctx context.Context) error { _, _, err := board.Sealed(ctx, nil); return err })
	add("Check nil query", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Check(ctx, true, nil); return err })
	add("FillShadow without shadow", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.FillShadow(ctx); return err })
	add("DropShadow without shadow", lb.ErrInvalidArgument, func(ctx context.Context) error { return board.DropShadow(ctx) })
	if !sharded {
		add("Check unsharded", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Check(ctx, true); return err })
	}
	if !store {
		add("Rebuild without store", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Rebuild(ctx); return err })
		add("Verify without store", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Verify(ctx); return err })
		add("Seal without store", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Seal(ctx, nil); return err })
		add("Sealed without store", lb.ErrInvalidArgument, func(ctx context.Context) error { _, _, err := board.Sealed(ctx); return err })
	} else {
		add("Rebuild nil option", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Rebuild(ctx, nil); return err })
		for _, m := range []string{"a\x00b", "a\xffb"} {
			add(fmt.Sprintf("Submit store member %q", m), lb.ErrInvalidMember, submit(m, 1, lb.WithData("d")))
			add(fmt.Sprintf("SubmitMany store member %q", m), lb.ErrInvalidMember, func(ctx context.Context) error {
				return board.SubmitMany(ctx, map[string]float64{"new": 1, m: 1})
			})
			add(fmt.Sprintf("Set store member %q", m), lb.ErrInvalidMember, func(ctx context.Context) error { return board.Set(ctx, m, 1) })
			add(fmt.Sprintf("SetData store member %q", m), lb.ErrInvalidMember, func(ctx context.Context) error { return board.SetData(ctx, m, "d") })
			add(fmt.Sprintf("Submit store id %q", m), lb.ErrInvalidArgument, submit("new", 1, lb.WithID(m), lb.WithData("d")))
		}
	}
	return append(cs, badReads(board)...)
}

// badBatched lists bad input for a Batcher's Submit, as badCalls does for
// the board's.
func badBatched(bt *lb.Batcher, tb, store bool) []badCall {
	var cs []badCall
	add := func(name string, want error, m string, s float64, o ...lb.SubmitOption) {
		cs = append(cs, badCall{"Batcher " + name, want, func(ctx context.Context) error {
			_, err := bt.Submit(ctx, m, s, o...)
			return err
		}})
	}
	for _, m := range []string{"", strings.Repeat("x", lb.MaxMemberLen+1)} {
		add("member", lb.ErrInvalidMember, m, 1, lb.WithData("d"))
	}
	for _, s := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		add("score", lb.ErrInvalidScore, "new", s, lb.WithID("b"), lb.WithData("d"))
	}
	add("id", lb.ErrInvalidArgument, "new", 1, lb.WithID(""), lb.WithData("d"))
	add("data", lb.ErrInvalidArgument, "new", 1, lb.WithData(strings.Repeat("d", lb.MaxDataLen+1)))
	add("nil option", lb.ErrInvalidArgument, "new", 1, lb.WithData("d"), nil)
	add("time", lb.ErrInvalidArgument, "new", 1, lb.WithTime(future.Add(time.Hour)))
	add("zero time", lb.ErrInvalidArgument, "new", 1, lb.WithTime(time.Time{}))
	if tb {
		add("beyond MaxScore", lb.ErrPrecision, "new", 1001, lb.WithData("d"))
		add("beyond MaxScore WithID", lb.ErrPrecision, "new", 1001, lb.WithID("b"))
		add("fraction", lb.ErrPrecision, "new", 0.5)
	}
	if store {
		add("member NUL", lb.ErrInvalidMember, "a\x00", 1, lb.WithData("d"))
		add("id not UTF-8", lb.ErrInvalidArgument, "new", 1, lb.WithID("\xff"))
	}
	return cs
}

// badReads lists bad input for every read.
func badReads(board *lb.Leaderboard) []badCall {
	long := strings.Repeat("x", lb.MaxMemberLen+1)
	nan, inf := math.NaN(), math.Inf(1)
	var cs []badCall
	add := func(name string, want error, call func(ctx context.Context) error) {
		cs = append(cs, badCall{name, want, call})
	}
	for _, m := range []string{"", long} {
		add("Rank member", lb.ErrInvalidMember, func(ctx context.Context) error { _, err := board.Rank(ctx, m); return err })
		add("Around member", lb.ErrInvalidMember, func(ctx context.Context) error { _, err := board.Around(ctx, m, 1); return err })
		add("Among member", lb.ErrInvalidMember, func(ctx context.Context) error { _, err := board.Among(ctx, []string{"seed", m}); return err })
		add("Ranks member", lb.ErrInvalidMember, func(ctx context.Context) error { _, err := board.Ranks(ctx, []string{"seed", m}); return err })
	}
	for _, n := range []int{0, -1, lb.MaxN + 1} {
		add("Top n", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Top(ctx, n); return err })
		add("Page size", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Page(ctx, 1, n); return err })
		add("Between n", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Between(ctx, 0, 1, n); return err })
	}
	for _, n := range []int{0, -1, math.MinInt} {
		add("Page number", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Page(ctx, n, 1); return err })
	}
	for _, r := range []int{-1, lb.MaxRadius + 1, math.MinInt, math.MaxInt} {
		add("Around radius", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Around(ctx, "seed", r); return err })
		add("AroundScore radius", lb.ErrInvalidArgument, func(ctx context.Context) error { _, _, err := board.AroundScore(ctx, 1, r); return err })
	}
	for _, x := range []float64{nan, inf, -inf} {
		add("AroundScore score", lb.ErrInvalidArgument, func(ctx context.Context) error { _, _, err := board.AroundScore(ctx, x, 1); return err })
	}
	for _, pct := range []float64{0, -1, 100.000001, nan, inf, -inf} {
		add("Cutoff", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Cutoff(ctx, pct); return err })
	}
	for _, fr := range [][2]int64{{0, 5}, {-1, 5}, {5, 4}, {1, lb.MaxN + 1}, {math.MinInt64, math.MaxInt64}} {
		add("Range", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Range(ctx, fr[0], fr[1]); return err })
	}
	for _, r := range [][2]float64{{nan, 1}, {1, nan}, {2, 1}, {inf, -inf}} {
		add("Between range", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Between(ctx, r[0], r[1], 5); return err })
		add("CountBetween range", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.CountBetween(ctx, r[0], r[1]); return err })
	}
	add("Among too many", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Among(ctx, make([]string, lb.MaxN+1)); return err })
	add("Ranks none", lb.ErrInvalidArgument, func(ctx context.Context) error { _, err := board.Ranks(ctx, nil); return err })
	for _, q := range []lb.Query{nil, lb.In(lb.Named("season", lb.Daily())), lb.At(time.Time{}), lb.In(nil)} {
		for name, read := range map[string]func(ctx context.Context) error{
			"Top":          func(ctx context.Context) error { _, err := board.Top(ctx, 1, q); return err },
			"Page":         func(ctx context.Context) error { _, err := board.Page(ctx, 1, 1, q); return err },
			"Rank":         func(ctx context.Context) error { _, err := board.Rank(ctx, "seed", q); return err },
			"Around":       func(ctx context.Context) error { _, err := board.Around(ctx, "seed", 1, q); return err },
			"Among":        func(ctx context.Context) error { _, err := board.Among(ctx, []string{"seed"}, q); return err },
			"Ranks":        func(ctx context.Context) error { _, err := board.Ranks(ctx, []string{"seed"}, q); return err },
			"Range":        func(ctx context.Context) error { _, err := board.Range(ctx, 1, 2, q); return err },
			"Between":      func(ctx context.Context) error { _, err := board.Between(ctx, 0, 1, 1, q); return err },
			"CountBetween": func(ctx context.Context) error { _, err := board.CountBetween(ctx, 0, 1, q); return err },
			"AroundScore":  func(ctx context.Context) error { _, _, err := board.AroundScore(ctx, 1, 1, q); return err },
			"Cutoff":       func(ctx context.Context) error { _, err := board.Cutoff(ctx, 50, q); return err },
			"Count":        func(ctx context.Context) error { _, err := board.Count(ctx, q); return err },
			"All": func(ctx context.Context) error {
				for _, err := range board.All(ctx, q) {
					return err
				}
				return nil
			},
		} {
			add(name+" query", lb.ErrInvalidArgument, read)
		}
	}
	return cs
}

// TestBadInputMatrix runs every kind of bad input against every method on
// plain and sharded boards, with and without a store, with a tie-break or
// a top mirror (WithHotTop), on
// every backend: each returns its sentinel, panics not, and writes nothing
// to Redis or to the store.
func TestBadInputMatrix(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			for _, store := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					t.Run(fmt.Sprintf("sharded=%v/store=%v/tb=%v", sharded, store, tb), func(t *testing.T) {
						runBadInputMatrix(t, b, sharded, store, tb)
					})
				}
			}
		}
	})
}

func runBadInputMatrix(t *testing.T, b *testredis.Backend, sharded, store, tb bool) {
	ctx := context.Background()
	name := shardName(t, b)
	opts := []lb.Option{lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)), lb.WithPolicy(lb.Accumulate)}
	if sharded {
		opts = append(opts, lb.WithShards(0, 3))
	}
	mem := newMemStore()
	if store {
		opts = append(opts, lb.WithStore(textStore{mem}))
	}
	if tb {
		t, err := lb.EarlierFirst(lb.TimeOrder{Epoch: future.Add(-100 * time.Hour), Resolution: time.Second, MaxScore: 1000})
		if err != nil {
			panic(err)
		}
		opts = append(opts, lb.WithTieBreak(t))
	} else {
		opts = append(opts, lb.WithHotTop(5)) // reads that write the top mirror
	}
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	_, err = board.Submit(ctx, "seed", 10, lb.WithData("Seed"), lb.WithID("seed-id"))
	require.NoError(t, err)
	before, rows := b.Snapshot(t, name), mem.rows()
	bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	defer func() { require.NoError(t, bt.Close(ctx)) }()
	calls := append(badCalls(board, tb, store, sharded), badBatched(bt, tb, store)...)
	// Bad input is found before the ctx is looked at: a call whose ctx
	// has ended too still gets its sentinel.
	ended, cancel := context.WithCancel(ctx)
	cancel()
	for _, c := range calls {
		for _, cctx := range []context.Context{ctx, ended} {
			var err error
			require.NotPanics(t, func() { err = c.call(cctx) }, c.name)
			require.ErrorIs(t, err, c.want, "%s (ctx ended: %v)", c.name, cctx.Err() != nil)
			require.Equal(t, before, b.Snapshot(t, name), "%s wrote to Redis", c.name)
			require.Equal(t, rows, mem.rows(), "%s wrote to the store", c.name)
		}
	}
	// Not ranked: ErrNotRanked, never rueidis.Nil (which a caller might
	// take for something else), on every kind of board.
	yesterday := []lb.Query{lb.In(lb.Daily()), lb.At(future.Add(-24 * time.Hour))}
	for what, read := range map[string]func() error{
		"Rank":         func() error { _, err := board.Rank(ctx, "nobody"); return err },
		"Around":       func() error { _, err := board.Around(ctx, "nobody", 2); return err },
		"Rank data":    func() error { _, err := board.Rank(ctx, "nobody", lb.IncludeData()); return err },
		"Around data":  func() error { _, err := board.Around(ctx, "nobody", 2, lb.IncludeData()); return err },
		"Cutoff empty": func() error { _, err := board.Cutoff(ctx, 50, yesterday...); return err },
		"Rank empty":   func() error { _, err := board.Rank(ctx, "seed", yesterday...); return err },
	} {
		err := read()
		require.ErrorIs(t, err, lb.ErrNotRanked, what)
		require.False(t, errors.Is(err, rueidis.Nil), "%s: %v", what, err)
	}
	require.Equal(t, before, b.Snapshot(t, name), "reads of members not ranked wrote to Redis")
	// A context that has ended: an error matching its cause, and nothing
	// written, whatever else the call holds.
	for _, c := range endedCalls(board, store) {
		var err error
		require.NotPanics(t, func() { err = c.call(ended) }, c.name)
		require.True(t, errors.Is(err, context.Canceled), "%s: %v", c.name, err)
		assert.False(t, errors.Is(err, lb.ErrPending), "%s: %v", c.name, err)
		require.Equal(t, before, b.Snapshot(t, name), "%s with an ended context wrote to Redis", c.name)
		if !assert.Equal(t, rows, mem.rows(), "%s with an ended context wrote to the store: %v", c.name, err) {
			rows = mem.rows()
		}
	}
	// The edges themselves are good input.
	edge := strings.Repeat("m", lb.MaxMemberLen)
	data := strings.Repeat("d", lb.MaxDataLen)
	_, err = board.Submit(ctx, edge, 1, lb.WithID(strings.Repeat("i", lb.MaxIDLen)), lb.WithData(data), lb.WithTime(future.Add(time.Second)))
	require.NoError(t, err)
	_, err = bt.Submit(ctx, edge, 2, lb.WithID(strings.Repeat("j", lb.MaxIDLen)))
	require.NoError(t, err)
	require.NoError(t, board.SetData(ctx, edge, data))
	st, err := board.Rank(ctx, edge, lb.IncludeData())
	require.NoError(t, err)
	require.Equal(t, data, st.Data)
	require.Equal(t, 3.0, st.Score)
}

// endedCalls are good writes, to run with a context that has ended.
func endedCalls(board *lb.Leaderboard, store bool) []badCall {
	cs := []badCall{
		{"Submit", nil, func(ctx context.Context) error { _, err := board.Submit(ctx, "new", 1, lb.WithData("d")); return err }},
		{"Submit WithID", nil, func(ctx context.Context) error { _, err := board.Submit(ctx, "new", 1, lb.WithID("x")); return err }},
		{"SubmitMany", nil, func(ctx context.Context) error { return board.SubmitMany(ctx, map[string]float64{"new": 1}) }},
		{"Set", nil, func(ctx context.Context) error { return board.Set(ctx, "new", 1) }},
		{"SetData", nil, func(ctx context.Context) error { return board.SetData(ctx, "seed", "x") }},
		{"Remove", nil, func(ctx context.Context) error { return board.Remove(ctx, "seed") }},
		{"RemoveBetween", nil, func(ctx context.Context) error { _, err := board.RemoveBetween(ctx, 0, 100); return err }},
		{"Reset", nil, func(ctx context.Context) error { return board.Reset(ctx) }},
		{"Delete", nil, func(ctx context.Context) error { return board.Delete(ctx) }},
		{"Batcher", nil, func(ctx context.Context) error {
			bt, err := board.NewBatcher()
			if err != nil {
				return err
			}
			defer bt.Close(context.Background())
			_, err = bt.Submit(ctx, "new", 1)
			return err
		}},
	}
	if store {
		cs = append(cs,
			badCall{"Rebuild", nil, func(ctx context.Context) error { _, err := board.Rebuild(ctx); return err }},
			badCall{"Seal", nil, func(ctx context.Context) error { _, err := board.Seal(ctx, nil); return err }})
	}
	return cs
}

// TestTotalsRedisRefusesWriteNothing: an Accumulate total that only Redis
// finds out of range (overflowing float64, or beyond a tie-break's
// MaxScore) is refused with its sentinel and leaves Redis and the store as
// they were, on sharded boards too (whose Cluster writes take two steps),
// through Submit, SubmitMany and a Batcher.
func TestTotalsRedisRefusesWriteNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, store := range []bool{false, true} {
					t.Run(fmt.Sprintf("sharded=%v/tb=%v/store=%v", sharded, tb, store), func(t *testing.T) {
						runTotalsRefused(t, b, sharded, tb, store)
					})
				}
			}
		}
	})
}

func runTotalsRefused(t *testing.T, b *testredis.Backend, sharded, tb, store bool) {
	ctx := context.Background()
	name := shardName(t, b)
	opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future))}
	big, want := math.MaxFloat64, lb.ErrInvalidScore
	if sharded {
		opts = append(opts, lb.WithShards(-1, 1))
	}
	if tb {
		order, err := lb.LaterFirst(lb.TimeOrder{Epoch: future.Add(-100 * time.Hour), Resolution: time.Second, MaxScore: 1000})
		require.NoError(t, err)
		opts = append(opts, lb.WithTieBreak(order))
		big, want = 1000, lb.ErrPrecision
	}
	mem := newMemStore()
	if store {
		opts = append(opts, lb.WithStore(mem))
	}
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"hi": big, "lo": -big, "mid": 0}))
	// Only the all-time total of "old" can overflow: its day has closed,
	// and today's board does not hold it.
	_, err = board.Submit(ctx, "old", big, lb.WithTime(future.Add(-48*time.Hour)))
	require.NoError(t, err)
	bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	defer func() { require.NoError(t, bt.Close(ctx)) }()
	before, rows := b.Snapshot(t, name), mem.rows()
	for what, call := range map[string]func() error{
		"Submit up":       func() error { _, err := board.Submit(ctx, "hi", big, lb.WithData("d")); return err },
		"Submit down":     func() error { _, err := board.Submit(ctx, "lo", -big, lb.WithID("x")); return err },
		"SubmitMany":      func() error { return board.SubmitMany(ctx, map[string]float64{"mid": 1, "new": -1, "hi": big}) },
		"SubmitMany lo":   func() error { return board.SubmitMany(ctx, map[string]float64{"mid": 1, "lo": -big}) },
		"Batcher":         func() error { _, err := bt.Submit(ctx, "hi", big, lb.WithData("d")); return err },
		"Batcher WithID":  func() error { _, err := bt.Submit(ctx, "lo", -big, lb.WithID("y")); return err },
		"Submit crossing": func() error { _, err := board.Submit(ctx, "lo", 2*big, lb.WithData("d")); return err },
		"Submit old":      func() error { _, err := board.Submit(ctx, "old", big, lb.WithData("d")); return err },
		"SubmitMany old":  func() error { return board.SubmitMany(ctx, map[string]float64{"old": big, "new": 1}) },
		"Batcher old":     func() error { _, err := bt.Submit(ctx, "old", big); return err },
	} {
		err := call()
		if what == "Submit crossing" {
			if tb {
				require.ErrorIs(t, err, lb.ErrPrecision, what) // 2*MaxScore, refused before Redis
			} else {
				require.ErrorIs(t, err, lb.ErrInvalidScore, what)
			}
		} else {
			require.ErrorIs(t, err, want, what)
		}
		require.Equal(t, before, b.Snapshot(t, name), "%s wrote to Redis", what)
		require.Equal(t, rows, mem.rows(), "%s wrote to the store", what)
	}
}
