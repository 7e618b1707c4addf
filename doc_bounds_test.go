package leaderboard_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestOptionRangesAtTheirEdges holds New and NewBatcher to the ranges the
// options' doc comments state, at both edges: the last value inside is
// taken, the first outside refused with ErrInvalidArgument (and New makes
// no call to Redis either way).
func TestOptionRangesAtTheirEdges(t *testing.T) {
	b := testredis.Mini(t)
	name200 := strings.Repeat("n", 200)
	type edge struct {
		what    string
		in, out []lb.Option
	}
	for _, e := range []edge{
		{"WithHotTop 1..MaxN low", []lb.Option{lb.WithHotTop(1)}, []lb.Option{lb.WithHotTop(0)}},
		{"WithHotTop 1..MaxN high", []lb.Option{lb.WithHotTop(lb.MaxN)}, []lb.Option{lb.WithHotTop(lb.MaxN + 1)}},
		{"WithDedupeWindow >= 1ms", []lb.Option{lb.WithDedupeWindow(time.Millisecond)}, []lb.Option{lb.WithDedupeWindow(time.Millisecond - 1)}},
		{"WithDedupeWindow positive", []lb.Option{lb.WithDedupeWindow(time.Millisecond)}, []lb.Option{lb.WithDedupeWindow(0)}},
		{"WithClockSkew >= 0", []lb.Option{lb.WithClockSkew(0)}, []lb.Option{lb.WithClockSkew(-1)}},
		{"WithRetention >= 0", []lb.Option{lb.WithRetention(0)}, []lb.Option{lb.WithRetention(-1)}},
		{"WithKeyPrefix <= 200 bytes", []lb.Option{lb.WithKeyPrefix(name200)}, []lb.Option{lb.WithKeyPrefix(name200 + "x")}},
		{"WithKeyPrefix non-empty", []lb.Option{lb.WithKeyPrefix("p")}, []lb.Option{lb.WithKeyPrefix("")}},
		{"WithKeyPrefix no whitespace", []lb.Option{lb.WithKeyPrefix("a:b")}, []lb.Option{lb.WithKeyPrefix("a\u00a0b")}},
		{"WithKeyPrefix no braces", []lb.Option{lb.WithKeyPrefix("a#b")}, []lb.Option{lb.WithKeyPrefix("a}b")}},
		{"WithWindows at least one", []lb.Option{lb.WithWindows(lb.Daily())}, []lb.Option{lb.WithWindows()}},
		{"window name <= 200 bytes", []lb.Option{lb.WithWindows(lb.Named(name200, lb.Daily()))}, []lb.Option{lb.WithWindows(lb.Named(name200+"w", lb.Daily()))}},
		{"window name without ':'", []lb.Option{lb.WithWindows(lb.Named("a-b", lb.Daily()))}, []lb.Option{lb.WithWindows(lb.Named("a:b", lb.Daily()))}},
		{"window name not marker", []lb.Option{lb.WithWindows(lb.Named("markers", lb.Daily()))}, []lb.Option{lb.WithWindows(lb.Named("marker", lb.Daily()))}},
		{"window name not clock", []lb.Option{lb.WithWindows(lb.Named("clocks", lb.Daily()))}, []lb.Option{lb.WithWindows(lb.AllTime(), lb.Named("clock", lb.Daily()))}},
		{"WithStore non-nil", []lb.Option{lb.WithStore(newMemStore())}, []lb.Option{lb.WithStore((*memStore)(nil))}},
		{"WithShards ascending", []lb.Option{lb.WithShards(1, 1.0000000000000002)}, []lb.Option{lb.WithShards(1.0000000000000002, 1)}},
		{"WithShadowShards beside WithShards", []lb.Option{lb.WithShards(1), lb.WithShadowShards(2)}, []lb.Option{lb.WithShadowShards(2)}},
		{"WithShadowShards other bounds", []lb.Option{lb.WithShards(1), lb.WithShadowShards(1, 2)}, []lb.Option{lb.WithShards(1, 2), lb.WithShadowShards(1, 2)}},
		{"WithShadowShards some bounds", []lb.Option{lb.WithShards(1), lb.WithShadowShards(2)}, []lb.Option{lb.WithShards(1), lb.WithShadowShards()}},
		{"WithOrder known", []lb.Option{lb.WithOrder(lb.LowestFirst)}, []lb.Option{lb.WithOrder(lb.LowestFirst + 1)}},
		{"WithPolicy known", []lb.Option{lb.WithPolicy(lb.Accumulate)}, []lb.Option{lb.WithPolicy(lb.Accumulate + 1)}},
		{"WithRanking known", []lb.Option{lb.WithRanking(lb.Competition)}, []lb.Option{lb.WithRanking(lb.Competition + 1)}},
		{"WithClock non-nil", []lb.Option{lb.WithClock(time.Now)}, []lb.Option{lb.WithClock(nil)}},
	} {
		calls := b.Client.Calls()
		takenByNew(t, b, e.what+" (inside)", e.in...)
		require.Equal(t, calls, b.Client.Calls(), "%s: New makes no call to Redis", e.what)
		refusedByNew(t, b, e.what+" (outside)", e.out...)
	}
	// WithTieBreak's default is nil: passing nil is the default, taken.
	takenByNew(t, b, "WithTieBreak(nil)", lb.WithTieBreak(nil))
	// New's name: at most 200 bytes.
	_, err := lb.New(b.Client, name200)
	require.NoError(t, err)
	_, err = lb.New(b.Client, name200+"n")
	require.ErrorIs(t, err, lb.ErrInvalidArgument)

	board, err := lb.New(b.Client, b.BoardName(t))
	require.NoError(t, err)
	for _, e := range []struct {
		what    string
		in, out lb.BatchOption
	}{
		{"WithBatchWindow > 0", lb.WithBatchWindow(time.Nanosecond), lb.WithBatchWindow(0)},
		{"WithBatchWindow <= 1 minute", lb.WithBatchWindow(time.Minute), lb.WithBatchWindow(time.Minute + time.Nanosecond)},
		{"WithBatchSize >= 1", lb.WithBatchSize(1), lb.WithBatchSize(0)},
		{"WithBatchSize <= MaxN", lb.WithBatchSize(lb.MaxN), lb.WithBatchSize(lb.MaxN + 1)},
	} {
		bt, err := board.NewBatcher(e.in)
		require.NoError(t, err, e.what)
		require.NoError(t, bt.Close(context.Background()))
		_, err = board.NewBatcher(e.out)
		require.ErrorIs(t, err, lb.ErrInvalidArgument, e.what)
	}
}

// TestNilCallbacksAreNone: WithProgress(nil) and Seal's nil hook are
// documented as none at all: a Rebuild and a Seal with them run, and
// report, as without.
func TestNilCallbacksAreNone(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		clock := &testClock{now: future}
		board, _ := newBoard(t, b, lb.WithStore(newMemStore()), lb.WithWindows(lb.Daily()), lb.WithClock(clock.Now))
		_, err := board.Submit(ctx, "a", 1)
		require.NoError(t, err)
		rep, err := board.Rebuild(ctx, lb.WithProgress(nil))
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.Members)
		clock.Set(future.Add(24 * time.Hour))
		sealed, err := board.Seal(ctx, nil)
		require.NoError(t, err)
		require.Len(t, sealed, 1)
		require.Equal(t, []lb.Entry{{Member: "a", Score: 1, Rank: 1}}, sealed[0].Entries)
	})
}

// TestCallRangesAtTheirEdges holds each call to the range its doc comment
// states, at the last value inside it (taken) and the first outside it
// (refused with ErrInvalidArgument or ErrInvalidMember, writing nothing),
// on plain and sharded boards, on every backend.
func TestCallRangesAtTheirEdges(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(0, 10)}} {
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithClock(fixed(future)))...)
				require.NoError(t, err)
				for i := range 3 {
					_, err := board.Submit(ctx, fmt.Sprint("p", i), float64(i*7))
					require.NoError(t, err)
				}
				many := func(n int) []string {
					ms := make([]string, n)
					for i := range ms {
						ms[i] = fmt.Sprint("m", i)
					}
					return ms
				}
				type call func() error
				for _, e := range []struct {
					what    string
					want    error
					in, out call
				}{
					{"Top n <= MaxN", lb.ErrInvalidArgument,
						func() error { _, err := board.Top(ctx, lb.MaxN); return err },
						func() error { _, err := board.Top(ctx, lb.MaxN+1); return err }},
					{"Page size <= MaxN", lb.ErrInvalidArgument,
						func() error { _, err := board.Page(ctx, 1, lb.MaxN); return err },
						func() error { _, err := board.Page(ctx, 1, lb.MaxN+1); return err }},
					{"Around radius <= MaxRadius", lb.ErrInvalidArgument,
						func() error { _, err := board.Around(ctx, "p1", lb.MaxRadius); return err },
						func() error { _, err := board.Around(ctx, "p1", lb.MaxRadius+1); return err }},
					{"Around radius >= 0", lb.ErrInvalidArgument,
						func() error { _, err := board.Around(ctx, "p1", 0); return err },
						func() error { _, err := board.Around(ctx, "p1", -1); return err }},
					{"AroundScore radius <= MaxRadius", lb.ErrInvalidArgument,
						func() error { _, _, err := board.AroundScore(ctx, 3, lb.MaxRadius); return err },
						func() error { _, _, err := board.AroundScore(ctx, 3, lb.MaxRadius+1); return err }},
					{"Range span <= MaxN", lb.ErrInvalidArgument,
						func() error { _, err := board.Range(ctx, 2, lb.MaxN+1); return err },
						func() error { _, err := board.Range(ctx, 2, lb.MaxN+2); return err }},
					{"Range from <= to", lb.ErrInvalidArgument,
						func() error { _, err := board.Range(ctx, 5, 5); return err },
						func() error { _, err := board.Range(ctx, 5, 4); return err }},
					{"Between n <= MaxN", lb.ErrInvalidArgument,
						func() error { _, err := board.Between(ctx, 0, 0, lb.MaxN); return err },
						func() error { _, err := board.Between(ctx, 0, 0, lb.MaxN+1); return err }},
					{"Among <= MaxN members", lb.ErrInvalidArgument,
						func() error { _, err := board.Among(ctx, many(lb.MaxN)); return err },
						func() error { _, err := board.Among(ctx, many(lb.MaxN+1)); return err }},
					{"Ranks <= MaxN members", lb.ErrInvalidArgument,
						func() error { _, err := board.Ranks(ctx, many(lb.MaxN)); return err },
						func() error { _, err := board.Ranks(ctx, many(lb.MaxN+1)); return err }},
					{"Ranks >= 1 member", lb.ErrInvalidArgument,
						func() error { _, err := board.Ranks(ctx, many(1)); return err },
						func() error { _, err := board.Ranks(ctx, many(0)); return err }},
					{"Cutoff percent <= 100", lb.ErrInvalidArgument,
						func() error { _, err := board.Cutoff(ctx, 100); return err },
						func() error { _, err := board.Cutoff(ctx, 100.00000000000001); return err }},
					{"Cutoff percent > 0", lb.ErrInvalidArgument,
						func() error { _, err := board.Cutoff(ctx, 5e-324); return err },
						func() error { _, err := board.Cutoff(ctx, 0); return err }},
					{"ProposeBounds shards >= 2", lb.ErrInvalidArgument,
						func() error { _, err := board.ProposeBounds(ctx, 2); return err },
						func() error { _, err := board.ProposeBounds(ctx, 1); return err }},
					{"ProposeBounds shards <= MaxProposedShards", lb.ErrInvalidArgument,
						func() error { _, err := board.ProposeBounds(ctx, lb.MaxProposedShards); return err },
						func() error { _, err := board.ProposeBounds(ctx, lb.MaxProposedShards+1); return err }},
					{"member <= MaxMemberLen bytes", lb.ErrInvalidMember,
						func() error { _, err := board.Submit(ctx, strings.Repeat("m", lb.MaxMemberLen), 1); return err },
						func() error { _, err := board.Submit(ctx, strings.Repeat("m", lb.MaxMemberLen+1), 1); return err }},
					{"WithID <= MaxIDLen bytes", lb.ErrInvalidArgument,
						func() error {
							_, err := board.Submit(ctx, "p0", 1, lb.WithID(strings.Repeat("i", lb.MaxIDLen)))
							return err
						},
						func() error {
							_, err := board.Submit(ctx, "p0", 1, lb.WithID(strings.Repeat("j", lb.MaxIDLen+1)))
							return err
						}},
					{"WithData <= MaxDataLen bytes", lb.ErrInvalidArgument,
						func() error {
							_, err := board.Submit(ctx, "p1", 1, lb.WithData(strings.Repeat("d", lb.MaxDataLen)))
							return err
						},
						func() error {
							_, err := board.Submit(ctx, "p1", 1, lb.WithData(strings.Repeat("e", lb.MaxDataLen+1)))
							return err
						}},
					{"SetData <= MaxDataLen bytes", lb.ErrInvalidArgument,
						func() error { return board.SetData(ctx, "p2", strings.Repeat("d", lb.MaxDataLen)) },
						func() error { return board.SetData(ctx, "p2", strings.Repeat("e", lb.MaxDataLen+1)) }},
					// The default clock skew, one second: a WithTime up to it
					// after now is taken, a microsecond more refused.
					{"WithTime within the default skew", lb.ErrInvalidArgument,
						func() error { _, err := board.Submit(ctx, "p0", 1, lb.WithTime(future.Add(time.Second))); return err },
						func() error {
							_, err := board.Submit(ctx, "p0", 1, lb.WithTime(future.Add(time.Second+time.Microsecond)))
							return err
						}},
				} {
					require.NoError(t, e.in(), "%s: the last value inside", e.what)
					before := b.Snapshot(t, name)
					require.ErrorIs(t, e.out(), e.want, "%s: the first value outside", e.what)
					require.Equal(t, before, b.Snapshot(t, name), "%s: a refused call writes nothing", e.what)
				}
			})
		}
	})
}

// TestDefaultDedupeWindow: WithDedupeWindow's default is 24 hours: without
// it, Redis keeps a WithID id that long, and with it, the window given.
func TestDefaultDedupeWindow(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for want, opts := range map[time.Duration][]lb.Option{24 * time.Hour: nil, time.Hour: {lb.WithDedupeWindow(time.Hour)}} {
			board, name := newBoard(t, b, opts...)
			_, err := board.Submit(ctx, "a", 1, lb.WithID("match"))
			require.NoError(t, err)
			c := b.Client.Client
			ttl, err := c.Do(ctx, c.B().Pttl().Key(keys.NewBoard("lb", name).IDs()).Build()).AsInt64()
			require.NoError(t, err)
			require.LessOrEqual(t, ttl, want.Milliseconds())
			require.Greater(t, ttl, (want - time.Minute).Milliseconds())
		}
	})
}

// TestDefaultBatchWindow: a Batcher's default window is 100 ms: a lone
// submission waits that long for company before its batch is sent (and not
// the most a window may be, a minute).
func TestDefaultBatchWindow(t *testing.T) {
	b := testredis.Mini(t)
	board, _ := newBoard(t, b)
	bt, err := board.NewBatcher()
	require.NoError(t, err)
	defer func() { require.NoError(t, bt.Close(context.Background())) }()
	start := time.Now()
	_, err = bt.Submit(context.Background(), "a", 1)
	require.NoError(t, err)
	took := time.Since(start)
	require.GreaterOrEqual(t, took, 100*time.Millisecond)
	require.Less(t, took, 10*time.Second)
}

// TestTieBreakHorizonTable holds TieBreak's doc table of horizons to the
// constructors: each row's horizon (to the figure's precision), and the
// rows it marks refused are refused with ErrPrecision.
func TestTieBreakHorizonTable(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const day, year = 24 * time.Hour, 365.25 * 24 * time.Hour
	for _, row := range []struct {
		max      float64
		decimals int
		res      time.Duration
		horizon  time.Duration // zero: refused
		within   time.Duration
	}{
		{1e5, 0, time.Millisecond, time.Duration(2.85 * float64(year)), year / 100},
		{1e6, 0, time.Millisecond, 0, 0}, // 104 days
		{1e6, 0, time.Second, 285 * year, year},
		{1e6, 2, time.Second, time.Duration(2.85 * float64(year)), year / 100},
		{1e9, 0, time.Second, 0, 0}, // 104 days
		{1e9, 0, time.Minute, time.Duration(17.1 * float64(year)), year / 10},
		{1e12, 0, time.Hour, time.Duration(1.03 * float64(year)), year / 100},
	} {
		o := lb.TimeOrder{Epoch: epoch, Resolution: row.res, MaxScore: row.max, Decimals: row.decimals}
		tb, err := lb.EarlierFirst(o)
		if row.horizon == 0 {
			require.ErrorIs(t, err, lb.ErrPrecision, "%+v", o)
			slots := int64(1<<53) / (int64(row.max)*int64(math.Pow10(row.decimals)) + 1)
			require.InDelta(t, float64(104*day), float64(time.Duration(slots)*row.res), float64(day), "%+v: 104 days", o)
			continue
		}
		require.NoError(t, err, "%+v", o)
		require.InDelta(t, float64(row.horizon), float64(tb.Horizon().Sub(epoch)), float64(row.within), "%+v", o)
	}
}
