package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// These tests drive sharded boards (WithShards). A sharded board must answer
// every call exactly as an unsharded board with the same options fed the same
// submissions, so most of them run a workload on a pair of boards, one
// sharded and one not, and compare every answer. The unsharded board is
// checked against a Go model by model_test.go and tiebreak_board_test.go.

// shardBounds split the score axis into five shards:
// (-Inf, -2) [-2, 0) [0, 1.5) [1.5, 3) [3, +Inf).
var shardBounds = []float64{-2, 0, 1.5, 3}

// shardScores cross the bounds often, land on them exactly and tie often.
var shardScores = []float64{-5, -4, -3, -2, -1, 0, 1, 1.5, 2, 3, 4, 5, 0.5, 2.25, -1e-3}

// The boards' clock is future (fixed); submissions WithTime fall between
// shardEpoch, a day earlier, and the clock: the day before future's (shardDay0)
// or future's own. shardTimeOrder is the tie-break encoding of the tie-broken
// combos.
var (
	shardEpoch     = future.Add(-24 * time.Hour)
	shardDay0      = shardEpoch
	shardTimeOrder = lb.TimeOrder{Epoch: shardEpoch, Resolution: time.Second, MaxScore: 100, Decimals: 3}
)

// shardOf is the shard a plain score belongs to: the number of bounds <= s.
func shardOf(bounds []float64, s float64) int {
	i := 0
	for _, b := range bounds {
		if b <= s {
			i++
		}
	}
	return i
}

// shardName returns a board name like BoardName does, and also deletes the
// shards' and partitions' keys ("{name#s<i>.<layout>~<salt>}", "{name#p~<salt>}:<i>",
// which BoardName's cleanup glob misses).
func shardName(t *testing.T, b *testredis.Backend) string {
	t.Helper()
	name := b.BoardName(t)
	t.Cleanup(func() {
		ctx := context.Background()
		c := b.Client.Client
		for _, k := range b.Keys(t, "*{"+name+"#*") {
			_ = c.Do(ctx, c.B().Del().Key(k).Build()).Error()
		}
	})
	return name
}

// shardSuffix is the part of a period's key after the hash tag.
func shardSuffix(window, period string) string {
	if window == period {
		return ":" + window
	}
	return ":" + window + ":" + period
}

// shardKey is the key of shard i of board name's period sharded at bounds; the shards'
// hash tags come from keys.Board.Shards, whose spread internal/keys tests.
func shardKey(name string, bounds []float64, i int, window, period string) string {
	return keys.NewBoard("lb", name).Shards(bounds)[i].Period(window, period)
}

// partKey is the key of member's partition in board name's period.
func partKey(name, member, window, period string) string {
	return keys.NewBoard("lb", name).Partitions().Of(keys.PartitionOf(member)).Period(window, period)
}

// partitionValues reads every member's stored value from the partitions of
// board name's period, as stored.
func partitionValues(t *testing.T, b *testredis.Backend, name, window, period string) map[string]string {
	t.Helper()
	c := b.Client.Client
	out := map[string]string{}
	for _, k := range b.Keys(t, "lb:{"+name+"#p~*}:*"+shardSuffix(window, period)) {
		h, err := c.Do(context.Background(), c.B().Hgetall().Key(k).Build()).AsStrMap()
		require.NoError(t, err, "HGETALL %s", k)
		for m, v := range h {
			require.NotContains(t, out, m, "%s in two partitions", m)
			require.Equal(t, k, partKey(name, m, window, period), "%s in the wrong partition", m)
			out[m] = v
		}
	}
	return out
}

// boardKeys lists every key of a sharded board (name): shards, partitions
// and anything else under its name.
func boardKeys(t *testing.T, b *testredis.Backend, name string) []string {
	t.Helper()
	return append(b.Keys(t, "*{"+name+"}*"), b.Keys(t, "*{"+name+"#*")...)
}

func shardPlainKey(name, window, period string) string {
	return "lb:{" + name + "}" + shardSuffix(window, period)
}

// ---- 1. options ----

func TestShardedOptions(t *testing.T) {
	b := testredis.Mini(t)
	c := b.Client
	nan := math.NaN()
	refused := map[string]struct {
		name   string
		bounds []float64
	}{
		"unsorted":              {"ok", []float64{3, 1}},
		"unsorted at the end":   {"ok", []float64{-1, 2, 1.5}},
		"descending":            {"ok", []float64{5, 4, 3}},
		"duplicate":             {"ok", []float64{1, 1}},
		"duplicate in the mid":  {"ok", []float64{-2, 0, 0, 3}},
		"minus zero and zero":   {"ok", []float64{math.Copysign(0, -1), 0}},
		"zero and minus zero":   {"ok", []float64{0, math.Copysign(0, -1)}},
		"NaN":                   {"ok", []float64{nan}},
		"NaN among":             {"ok", []float64{0, nan, 2}},
		"NaN first":             {"ok", []float64{nan, 1}},
		"+Inf":                  {"ok", []float64{0, math.Inf(1)}},
		"-Inf":                  {"ok", []float64{math.Inf(-1), 0}},
		"+Inf alone":            {"ok", []float64{math.Inf(1)}},
		"hash in name":          {"a#b", []float64{1}},
		"name like a shard tag": {"race#s1", []float64{1}},
		"name ending in hash":   {"race#", []float64{-2, 0}},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			board, err := lb.New(c, tc.name, lb.WithShards(tc.bounds...))
			require.ErrorIs(t, err, lb.ErrInvalidArgument, "New(%q, WithShards(%v))", tc.name, tc.bounds)
			require.Nil(t, board)
		})
	}
	// An unsharded board named "race#s1" would share its keys' hash tag with
	// shard 1 of the board "race": the spec refuses '#' in any board name.
	board, err := lb.New(c, "race#s1")
	require.ErrorIs(t, err, lb.ErrInvalidArgument, "New(\"race#s1\") without shards: board names holding '#' are refused")
	require.Nil(t, board)

	ctx := context.Background()
	for _, bounds := range [][]float64{
		{1},
		{0},
		shardBounds,
		{-1e300, 1e300},
		{-math.MaxFloat64, math.MaxFloat64},
		{-math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64},
	} {
		board, err := lb.New(c, "ok", lb.WithShards(bounds...), lb.WithPolicy(lb.Accumulate), lb.WithKeyPrefix("opt"))
		require.NoError(t, err, "WithShards(%v)", bounds)
		require.NotNil(t, board)
	}

	// WithShards() is the unsharded board: its keys are the plain ones and
	// Check refuses it.
	plain, err := lb.New(c, "plain", lb.WithShards(), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
	require.NoError(t, err)
	_, err = plain.Submit(ctx, "p", 1)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"lb:{plain}:alltime", "lb:{plain}:daily:" + lb.Daily().Period(future).ID}, b.Keys(t, "*plain*"))
	reps, err := plain.Check(ctx, false)
	require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check on an unsharded board")
	require.Empty(t, reps)
	_, err = plain.Check(ctx, true)
	require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check(repair) on an unsharded board")
	unsharded, err := lb.New(c, "plain2")
	require.NoError(t, err)
	_, err = unsharded.Check(ctx, false)
	require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check on a board without WithShards")

	// Check takes the reads' queries, and refuses what they refuse.
	sharded, err := lb.New(c, "sharded", lb.WithShards(shardBounds...), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
	require.NoError(t, err)
	_, err = sharded.Check(ctx, false, lb.In(lb.Weekly()))
	require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check In a window the board does not have")
	_, err = sharded.Check(ctx, false, nil)
	require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check with a nil query")
	for _, w := range []lb.Window{nil, (*nilPtrWindow)(nil)} {
		_, err = sharded.Check(ctx, true, lb.In(w))
		require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check In(%#v)", w)
	}
	reps, err = sharded.Check(ctx, false)
	require.NoError(t, err, "Check of an empty sharded board")
	require.Len(t, reps, 2)
	for _, r := range reps {
		requireCleanReport(t, r, 0, "empty board")
	}
}

// TestShardedKeys checks the key layout the spec gives: every shard of a
// period under its own hash tag, each member's value in the partition its
// name hashes to, and on a Cluster the partitions' version clocks and the
// shards' recent versions, which expire within minutes; every other
// windowed key expires with its period.
func TestShardedKeys(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := shardName(t, b)
		board, err := lb.New(b.Client, name, lb.WithShards(shardBounds...), lb.WithWindows(lb.AllTime(), lb.Daily()),
			lb.WithClock(fixed(future)))
		require.NoError(t, err)
		// One member per shard, one of them on a bound.
		for i, s := range []float64{-3, -2, 1, 2, 4} {
			_, err := board.Submit(ctx, fmt.Sprintf("m%d", i), s)
			require.NoError(t, err)
		}
		day := lb.Daily().Period(future)
		all := lb.AllTime().Period(future).ID
		want := map[string]time.Time{} // key -> expiry (zero: none)
		dayEnd := day.End.Add(day.End.Sub(day.Start)).UTC()
		for i := range len(shardBounds) + 1 {
			want[shardKey(name, shardBounds, i, "alltime", all)] = time.Time{}
			want[shardKey(name, shardBounds, i, "daily", day.ID)] = dayEnd
			// Each member's value in its partition.
			m := fmt.Sprintf("m%d", i)
			want[partKey(name, m, "alltime", all)] = time.Time{}
			want[partKey(name, m, "daily", day.ID)] = dayEnd
		}
		got := boardKeys(t, b, name)
		for _, k := range got {
			if _, ok := want[k]; ok {
				continue
			}
			// On a Cluster, also the partition groups' version clocks and the
			// shards' recent versions, each with an expiry of its own.
			base, ok := strings.CutSuffix(k, ":clock")
			if !ok {
				base, ok = recentBase(k)
			}
			require.True(t, ok && b.Name == "cluster", "unexpected key %s (want %v)", k, keysOf(want))
			if strings.HasSuffix(k, ":clock") {
				require.Contains(t, base, "#p~", "%s beside no partition", k)
			} else {
				require.Contains(t, want, base, "%s beside no shard", k)
				require.Contains(t, base, "#s", "%s beside no shard", k)
			}
			require.Greater(t, expireTime(t, b, k), time.Now(), "%s expires", k)
			require.Less(t, expireTime(t, b, k), time.Now().Add(6*time.Minute), "%s expires within minutes", k)
		}
		for k, exp := range want {
			require.Contains(t, got, k)
			require.Equal(t, exp, expireTime(t, b, k), "expiry of %s", k)
		}
		if b.Name == "cluster" {
			// The SDK's slot arithmetic is the Cluster's.
			for k := range want {
				slot, err := b.Client.Do(ctx, b.Client.B().ClusterKeyslot().Key(k).Build()).AsInt64()
				require.NoError(t, err)
				require.Equal(t, int64(keys.Slot(k)), slot, "slot of %s", k)
			}
		}
		for i, s := range []float64{-3, -2, 1, 2, 4} {
			m := fmt.Sprintf("m%d", i)
			for _, key := range []string{shardKey(name, shardBounds, i, "alltime", all), shardKey(name, shardBounds, i, "daily", day.ID)} {
				zs := zscores(t, b, key)
				require.Equal(t, map[string]float64{m: s}, zs, "shard %d (%s) holds %s alone", i, key, m)
			}
		}

		// WithKeyPrefix moves every key, shards and partitions alike.
		other := shardName(t, b)
		board, err = lb.New(b.Client, other, lb.WithShards(0), lb.WithKeyPrefix("g:7"), lb.WithClock(fixed(future)))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "neg", -1)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "pos", 1)
		require.NoError(t, err)
		got = boardKeys(t, b, other)
		for _, k := range got {
			require.True(t, strings.HasPrefix(k, "g:7:{"+other), "key %s without the prefix", k)
		}
		for _, sh := range keys.NewBoard("g:7", other).Shards([]float64{0}) {
			require.Contains(t, got, sh.Period("alltime", "alltime"))
		}
		require.Contains(t, got, keys.NewBoard("g:7", other).Partitions().Of(keys.PartitionOf("neg")).Period("alltime", "alltime"))
		reps, err := board.Check(ctx, false)
		require.NoError(t, err)
		require.Len(t, reps, 1)
		requireCleanReport(t, reps[0], 2, "prefixed board")
		top, err := board.Top(ctx, 5)
		require.NoError(t, err)
		require.Equal(t, []lb.Entry{{Member: "pos", Score: 1, Rank: 1}, {Member: "neg", Score: -1, Rank: 2}}, top)
	})
}

// ---- helpers shared by the pair tests ----

// shardCombo is one configuration a pair of boards runs under.
type shardCombo struct {
	policy lb.Policy
	order  lb.Order
	rank   lb.RankMode
	tie    int       // 0 none, 1 EarlierFirst, 2 LaterFirst
	bounds []float64 // nil: shardBounds
	shadow []float64 // WithShadowShards; nil: none
	seed   uint64
	on     string // the backends it runs on, by initial: "mrc"; "" everywhere
	hot    int    // the sharded board's WithHotTop; 0 for none
}

func (c shardCombo) name() string {
	s := fmt.Sprintf("%v/%v/%v", c.policy, c.order, c.rank)
	switch c.tie {
	case 1:
		s += "/EarlierFirst"
	case 2:
		s += "/LaterFirst"
	}
	if c.bounds != nil {
		s += fmt.Sprintf("/%d_bounds_from_%v", len(c.bounds), c.bounds[0])
	}
	if c.shadow != nil {
		s += fmt.Sprintf("/shadow_of_%d_bounds", len(c.shadow))
	}
	if c.replicaReads() {
		s += "/replicaReads"
	}
	if c.hotTop() > 0 {
		s += fmt.Sprintf("/hot%d", c.hotTop())
	}
	return s
}

// withHotTop gives some of the model's combos (by seed: both orders, rank
// modes and replica settings, two on miniredis) a hot top of 7 on the
// sharded board of the pair (WithHotTop): Top(1), Top(7), Range(1, 3),
// Range(7, 7) and the pages within it read the mirror, and must answer as
// the unsharded board without one.
func (c shardCombo) withHotTop() shardCombo {
	if c.seed%3 == 0 || (c.on == "mrc" && c.seed%2 == 0) {
		c.hot = 7
	}
	return c
}

func (c shardCombo) hotTop() int { return c.hot }

func (c shardCombo) shardBounds() []float64 {
	if c.bounds != nil {
		return c.bounds
	}
	return shardBounds
}

func (c shardCombo) options(t *testing.T) []lb.Option {
	opts := []lb.Option{
		lb.WithPolicy(c.policy), lb.WithOrder(c.order), lb.WithRanking(c.rank),
		lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)),
	}
	if c.tie != 0 {
		opts = append(opts, lb.WithTieBreak(tieNew(t, c.tie == 2, shardTimeOrder)))
	}
	if c.shadow != nil {
		opts = append(opts, lb.WithShadowShards(c.shadow...))
	}
	if c.replicaReads() {
		opts = append(opts, lb.WithReplicaReads())
	}
	return opts
}

// replicaReads: the combos of odd seeds read as for replicas
// (WithReplicaReads), on both boards of the pair.
func (c shardCombo) replicaReads() bool { return c.seed%2 == 1 }

// shardPair is a sharded board and an unsharded one with the same options.
type shardPair struct {
	*modelHarness
	b       *testredis.Backend
	combo   shardCombo
	bounds  []float64
	sharded *lb.Leaderboard
	plain   *lb.Leaderboard
	sName   string
	pName   string
	// what the workload exercised, logged at the end of a run
	moves, refused, closed int
}

// count tallies what a Submit did: a move across a bound, a refusal, a
// closed window.
func (p *shardPair) count(res lb.Result, err error) {
	if err != nil {
		p.refused++
		return
	}
	for _, w := range res.Windows {
		if w.Closed {
			p.closed++
		}
		if w.Previous.Rank != 0 && shardOf(p.bounds, w.Previous.Score) != shardOf(p.bounds, w.Standing.Score) {
			p.moves++
		}
	}
}

func newShardPair(t *testing.T, b *testredis.Backend, c shardCombo) *shardPair {
	t.Helper()
	p := &shardPair{
		modelHarness: newModelHarness(t, fmt.Sprintf("backend=%s combo=%s seed=%d", b.Name, c.name(), c.seed), c.seed, 0x5bd1e995),
		b:            b, combo: c, bounds: c.shardBounds(),
		sName: shardName(t, b), pName: b.BoardName(t),
	}
	var err error
	opts := append(c.options(t), lb.WithShards(p.bounds...))
	if c.hotTop() > 0 {
		opts = append(opts, lb.WithHotTop(c.hotTop()))
	}
	p.sharded, err = lb.New(b.Client, p.sName, opts...)
	require.NoError(t, err, "New(WithShards(%v))", p.bounds)
	p.plain, err = lb.New(b.Client, p.pName, c.options(t)...)
	require.NoError(t, err)
	return p
}

var shardSentinels = []error{lb.ErrNotRanked, lb.ErrInvalidScore, lb.ErrInvalidMember, lb.ErrPrecision, lb.ErrInvalidArgument}

// requireSameErr requires got to be nil when want is, and to match the same
// sentinels otherwise.
func requireSameErr(t *testing.T, want, got error, what string) {
	t.Helper()
	if want == nil {
		require.NoError(t, got, "%s: the sharded board failed where the unsharded one did not", what)
		return
	}
	require.Error(t, got, "%s: the unsharded board returned %v", what, want)
	for _, s := range shardSentinels {
		require.Equal(t, errors.Is(want, s), errors.Is(got, s), "%s: sharded error %q, unsharded error %q", what, got, want)
	}
}

// shardSame calls the unsharded board, then the sharded one, and requires
// the same answer.
func shardSame[T any](p *shardPair, what string, call func(*lb.Leaderboard) (T, error)) T {
	p.t.Helper()
	want, werr := call(p.plain)
	got, gerr := call(p.sharded)
	requireSameErr(p.t, werr, gerr, what)
	require.Equal(p.t, want, got, "%s: sharded (got) vs unsharded (want)", what)
	return want
}

func (p *shardPair) submit(member string, score float64, opts ...lb.SubmitOption) {
	p.t.Helper()
	call := fmt.Sprintf("Submit(%q, %v)", member, score)
	if len(opts) > 0 {
		call = fmt.Sprintf("Submit(%q, %v, WithTime(...))", member, score)
	}
	p.logf("%s", call)
	var err error
	res := shardSame(p, p.where()+" "+call, func(board *lb.Leaderboard) (lb.Result, error) {
		var res lb.Result
		res, err = board.Submit(p.ctx, member, score, opts...)
		return res, err
	})
	p.count(res, err)
}

// reset empties the current period of one window on both boards.
func (p *shardPair) reset() {
	w := pick(p.modelHarness, []lb.Window{lb.AllTime(), lb.Daily()})
	p.logf("Reset(In(%s))", w.Name())
	shardSame(p, p.where()+" Reset", func(board *lb.Leaderboard) (struct{}, error) {
		return struct{}{}, board.Reset(p.ctx, lb.In(w))
	})
}

// setData sets or clears a member's data on both boards.
func (p *shardPair) setData() {
	m := pick(p.modelHarness, shardPool)
	data := pick(p.modelHarness, append([]string{""}, modelData...))
	p.logf("SetData(%q, %.20q)", m, data)
	shardSame(p, p.where()+" SetData", func(board *lb.Leaderboard) (struct{}, error) {
		return struct{}{}, board.SetData(p.ctx, m, data)
	})
}

func (p *shardPair) submitAt(member string, score float64, at time.Time) {
	p.t.Helper()
	call := fmt.Sprintf("Submit(%q, %v, WithTime(%s))", member, score, at.Format(time.RFC3339Nano))
	p.logf("%s", call)
	var err error
	res := shardSame(p, p.where()+" "+call, func(board *lb.Leaderboard) (lb.Result, error) {
		var res lb.Result
		res, err = board.Submit(p.ctx, member, score, lb.WithTime(at))
		return res, err
	})
	p.count(res, err)
}

func (p *shardPair) submitMany(batch map[string]float64) {
	p.t.Helper()
	call := fmt.Sprintf("SubmitMany(%v)", batch)
	p.logf("%s", call)
	shardSame(p, p.where()+" "+call, func(board *lb.Leaderboard) (struct{}, error) {
		return struct{}{}, board.SubmitMany(p.ctx, batch)
	})
}

func (p *shardPair) remove(members ...string) {
	p.t.Helper()
	call := fmt.Sprintf("Remove(%q)", members)
	p.logf("%s", call)
	shardSame(p, p.where()+" "+call, func(board *lb.Leaderboard) (struct{}, error) {
		return struct{}{}, board.Remove(p.ctx, members...)
	})
}

// shardView is one board period the pair is read at.
type shardView struct {
	name           string
	window, period string
	q              []lb.Query
}

func shardViews() []shardView {
	all := lb.AllTime().Period(future).ID
	return []shardView{
		{name: "default", window: "alltime", period: all},
		{name: "daily", window: "daily", period: lb.Daily().Period(future).ID, q: []lb.Query{lb.In(lb.Daily())}},
		{name: "daily@day0", window: "daily", period: lb.Daily().Period(shardDay0).ID,
			q: []lb.Query{lb.In(lb.Daily()), lb.At(shardDay0)}},
	}
}

// compare reads a view of both boards every way and requires equal answers.
func (p *shardPair) compare(v shardView, members, unknown []string) {
	p.t.Helper()
	ctx := p.ctx
	where := p.where() + " view=" + v.name
	all := shardSame(p, where+" Top(1000)", func(board *lb.Leaderboard) ([]lb.Entry, error) {
		return board.Top(ctx, 1000, v.q...)
	})
	for _, k := range []int{1, 7} {
		shardSame(p, fmt.Sprintf("%s Top(%d)", where, k), func(board *lb.Leaderboard) ([]lb.Entry, error) {
			return board.Top(ctx, k, v.q...)
		})
	}
	shardSame(p, where+" Count", func(board *lb.Leaderboard) (int64, error) { return board.Count(ctx, v.q...) })
	for _, m := range append(slices.Clone(members), unknown...) {
		shardSame(p, fmt.Sprintf("%s Rank(%q)", where, m), func(board *lb.Leaderboard) (lb.Standing, error) {
			return board.Rank(ctx, m, v.q...)
		})
	}
	shardSame(p, where+" Periods", func(board *lb.Leaderboard) ([]lb.PeriodInfo, error) { return board.Periods(ctx, v.q...) })
	for _, pct := range modelPercents {
		shardSame(p, fmt.Sprintf("%s Cutoff(%v)", where, pct), func(board *lb.Leaderboard) (lb.Entry, error) {
			return board.Cutoff(ctx, pct, v.q...)
		})
	}
	for _, fr := range [][2]int64{{1, 3}, {4, 20}, {2, 1000}, {7, 7}, {40, 60}} {
		shardSame(p, fmt.Sprintf("%s Range(%d, %d)", where, fr[0], fr[1]), func(board *lb.Leaderboard) ([]lb.Entry, error) {
			return board.Range(ctx, fr[0], fr[1], v.q...)
		})
	}
	everyone := append(slices.Clone(members), unknown...)
	shardSame(p, where+" Ranks(everyone)", func(board *lb.Leaderboard) ([]lb.Standing, error) {
		return board.Ranks(ctx, everyone, v.q...)
	})
	for range 2 {
		ms := p.members(members, unknown, 8)
		shardSame(p, fmt.Sprintf("%s Ranks(%q)", where, ms), func(board *lb.Leaderboard) ([]lb.Standing, error) {
			return board.Ranks(ctx, ms, v.q...)
		})
	}
	arounds := []string{unknown[0]}
	if len(all) > 0 {
		arounds = append(arounds, all[0].Member, all[len(all)/2].Member, all[len(all)-1].Member)
	}
	for _, m := range arounds {
		for _, radius := range []int{0, 2, 5, 40} {
			shardSame(p, fmt.Sprintf("%s Around(%q, %d)", where, m, radius), func(board *lb.Leaderboard) ([]lb.Entry, error) {
				return board.Around(ctx, m, radius, v.q...)
			})
		}
	}
	for _, size := range []int{1, 3, 7} {
		for num := 1; num <= (len(all)+size-1)/size+1; num++ {
			shardSame(p, fmt.Sprintf("%s Page(%d, %d)", where, num, size), func(board *lb.Leaderboard) (lb.Page, error) {
				return board.Page(ctx, num, size, v.q...)
			})
		}
	}
	shardSame(p, where+" Page(1000, 7)", func(board *lb.Leaderboard) (lb.Page, error) {
		return board.Page(ctx, 1000, 7, v.q...)
	})
	for range 2 {
		var ms []string
		for range 1 + p.rng.IntN(8) {
			switch x := p.rng.IntN(6); {
			case x == 0:
				ms = append(ms, unknown[p.rng.IntN(len(unknown))])
			case x == 1 && len(ms) > 0:
				ms = append(ms, ms[p.rng.IntN(len(ms))]) // a repeat
			default:
				ms = append(ms, members[p.rng.IntN(len(members))])
			}
		}
		shardSame(p, fmt.Sprintf("%s Among(%q)", where, ms), func(board *lb.Leaderboard) ([]lb.Entry, error) {
			return board.Among(ctx, ms, v.q...)
		})
	}
	shardSame(p, where+" Among(nothing)", func(board *lb.Leaderboard) ([]lb.Entry, error) {
		return board.Among(ctx, nil, v.q...)
	})
	p.compareScores(v)
	p.compareWithData(v, members, unknown, all)
}

// walkErr walks seq to its end and returns its error.
func walkErr(seq iter.Seq2[lb.Entry, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// shardRangeBounds are score bounds for the reads by score: the shards'
// bounds, scores the workload submits, scores between them and the open
// ends.
var shardRangeBounds = []float64{math.Inf(-1), -100, -4.5, -3, -1.5, -0.25, 0, 0.5, 1, 2.5, 3.25, 5, 100, math.Inf(1)}

// compareScores reads a view of both boards by score, and walks them.
func (p *shardPair) compareScores(v shardView) {
	p.t.Helper()
	ctx := p.ctx
	where := p.where() + " view=" + v.name
	for range 3 {
		lo, hi := p.scoreRange()
		for _, n := range []int{1, 4, lb.MaxN} {
			shardSame(p, fmt.Sprintf("%s Between(%v, %v, %d)", where, lo, hi, n), func(board *lb.Leaderboard) ([]lb.Entry, error) {
				return board.Between(ctx, lo, hi, n, v.q...)
			})
		}
		shardSame(p, fmt.Sprintf("%s CountBetween(%v, %v)", where, lo, hi), func(board *lb.Leaderboard) (int64, error) {
			return board.CountBetween(ctx, lo, hi, v.q...)
		})
	}
	for range 3 {
		x := pick(p.modelHarness, shardRangeBounds[1:len(shardRangeBounds)-1])
		for _, radius := range []int{0, 1, 3, 40} {
			type placed struct {
				Place int64
				Es    []lb.Entry
			}
			shardSame(p, fmt.Sprintf("%s AroundScore(%v, %d)", where, x, radius), func(board *lb.Leaderboard) (placed, error) {
				r, es, err := board.AroundScore(ctx, x, radius, v.q...)
				return placed{r, es}, err
			})
		}
	}
	shardSame(p, where+" All", func(board *lb.Leaderboard) ([]lb.Entry, error) {
		var out []lb.Entry
		for e, err := range board.All(ctx, v.q...) {
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	})
}

// scoreRange draws lo <= hi from shardRangeBounds.
func (p *shardPair) scoreRange() (float64, float64) {
	a, b := pick(p.modelHarness, shardRangeBounds), pick(p.modelHarness, shardRangeBounds)
	return min(a, b), max(a, b)
}

// set corrects a member's score in one window on both boards.
func (p *shardPair) set() {
	w := pick(p.modelHarness, []lb.Window{lb.AllTime(), lb.Daily()})
	m, sc := pick(p.modelHarness, shardPool), p.score()
	p.logf("Set(%q, %v, In(%s))", m, sc, w.Name())
	shardSame(p, p.where()+fmt.Sprintf(" Set(%q, %v)", m, sc), func(board *lb.Leaderboard) (struct{}, error) {
		return struct{}{}, board.Set(p.ctx, m, sc, lb.In(w))
	})
}

// removeBetween removes a score range from one window on both boards.
func (p *shardPair) removeBetween() {
	w := pick(p.modelHarness, []lb.Window{lb.AllTime(), lb.Daily()})
	lo, hi := p.scoreRange()
	p.logf("RemoveBetween(%v, %v, In(%s))", lo, hi, w.Name())
	shardSame(p, p.where()+fmt.Sprintf(" RemoveBetween(%v, %v)", lo, hi), func(board *lb.Leaderboard) (int64, error) {
		return board.RemoveBetween(p.ctx, lo, hi, lb.In(w))
	})
}

// compareWithData reads a view of both boards with IncludeData.
func (p *shardPair) compareWithData(v shardView, members, unknown []string, all []lb.Entry) {
	p.t.Helper()
	ctx := p.ctx
	q := append(slices.Clone(v.q), lb.IncludeData())
	where := p.where() + " view=" + v.name + " IncludeData"
	for _, k := range []int{1, 1000} {
		shardSame(p, fmt.Sprintf("%s Top(%d)", where, k), func(board *lb.Leaderboard) ([]lb.Entry, error) { return board.Top(ctx, k, q...) })
	}
	for num := 1; num <= 3; num++ {
		shardSame(p, fmt.Sprintf("%s Page(%d, 4)", where, num), func(board *lb.Leaderboard) (lb.Page, error) { return board.Page(ctx, num, 4, q...) })
	}
	shardSame(p, where+" Range(3, 11)", func(board *lb.Leaderboard) ([]lb.Entry, error) { return board.Range(ctx, 3, 11, q...) })
	shardSame(p, where+" Cutoff(25)", func(board *lb.Leaderboard) (lb.Entry, error) { return board.Cutoff(ctx, 25, q...) })
	shardSame(p, where+" Between(-1.5, 3.25, 6)", func(board *lb.Leaderboard) ([]lb.Entry, error) { return board.Between(ctx, -1.5, 3.25, 6, q...) })
	type placed struct {
		Place int64
		Es    []lb.Entry
	}
	shardSame(p, where+" AroundScore(0.5, 4)", func(board *lb.Leaderboard) (placed, error) {
		r, es, err := board.AroundScore(ctx, 0.5, 4, q...)
		return placed{r, es}, err
	})
	shardSame(p, where+" All", func(board *lb.Leaderboard) ([]lb.Entry, error) {
		var out []lb.Entry
		for e, err := range board.All(ctx, q...) {
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	})
	ms := append(slices.Clone(members), unknown...)
	shardSame(p, where+" Ranks", func(board *lb.Leaderboard) ([]lb.Standing, error) { return board.Ranks(ctx, ms, q...) })
	shardSame(p, where+" Among", func(board *lb.Leaderboard) ([]lb.Entry, error) { return board.Among(ctx, ms, q...) })
	for _, m := range []string{unknown[0], members[0]} {
		shardSame(p, fmt.Sprintf("%s Rank(%q)", where, m), func(board *lb.Leaderboard) (lb.Standing, error) { return board.Rank(ctx, m, q...) })
	}
	if len(all) > 0 {
		// The ends and the middle, slices within a shard and across
		// several (on a Cluster, cut from the shards' stretches).
		for _, m := range []string{all[0].Member, all[len(all)/2].Member, all[len(all)-1].Member} {
			for _, radius := range []int{0, 2, 5, 40} {
				shardSame(p, fmt.Sprintf("%s Around(%q, %d)", where, m, radius), func(board *lb.Leaderboard) ([]lb.Entry, error) {
					return board.Around(ctx, m, radius, q...)
				})
			}
		}
	}
}

// layout checks a view's keys against the spec: the partitions hold exactly the
// stored values of the unsharded board (the same encoding, fed the same
// submissions), and every member sits in exactly the shard its plain score
// belongs to, with the stored value of its partition.
func (p *shardPair) layout(v shardView) {
	p.t.Helper()
	t := p.t
	where := p.where() + " layout of view " + v.name
	plainScore := map[string]float64{}
	for num := 1; ; num++ {
		pg, err := p.plain.Page(p.ctx, num, lb.MaxN, v.q...)
		require.NoError(t, err, where)
		for _, e := range pg.Entries {
			plainScore[e.Member] = e.Score
		}
		if len(pg.Entries) < lb.MaxN {
			break
		}
	}
	stored := zscores(t, p.b, shardPlainKey(p.pName, v.window, v.period))
	idx := map[string]float64{}
	for m, s := range partitionValues(t, p.b, p.sName, v.window, v.period) {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		idx[m] = f
	}
	require.Equal(t, stored, idx, "%s: the partitions must hold every member's stored value", where)
	seen := map[string]int{}
	for i := range len(p.bounds) + 1 {
		key := shardKey(p.sName, p.bounds, i, v.window, v.period)
		for m, s := range zscores(t, p.b, key) {
			seen[m]++
			want, ok := idx[m]
			require.True(t, ok, "%s: %s holds %q, which is in no partition", where, key, m)
			require.Equal(t, want, s, "%s: %s holds %q at %v, its partition at %v", where, key, m, s, want)
			require.Equal(t, shardOf(p.bounds, plainScore[m]), i, "%s: %s holds %q of plain score %v", where, key, m, plainScore[m])
		}
	}
	for m := range idx {
		require.Equal(t, 1, seen[m], "%s: %q is in %d shards", where, m, seen[m])
	}
}

// checkClean runs Check and requires no finding in any window, and the
// partitions' member counts to be the unsharded board's.
func (p *shardPair) checkClean() {
	p.t.Helper()
	t := p.t
	where := p.where() + " Check(false)"
	reps, err := p.sharded.Check(p.ctx, false)
	require.NoError(t, err, where)
	require.Len(t, reps, 2, "%s: one report per window", where)
	byWindow := map[string]lb.CheckReport{}
	for _, r := range reps {
		byWindow[r.Window] = r
	}
	for _, v := range shardViews()[:2] {
		r, ok := byWindow[v.window]
		require.True(t, ok, "%s: no report for window %q in %+v", where, v.window, reps)
		require.Equal(t, v.period, r.Period, "%s: period of window %q", where, v.window)
		n, err := p.plain.Count(p.ctx, v.q...)
		require.NoError(t, err)
		requireCleanReport(t, r, n, where)
	}
	v := shardViews()[2]
	reps, err = p.sharded.Check(p.ctx, false, v.q...)
	require.NoError(t, err, "%s In(Daily), At(day0)", where)
	require.Len(t, reps, 1, "%s In(Daily), At(day0): one report", where)
	require.Equal(t, "daily", reps[0].Window, where)
	require.Equal(t, v.period, reps[0].Period, where)
	n, err := p.plain.Count(p.ctx, v.q...)
	require.NoError(t, err)
	requireCleanReport(t, reps[0], n, where+" In(Daily), At(day0)")
}

func requireCleanReport(t *testing.T, r lb.CheckReport, members int64, where string) {
	t.Helper()
	require.Equal(t, members, r.Members, "%s: report %+v: members in the partitions", where, r)
	require.Empty(t, r.Misplaced, "%s: report %+v: Misplaced", where, r)
	require.Empty(t, r.Duplicated, "%s: report %+v: Duplicated", where, r)
	require.Empty(t, r.Missing, "%s: report %+v: Missing", where, r)
	require.Empty(t, r.Stray, "%s: report %+v: Stray", where, r)
	require.Empty(t, r.Stale, "%s: report %+v: Stale", where, r)
}

// zscores reads a sorted set as member -> stored value.
func zscores(t *testing.T, b *testredis.Backend, key string) map[string]float64 {
	t.Helper()
	c := b.Client.Client
	zs, err := c.Do(context.Background(), c.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()).AsZScores()
	require.NoError(t, err, "ZRANGE %s", key)
	out := make(map[string]float64, len(zs))
	for _, z := range zs {
		out[z.Member] = z.Score
	}
	return out
}

// ---- 2. the sharded board against the unsharded one ----

const (
	shardModelSteps = 150
	shardCheckEvery = 30
)

// shardPool is the model test's members and a few that would trip up a
// script or a key that carried them carelessly.
var shardPool = append(slices.Clone(modelPool), "x y", "a\nb", "%d", "#s1", "{t}", "\x00", "ä:1", strings.Repeat("L", lb.MaxMemberLen))

// Dense bounds: eleven shards, most of them holding one or two scores.
var shardDense = []float64{-4.5, -3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 4.5}

// shardModelCombos: every policy × order × rank mode, and four tie-broken
// combos (both rules, every policy), under varied bounds: the default five
// shards, eleven, two, and two of which one stays (almost) empty. Every combo
// runs on the cluster; a sample on the standalone Redis and on miniredis,
// whose Lua is slow, keeps the runtime down.
func shardModelCombos() []shardCombo {
	const all, rc, c = "mrc", "rc", "c"
	return []shardCombo{
		{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Ordinal, seed: 3100, on: all},
		{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Competition, bounds: shardDense, seed: 3101, on: rc},
		{policy: lb.KeepBest, order: lb.LowestFirst, rank: lb.Ordinal, bounds: []float64{1000}, seed: 3102, on: c},
		{policy: lb.KeepBest, order: lb.LowestFirst, rank: lb.Competition, seed: 3103, on: rc},
		{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Ordinal, bounds: []float64{0}, seed: 3104, on: rc},
		{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, seed: 3105, on: c},
		{policy: lb.Replace, order: lb.LowestFirst, rank: lb.Ordinal, bounds: []float64{-1000}, seed: 3106, on: rc},
		{policy: lb.Replace, order: lb.LowestFirst, rank: lb.Competition, bounds: shardDense, seed: 3107, on: all},
		{policy: lb.Accumulate, order: lb.HighestFirst, rank: lb.Ordinal, seed: 3108, on: rc},
		{policy: lb.Accumulate, order: lb.HighestFirst, rank: lb.Competition, bounds: []float64{0}, seed: 3109, on: c},
		{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Ordinal, bounds: shardDense, seed: 3110, on: c},
		{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Competition, seed: 3111, on: rc},
		{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Ordinal, tie: 1, seed: 3201, on: rc},
		{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Competition, tie: 1, seed: 3202, on: all},
		{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, tie: 2, bounds: shardDense, seed: 3203, on: c},
		{policy: lb.KeepBest, order: lb.LowestFirst, rank: lb.Ordinal, tie: 2, bounds: []float64{0}, seed: 3204, on: rc},
	}
}

func TestShardedModel(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range shardModelCombos() {
			if !strings.Contains(c.on, b.Name[:1]) {
				continue
			}
			c = c.withHotTop()
			t.Run(c.name(), func(t *testing.T) {
				t.Parallel()
				runShardModel(t, b, c)
			})
		}
	})
}

// score picks a submission: mostly shardScores, at times a score at the
// edge of what the board holds (which both boards must refuse alike).
func (p *shardPair) score() float64 {
	if p.rng.IntN(25) != 0 {
		return shardScores[p.rng.IntN(len(shardScores))]
	}
	if p.combo.tie != 0 {
		// MaxScore, beyond it, and a digit more than Decimals keeps.
		return []float64{100, -100, 100.001, 1e15, 1e-4}[p.rng.IntN(5)]
	}
	return []float64{1e15, -1e15, math.MaxFloat64, -math.MaxFloat64, 5e-324}[p.rng.IntN(5)]
}

func runShardModel(t *testing.T, b *testredis.Backend, c shardCombo) {
	t.Logf("sharded model run %s on %s: seed=%d bounds=%v", c.name(), b.Name, c.seed, c.shardBounds())
	p := newShardPair(t, b, c)
	views := shardViews()
	// Empty boards answer alike too.
	for _, v := range views {
		p.compare(v, shardPool[:3], modelUnknown)
	}
	steps := shardModelSteps
	if b.Mini != nil {
		steps = shardModelSteps * 4 / 5 // miniredis's Lua is slow
	}
	p.run(modelLoop{
		steps: steps, checkEvery: shardCheckEvery,
		ops: []modelOp{{76, p.submitAny}, {12, p.submitBatch}, {5, p.batcherPair}, {8, func() {
			p.remove(p.members(shardPool, modelUnknown, 3)...)
		}}, {4, p.setData}, {1, p.reset}, {3, p.set}, {1, p.removeBetween}},
		check: func(last bool) {
			// Every view at the end; in between, all-time and one day.
			vs := views
			if !last {
				vs = []shardView{views[0], views[1+(p.step/shardCheckEvery)%2]}
			}
			for _, v := range vs {
				p.compare(v, shardPool, modelUnknown)
				p.layout(v)
			}
			p.checkClean()
		},
	})
	t.Logf("%s on %s: %d moves across a bound, %d refused submissions, %d closed windows", c.name(), b.Name, p.moves, p.refused, p.closed)
	if slices.ContainsFunc(p.bounds, func(x float64) bool { return math.Abs(x) < 100 }) {
		require.Positive(t, p.moves, "the workload moved no member across a bound")
	}
}

// submitAny submits a pool member's score now, at a time of the day before
// or today, or into a day that has expired.
func (p *shardPair) submitAny() {
	m, s := pick(p.modelHarness, shardPool), p.score()
	switch y := p.rng.IntN(100); {
	case y < 30:
		// At or before the clock: the day before, or today.
		p.submitAt(m, s, shardEpoch.Add(time.Duration(p.rng.Int64N(int64(24*time.Hour)+1))))
	case y < 33:
		// A replay into a day that has expired: the daily window is
		// Closed (or, before a tie-break's Epoch, refused).
		p.submitAt(m, s, future.Add(-72*time.Hour))
	case y < 50:
		p.submit(m, s, lb.WithData(pick(p.modelHarness, modelData)))
	default:
		p.submit(m, s)
	}
}

// submitBatch submits 1 to 6 pool members at once.
func (p *shardPair) submitBatch() {
	batch := map[string]float64{}
	for range 1 + p.rng.IntN(6) {
		batch[pick(p.modelHarness, shardPool)] = p.score()
	}
	p.submitMany(batch)
}

// TestShardedRoundTrips counts the calls each operation of a sharded board
// makes against the figures of the docs (WithShards, the methods', the
// README's), exactly, on every backend: Top, Count and Among one; Rank one,
// two under Competition ranks on a Cluster; Page one inside the best shard
// (under Competition ranks the first page only), else two; Around, Submit,
// Set, SubmitMany and Remove one on a single node and two on a Cluster
// (Rank and Around of a member without a score, a SubmitMany that changes
// nothing, one; a SubmitMany run dry first three), also when a submission
// moves a member to another shard, and while every write also keeps a
// shadow layout (WithShadowShards); RemoveBetween a chunk's read, then
// Remove's steps, one for a range with no member.
func TestShardedRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shardCombo{
			{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Ordinal},
			{policy: lb.KeepBest, order: lb.LowestFirst, rank: lb.Competition},
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition},
			{policy: lb.Accumulate, order: lb.HighestFirst, rank: lb.Ordinal},
			{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Competition, tie: 1},
			{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Ordinal, tie: 2},
			// A move to new bounds under way: every write keeps the shadow
			// in the same round trips.
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Ordinal, shadow: shardDense},
			{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Competition, tie: 1, shadow: []float64{0}},
		} {
			t.Run(c.name(), func(t *testing.T) {
				runShardRoundTrips(t, b, c)
			})
		}
	})
}

func runShardRoundTrips(t *testing.T, b *testredis.Backend, c shardCombo) {
	ctx := context.Background()
	board, err := lb.New(b.Client, shardName(t, b), append(c.options(t), lb.WithShards(shardBounds...))...)
	require.NoError(t, err)
	// Every member visits every shard, so every script the board uses is
	// loaded on every node before anything is counted.
	path := []float64{-5, -1, 0.5, 2, 4} // shards 0..4
	if c.policy == lb.KeepBest && c.order == lb.LowestFirst {
		slices.Reverse(path)
	}
	submitPath := func(m string) {
		prev := 0.0
		for _, s := range path {
			v := s
			if c.policy == lb.Accumulate {
				v = s - prev
				prev = s
			}
			_, err := board.Submit(ctx, m, v)
			require.NoError(t, err, "warm-up Submit(%q, %v)", m, v)
		}
	}
	for _, m := range modelPool[:10] {
		submitPath(m)
	}
	daily := lb.In(lb.Daily())
	for _, q := range [][]lb.Query{nil, {daily}} {
		for _, m := range modelPool[:10] {
			_, err := board.Rank(ctx, m, q...)
			require.NoError(t, err)
			_, err = board.Around(ctx, m, 3, q...)
			require.NoError(t, err)
		}
		for num := 1; num <= 4; num++ {
			_, err := board.Page(ctx, num, 3, q...)
			require.NoError(t, err)
		}
	}
	// crossing moves "climber" to another shard on every call.
	var crossing []float64
	switch {
	case c.policy == lb.Replace:
		crossing = []float64{-5, 4, -1, 2, 0.5, -5, 4}
	case c.policy == lb.Accumulate:
		crossing = []float64{9, -9, 9, -9, 9, -9, 9} // -5 <-> 4
	case c.order == lb.HighestFirst:
		crossing = []float64{-1, 0.5, 2, 4, 5}
	default:
		crossing = []float64{4, 2, 0.5, -1, -5}
	}
	start := -5.0
	if c.policy == lb.KeepBest && c.order == lb.LowestFirst {
		start = 5
	}
	_, err = board.Submit(ctx, "climber", start)
	require.NoError(t, err)
	next := 0
	fresh := 0
	climber := start // its score after the last Submit or Set of it
	// by picks the doc's figure on one node (standalone, miniredis) or on
	// a Cluster.
	by := func(oneNode, onCluster int64) int64 {
		if b.Name == "cluster" {
			return onCluster
		}
		return oneNode
	}
	competing := c.rank == lb.Competition
	// A write, and Around: one script on one node; on a Cluster the
	// member's partition, then the shards.
	write := by(1, 2)
	// Under Competition ranks a Cluster reads Rank as Ranks: the member's
	// partition beside the counts, then its shard.
	rank := int64(1)
	if competing {
		rank = write
	}
	// Page(2, 4) lies inside the best shard, where every warm-up path
	// ends: one round trip, but under Competition ranks past the first
	// page two.
	page := int64(1)
	if competing {
		page = 2
	}
	// On a Cluster an Accumulate board with a tie-break (whose totals a
	// partition can refuse against MaxScore) runs a SubmitMany spanning
	// several partition groups dry first: one refused total writes nothing.
	many := write
	if b.Name == "cluster" && c.policy == lb.Accumulate && c.tie != 0 {
		many = 3
	}
	// changed is a SubmitMany that changes each of its members.
	changes := 0
	changed := func() map[string]float64 {
		changes++
		v := float64(10 + changes)
		switch {
		case c.policy == lb.Accumulate:
			v = 1
		case c.policy == lb.KeepBest && c.order == lb.LowestFirst:
			v = -v
		}
		return map[string]float64{"a": v, "b": v, "new": v}
	}
	// unchanged changes nothing once its warm-up ran: below a KeepBest
	// best, a Replace of the stored score, an Accumulate of 0.
	unchanged := map[string]float64{"a": 1, "b": -3, "new": 4}
	if c.policy == lb.Accumulate {
		unchanged = map[string]float64{"a": 0, "b": 0, "new": 0}
	}
	notRanked := func(err error) error {
		if errors.Is(err, lb.ErrNotRanked) {
			return nil
		}
		return fmt.Errorf("%v, want ErrNotRanked", err)
	}
	ops := []struct {
		name string
		want int64
		fn   func() error
		prep func() // before each run, not counted
	}{
		{name: "Top", want: 1, fn: func() error { _, err := board.Top(ctx, 10); return err }},
		// The best shard holds fewer than 1000: every shard, the warm-up
		// having found that out.
		{name: "Top daily", want: 1, fn: func() error { _, err := board.Top(ctx, 1000, daily); return err }},
		{name: "Rank", want: rank, fn: func() error { _, err := board.Rank(ctx, modelPool[3]); return err }},
		{name: "Rank daily", want: rank, fn: func() error { _, err := board.Rank(ctx, modelPool[4], daily); return err }},
		// The partition holds no value: nothing to read in a shard.
		{name: "Rank unranked", want: 1, fn: func() error { _, err := board.Rank(ctx, "nobody"); return notRanked(err) }},
		{name: "Count", want: 1, fn: func() error { _, err := board.Count(ctx); return err }},
		{name: "Count daily", want: 1, fn: func() error { _, err := board.Count(ctx, daily); return err }},
		{name: "Among", want: 1, fn: func() error {
			_, err := board.Among(ctx, []string{modelPool[0], modelPool[5], "nobody", "climber"})
			return err
		}},
		// The shards' counts beside the partitions, then each member's place.
		{name: "Ranks", want: 2, fn: func() error {
			_, err := board.Ranks(ctx, []string{modelPool[0], modelPool[5], "nobody", "climber", modelPool[0]})
			return err
		}},
		{name: "Periods", want: 1, fn: func() error { _, err := board.Periods(ctx, daily); return err }},
		{name: "Submit", want: write, fn: func() error { _, err := board.Submit(ctx, modelPool[1], path[2]); return err }},
		{name: "Submit crossing shards", want: write, fn: func() error {
			res, err := board.Submit(ctx, "climber", crossing[next])
			next++
			climber = res.Score
			return err
		}},
		{name: "Submit new member", want: write, fn: func() error {
			fresh++
			_, err := board.Submit(ctx, fmt.Sprintf("fresh%d", fresh), path[fresh%len(path)])
			return err
		}},
		{name: "Around", want: write, fn: func() error { _, err := board.Around(ctx, modelPool[2], 3); return err }},
		{name: "Around daily", want: write, fn: func() error { _, err := board.Around(ctx, modelPool[6], 5, daily); return err }},
		// The first step finds no member: no slice to read.
		{name: "Around unranked", want: 1, fn: func() error {
			_, err := board.Around(ctx, "nobody", 3)
			return notRanked(err)
		}},
		{name: "Page", want: page, fn: func() error { _, err := board.Page(ctx, 2, 4); return err }},
		{name: "Page daily", want: 2, fn: func() error { _, err := board.Page(ctx, 1, 1000, daily); return err }},
		{name: "Range", want: 2, fn: func() error { _, err := board.Range(ctx, 4, 20); return err }},
		{name: "Cutoff", want: write, fn: func() error { _, err := board.Cutoff(ctx, 30); return err }},
		// With IncludeData the entries' data come from their partitions in
		// a second round trip: on a Cluster the entries are read beside the
		// counts where the counts the warm-up saw place them.
		{name: "Page with data", want: 2, fn: func() error { _, err := board.Page(ctx, 3, 4, lb.IncludeData()); return err }},
		{name: "Range with data", want: 2, fn: func() error { _, err := board.Range(ctx, 9, 20, lb.IncludeData()); return err }},
		{name: "Cutoff with data", want: 2, fn: func() error { _, err := board.Cutoff(ctx, 70, lb.IncludeData()); return err }},
		// Without data a Cluster sends Between as two pipelines at once (a
		// MULTI on one shard, the other shards' commands beside it): two
		// calls, one round trip.
		{name: "Between", want: write, fn: func() error { _, err := board.Between(ctx, -1.5, 3, 10); return err }},
		{name: "Between with data", want: 2, fn: func() error { _, err := board.Between(ctx, -1.5, 3, 10, lb.IncludeData()); return err }},
		{name: "CountBetween", want: 1, fn: func() error { _, err := board.CountBetween(ctx, -1.5, 3); return err }},
		// A second round trip: the slice (radius 4 on a small board)
		// crosses the score's shard's edge.
		{name: "AroundScore", want: 2, fn: func() error { _, _, err := board.AroundScore(ctx, 0.7, 4); return err }},
		{name: "AroundScore inside its shard", want: 1, fn: func() error { _, _, err := board.AroundScore(ctx, 0.7, 0); return err }},
		{name: "AroundScore with data", want: 2, fn: func() error { _, _, err := board.AroundScore(ctx, 0.7, 4, lb.IncludeData()); return err }},
		// A board of under MaxN members: the first chunk plans by the
		// counts the warm-up's walk saw, and reads every shard at once.
		{name: "All", want: 1, fn: func() error { return walkErr(board.All(ctx)) }},
		{name: "Set", want: write, fn: func() error { return board.Set(ctx, modelPool[7], 2) }},
		// Set moves "climber" to the other end of the board, across shards,
		// on every call.
		{name: "Set crossing shards", want: write, fn: func() error {
			to := 4.0
			if climber >= 0 {
				to = -5
			}
			climber = to
			return board.Set(ctx, "climber", to)
		}},
		{name: "SubmitMany", want: many, fn: func() error { return board.SubmitMany(ctx, changed()) }},
		// Its first step finds no shard to write.
		{name: "SubmitMany changing nothing", want: many - by(0, 1), fn: func() error { return board.SubmitMany(ctx, unchanged) }},
		// A Remove sweeps every shard in its second step, with or without
		// a member to remove.
		{name: "Remove", want: write, fn: func() error { return board.Remove(ctx, "new", "nobody") }},
		// One chunk: its members, then Remove's steps.
		{name: "RemoveBetween", want: 1 + write, fn: func() error {
			n, err := board.RemoveBetween(ctx, 20, 30)
			if err == nil && n != 2 {
				err = fmt.Errorf("RemoveBetween removed %d, want 2", n)
			}
			return err
		}, prep: func() { require.NoError(t, board.SubmitMany(ctx, map[string]float64{"rb1": 25, "rb2": 26})) }},
		{name: "RemoveBetween of none", want: 1, fn: func() error { _, err := board.RemoveBetween(ctx, 70, 80); return err }},
		// Last: they empty the board.
		{name: "Reset", want: 1, fn: func() error { return board.Reset(ctx, daily) }},
		{name: "Delete", want: 1, fn: func() error { return board.Delete(ctx) }},
	}
	for _, op := range ops {
		for _, counted := range []bool{false, true} {
			if op.prep != nil {
				op.prep()
			}
			before := b.Client.Calls()
			require.NoError(t, op.fn(), "%s (counted: %v)", op.name, counted)
			if n := b.Client.Calls() - before; counted {
				require.Equal(t, op.want, n, "[%s %s] %s round trips", b.Name, c.name(), op.name)
			}
		}
	}
	// Check reads whole shards; it has no bound.
	_, err = board.Check(ctx, false)
	require.NoError(t, err)
	before := b.Client.Calls()
	_, err = board.Check(ctx, false)
	require.NoError(t, err)
	t.Logf("[%s %s] Check: %d round trips", b.Name, c.name(), b.Client.Calls()-before)
}

// TestShardedTopBestShard: Top reads the best shard alone (one round trip)
// while it holds enough members, and every shard when it does not, one
// extra round trip the first time it finds out; the answers are the
// unsharded board's throughout.
// TestShardedTieBlockEdges: under a tie-break a plain score stands for a
// block of stored values, one a time slot. Members at either end of their
// block (a submission at the tie-break's epoch is the block's first or
// last value, by the rule and the order) still tie with the rest of it
// under Competition ranks, on every read of both boards of a pair: the
// counts of members strictly better and worse take the whole block.
func TestShardedTieBlockEdges(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shardCombo{
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, tie: 1, seed: 7102},
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, tie: 2, seed: 7104},
			{policy: lb.Replace, order: lb.LowestFirst, rank: lb.Competition, tie: 1, seed: 7106},
			{policy: lb.Replace, order: lb.LowestFirst, rank: lb.Competition, tie: 2, seed: 7107}, // odd: WithReplicaReads
		} {
			t.Run(c.name(), func(t *testing.T) {
				c.bounds = []float64{0, 10}
				p := newShardPair(t, b, c)
				p.submitAt("edge", 5, shardEpoch)
				p.submitAt("mid", 5, shardEpoch.Add(time.Hour))
				p.submitAt("late", 5, future)
				p.submitAt("high", 12, shardEpoch)
				p.submitAt("low", -3, shardEpoch)
				want := map[string]int64{"high": 1, "edge": 2, "mid": 2, "late": 2, "low": 5}
				if c.order == lb.LowestFirst {
					want["low"], want["high"] = 1, 5
				}
				members := []string{"edge", "mid", "late", "high", "low"}
				for name, board := range map[string]*lb.Leaderboard{"sharded": p.sharded, "unsharded": p.plain} {
					ranked := func(what string, es []lb.Entry, err error) {
						t.Helper()
						require.NoError(t, err, "%s %s", name, what)
						require.NotEmpty(t, es, "%s %s", name, what)
						for _, e := range es {
							require.Equal(t, want[e.Member], e.Rank, "%s %s: %s", name, what, e.Member)
						}
					}
					for _, m := range members {
						st, err := board.Rank(p.ctx, m)
						ranked("Rank("+m+")", []lb.Entry{st.Entry}, err)
						es, err := board.Around(p.ctx, m, 2)
						ranked("Around("+m+")", es, err)
					}
					sts, err := board.Ranks(p.ctx, members)
					require.NoError(t, err, "%s Ranks", name)
					for _, st := range sts {
						ranked("Ranks", []lb.Entry{st.Entry}, nil)
					}
					es, err := board.Top(p.ctx, 10)
					ranked("Top", es, err)
					es, err = board.Range(p.ctx, 2, 5)
					ranked("Range", es, err)
					es, err = board.Between(p.ctx, 5, 5, 10)
					ranked("Between(5, 5)", es, err)
					es, err = board.Between(p.ctx, math.Inf(-1), math.Inf(1), 10)
					ranked("Between(-Inf, +Inf)", es, err)
					e, err := board.Cutoff(p.ctx, 60)
					ranked("Cutoff(60)", []lb.Entry{e}, err)
					rank, es, err := board.AroundScore(p.ctx, 5, 2)
					ranked("AroundScore(5)", es, err)
					require.Equal(t, int64(2), rank, "%s AroundScore(5)", name)
				}
			})
		}
	})
}

// TestShardedAroundRoundTrips: Around keeps to its round trips (one on a
// single node, two on a Cluster) wherever the member sits: in the middle of
// the board, where it asks each shard for radius entries, and near either
// end or at a shard's edge, where the slice reaches 2*radius one way or
// into the next shard; its slice agrees with Page's.
func TestShardedAroundRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shardCombo{
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, seed: 7202},
			{policy: lb.Replace, order: lb.LowestFirst, rank: lb.Ordinal, seed: 7204},
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, tie: 1, seed: 7205}, // odd: WithReplicaReads
		} {
			t.Run(c.name(), func(t *testing.T) {
				ctx := context.Background()
				board, err := lb.New(b.Client, shardName(t, b), append(c.options(t), lb.WithShards(shardBounds...))...)
				require.NoError(t, err)
				// Four members a shard (bounds -2, 0, 1.5, 3), two of them tied.
				var members []string
				for k, score := range []float64{-3, -2.5, -1, -0.5, 0.5, 1, 2, 2.5, 4, 5} {
					for j := range 2 {
						m := fmt.Sprintf("m%d-%d", k, j)
						_, err := board.Submit(ctx, m, score)
						require.NoError(t, err)
						members = append(members, m)
					}
				}
				page, err := board.Page(ctx, 1, len(members))
				require.NoError(t, err)
				at := map[string]int{}
				for i, e := range page.Entries {
					at[e.Member] = i
				}
				trips := int64(1)
				if b.Name == "cluster" {
					trips = 2
				}
				for _, radius := range []int{1, 2, 4} {
					for _, m := range members {
						_, err := board.Around(ctx, m, radius) // loads every script on every node
						require.NoError(t, err)
						before := b.Client.Calls()
						es, err := board.Around(ctx, m, radius)
						require.NoError(t, err)
						n := b.Client.Calls() - before
						require.LessOrEqual(t, n, trips, "Around(%q, %d): %d round trips", m, radius, n)
						start := max(0, min(at[m]-radius, len(members)-2*radius-1))
						require.Equal(t, page.Entries[start:start+2*radius+1], es, "Around(%q, %d)", m, radius)
					}
				}
			})
		}
	})
}

func TestShardedTopBestShard(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shardCombo{
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Ordinal, seed: 7001},
			{policy: lb.Replace, order: lb.LowestFirst, rank: lb.Competition, seed: 7002},
		} {
			t.Run(c.name(), func(t *testing.T) {
				c.bounds = []float64{0, 10}
				p := newShardPair(t, b, c)
				best := func(i int) float64 { // a score in the best shard
					if c.order == lb.HighestFirst {
						return float64(10 + i%3)
					}
					return float64(-1 - i%3)
				}
				for i := range 5 {
					p.submit(fmt.Sprintf("b%d", i), best(i))
				}
				p.submit("mid", 5)
				p.submit("low", map[bool]float64{true: -3, false: 20}[c.order == lb.HighestFirst])
				// Loads shard_read.lua on every shard's node, so that no
				// NOSCRIPT retry is counted below, through another handle
				// on the board: what a board has seen of its shards is its
				// own.
				warm, err := lb.New(b.Client, p.sName, append(c.options(t), lb.WithShards(c.bounds...))...)
				require.NoError(t, err)
				_, err = warm.Page(p.ctx, 1, 1000)
				require.NoError(t, err)
				_, err = p.plain.Page(p.ctx, 2, 1) // first_better.lua on its node, under Competition
				require.NoError(t, err)
				top := func(n int, trips int64) {
					t.Helper()
					before := b.Client.Calls()
					shardSame(p, fmt.Sprintf("Top(%d)", n), func(board *lb.Leaderboard) ([]lb.Entry, error) { return board.Top(p.ctx, n) })
					// shardSame calls the unsharded board first, then the sharded one.
					require.Equal(t, 1+trips, b.Client.Calls()-before, "Top(%d): round trips of the sharded board", n)
				}
				page := func(number, size int, trips int64) {
					t.Helper()
					before := b.Client.Calls()
					shardSame(p, fmt.Sprintf("Page(%d, %d)", number, size), func(board *lb.Leaderboard) (lb.Page, error) {
						return board.Page(p.ctx, number, size)
					})
					require.Equal(t, 1+trips, b.Client.Calls()-before, "Page(%d, %d): round trips of the sharded board", number, size)
				}
				top(3, 1)  // the best shard alone
				top(10, 2) // it holds 5: the best shard, then every shard
				top(10, 1) // known now: every shard at once
				top(5, 1)  // the best shard alone again
				page(1, 5, 1)
				if c.rank == lb.Ordinal {
					page(2, 2, 1) // positions 3 and 4: still the best shard
				} else {
					page(2, 2, 2) // its first rank needs the members better than it
				}
				page(2, 4, 2) // past the best shard: counts, then the shards
				p.remove("b0", "b1", "b2", "b3")
				page(1, 2, 2) // it holds 1 now: the counts say so, then the shards
				page(1, 2, 2) // known: counts, then the shards
				top(1, 1)
				top(3, 1) // known: every shard at once
				p.submit("b0", best(0))
				top(2, 1) // grown back: every shard, which shows it
				top(2, 1) // the best shard alone again
			})
		}
	})
}

// TestShardedResetRacesWrites resets a sharded board again and again while
// writers submit to it. On one node every write is one script and a Reset
// one UNLINK, so each write lands wholly before or wholly after a reset,
// and the shards always agree with the partitions; on a Cluster a write's
// two steps can straddle a Reset (see Reset), and a Check with repair
// makes them agree.
func TestShardedResetRacesWrites(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, err := lb.New(b.Client, shardName(t, b), lb.WithShards(shardBounds...), lb.WithPolicy(lb.Replace),
			lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
		require.NoError(t, err)
		var fails failures
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(4300, uint64(w)))
				for {
					select {
					case <-stop:
						return
					default:
					}
					m := fmt.Sprintf("m%d", rng.IntN(40))
					if _, err := board.Submit(ctx, m, 0.5*float64(rng.IntN(17)-8)); err != nil {
						fails.add("writer %d: submit %q: %v", w, m, err)
						return
					}
				}
			}()
		}
		for range 20 {
			time.Sleep(2 * time.Millisecond)
			if err := board.Reset(ctx); err != nil {
				fails.add("reset: %v", err)
				break
			}
		}
		close(stop)
		wg.Wait()
		require.Empty(t, fails.list)
		if b.Name == "cluster" {
			_, err := board.Check(ctx, true)
			require.NoError(t, err)
		}
		reports, err := board.Check(ctx, false)
		require.NoError(t, err)
		for _, r := range reports {
			require.True(t, r.Clean(), "after resets racing writes: %+v", r)
		}
	})
}

// ---- 3. concurrency ----

// TestShardedConcurrentCluster has writers move members across the shards
// with Accumulate (half of them through one Batcher, which folds their
// submissions to a member into one write; and add and remove a few more
// members) while readers read and a Check repairs alongside: no answer may
// hold a member twice or be out of order, no increment may be lost, and
// the shards must end up consistent.
func TestShardedConcurrentCluster(t *testing.T) {
	t.Run("cluster", func(t *testing.T) {
		runShardConcurrent(t, testredis.Cluster(t), lb.HighestFirst, lb.Ordinal, 16, 30, 100, 4100)
	})
	t.Run("redis", func(t *testing.T) {
		runShardConcurrent(t, testredis.Real(t), lb.LowestFirst, lb.Competition, 8, 20, 40, 4200)
	})
	// Under Competition ranks a Cluster reads Rank and Around from the
	// member's partition first: members moving between the two steps.
	t.Run("cluster competition", func(t *testing.T) {
		runShardConcurrent(t, testredis.Cluster(t), lb.LowestFirst, lb.Competition, 16, 30, 60, 4300)
	})
}

func runShardConcurrent(t *testing.T, b *testredis.Backend, order lb.Order, rank lb.RankMode, writers, members, rounds int, seed uint64) {
	t.Logf("concurrent run on %s: %v/%v, %d writers × %d submits over %d members, seed=%d", b.Name, order, rank, writers, rounds, members, seed)
	ctx := context.Background()
	board, err := lb.New(b.Client, shardName(t, b), lb.WithShards(shardBounds...), lb.WithPolicy(lb.Accumulate),
		lb.WithOrder(order), lb.WithRanking(rank), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
	require.NoError(t, err)
	member := func(i int) string { return fmt.Sprintf("c%02d", i) }
	all := make([]string, members)
	for i := range all {
		all[i] = member(i)
	}

	var fails failures
	fail := fails.add

	batcher, err := board.NewBatcher(lb.WithBatchWindow(2 * time.Millisecond))
	require.NoError(t, err)
	submit := func(w int) func(context.Context, string, float64, ...lb.SubmitOption) (lb.Result, error) {
		if w%2 == 1 {
			return batcher.Submit
		}
		return board.Submit
	}
	sums := make([]map[string]float64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			s := map[string]float64{}
			sums[w] = s
			// Pairs of +v, -v±0.5 keep totals near the bounds, so members
			// keep crossing them; halves keep every sum exact.
			for i := 0; i+1 < rounds; i += 2 {
				if rng.IntN(4) == 0 {
					// Churn: members that come and go, across the bounds.
					cm := fmt.Sprintf("r%d", rng.IntN(shardChurn))
					var err error
					switch rng.IntN(3) {
					case 0:
						err = board.Remove(ctx, cm)
					case 1:
						_, err = board.Submit(ctx, cm, 0.5*float64(rng.IntN(13)-6))
					default:
						err = board.SubmitMany(ctx, map[string]float64{cm: 2.5, fmt.Sprintf("r%d", rng.IntN(shardChurn)): -2.5})
					}
					if err != nil {
						fail("writer %d: churn on %q: %v", w, cm, err)
						return
					}
					continue
				}
				m := member(rng.IntN(members))
				v := 0.5 * float64(1+rng.IntN(9))
				if rng.IntN(2) == 0 {
					v = -v
				}
				back := -v + 0.5*float64(rng.IntN(3)-1)
				for _, x := range []float64{v, back} {
					if _, err := submit(w)(ctx, m, x); err != nil {
						fail("writer %d: Submit(%q, %v): %v", w, m, x, err)
						return
					}
					s[m] += x
				}
			}
		}()
	}

	done := make(chan struct{})
	var reads atomic.Int64
	var rwg sync.WaitGroup
	queries := [][]lb.Query{nil, {lb.In(lb.Daily())}}
	for r := range 2 {
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			amongList := append(slices.Clone(all), all[0], all[members-1], "nobody", "r0", "r1", "r2")
			for i := 0; ; i++ {
				q := queries[(i+r)%2]
				top, err := board.Top(ctx, 1000, q...)
				if err != nil {
					fail("reader %d: Top: %v", r, err)
					return
				}
				checkShardAnswer(fail, fmt.Sprintf("reader %d: Top(1000) %d", r, i), order, top)
				for num := 1; num <= 5; num++ {
					pg, err := board.Page(ctx, num, 7, q...)
					if err != nil {
						fail("reader %d: Page(%d, 7): %v", r, num, err)
						return
					}
					checkShardAnswer(fail, fmt.Sprintf("reader %d: Page(%d, 7) %d", r, num, i), order, pg.Entries)
				}
				among, err := board.Among(ctx, amongList, q...)
				if err != nil {
					fail("reader %d: Among: %v", r, err)
					return
				}
				checkShardAnswer(fail, fmt.Sprintf("reader %d: Among %d", r, i), order, among)
				around, err := board.Around(ctx, all[i%members], 4, q...)
				if err != nil && !errors.Is(err, lb.ErrNotRanked) {
					fail("reader %d: Around: %v", r, err)
					return
				}
				checkShardAnswer(fail, fmt.Sprintf("reader %d: Around(%q, 4) %d", r, all[i%members], i), order, around)
				// A standing agrees with itself however the board moves.
				st, err := board.Rank(ctx, all[(i+r)%members], q...)
				switch {
				case errors.Is(err, lb.ErrNotRanked):
				case err != nil:
					fail("reader %d: Rank: %v", r, err)
					return
				case st.Rank < 1 || st.Rank > st.Total || st.Percentile < 0 || st.Percentile > 100:
					fail("reader %d: Rank(%q) %d: rank %d of %d, percentile %v", r, st.Member, i, st.Rank, st.Total, st.Percentile)
				}
				reads.Add(1)
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	// Check with repair, running alongside, may only ever fix things.
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			if _, err := board.Check(ctx, true); err != nil {
				fail("Check(true) during the run: %v", err)
				return
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	wg.Wait()
	require.NoError(t, batcher.Close(ctx))
	close(done)
	rwg.Wait()
	require.Empty(t, fails.list, "seed=%d", seed)
	require.Positive(t, reads.Load(), "the readers read nothing")
	t.Logf("%d reader rounds", reads.Load())

	total := map[string]float64{}
	for _, s := range sums {
		for m, v := range s {
			total[m] += v
		}
	}
	churned := make([]string, shardChurn)
	for i := range churned {
		churned[i] = fmt.Sprintf("r%d", i)
	}
	counts := map[int]int64{}
	for k, q := range queries {
		where := fmt.Sprintf("[%s seed=%d] %v", b.Name, seed, q)
		// The churned members' scores are whatever the races left: read
		// them, then the whole board must be the model of both.
		left, err := board.Among(ctx, churned, q...)
		require.NoError(t, err, where)
		board0 := maps.Clone(total)
		for _, e := range left {
			board0[e.Member] = e.Score
		}
		m := newModel(modelCombo{policy: lb.Accumulate, order: order, rank: rank})
		m.boards["alltime"] = board0
		want := m.entries("alltime")
		counts[k] = int64(len(board0))
		n, err := board.Count(ctx, q...)
		require.NoError(t, err)
		require.Equal(t, int64(len(board0)), n, "%s Count: distinct members submitted and churned members left", where)
		for mem, sum := range total {
			st, err := board.Rank(ctx, mem, q...)
			require.NoError(t, err, "%s Rank(%q)", where, mem)
			require.Equal(t, sum, st.Score, "%s Rank(%q).Score: the exact sum", where, mem)
			ws, _ := m.standing("alltime", mem)
			require.Equal(t, ws.Entry, st.Entry, "%s Rank(%q)", where, mem)
		}
		top, err := board.Top(ctx, 1000, q...)
		require.NoError(t, err)
		requireEntries(t, want, top, where+" Top(1000)")
	}
	reps, err := board.Check(ctx, false)
	require.NoError(t, err)
	require.Len(t, reps, 2)
	for _, r := range reps {
		k := 0
		if r.Window == "daily" {
			k = 1
		}
		requireCleanReport(t, r, counts[k], fmt.Sprintf("[%s seed=%d] Check after the run", b.Name, seed))
	}
}

// failures collects what goroutines of a test found wrong: the first 20.
type failures struct {
	mu   sync.Mutex
	list []string
}

func (f *failures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.list) < 20 {
		f.list = append(f.list, fmt.Sprintf(format, args...))
	}
}

// shardChurn is how many members the concurrent test adds and removes.
const shardChurn = 5

// checkShardAnswer reports a member returned twice in one answer, or an
// answer out of the board's order.
func checkShardAnswer(fail func(string, ...any), what string, order lb.Order, es []lb.Entry) {
	seen := map[string]bool{}
	for i, e := range es {
		if seen[e.Member] {
			fail("%s: %q returned twice: %v", what, e.Member, es)
			return
		}
		seen[e.Member] = true
		if i == 0 {
			continue
		}
		prev := es[i-1].Score
		if (order == lb.HighestFirst && e.Score > prev) || (order == lb.LowestFirst && e.Score < prev) {
			fail("%s: out of order at %d: %v", what, i, es)
			return
		}
	}
}

// ---- 4. Check finds and repairs ----

// TestShardedCheckRepairs writes faults straight into a sharded board's keys
// and requires Check to report exactly them without writing, and to repair
// them so that the board answers as the unsharded one again.
func TestShardedCheckRepairs(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shardCombo{
			{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Ordinal, seed: 5001},
			{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Competition, seed: 5002},
			{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Ordinal, tie: 1, seed: 5003},
		} {
			t.Run(c.name(), func(t *testing.T) {
				runShardRepair(t, b, c)
			})
		}
	})
}

// shardRepairScores are the board's members, spread over the shards.
var shardRepairScores = map[string]float64{
	"a": -4, "g": -3, // shard 0
	"b": -2, "dup": -1, // shard 1
	"c": 0, "old": 0.5, "peer": 1, // shard 2
	"d": 1.5, "mis": 2, // shard 3
	"e": 3, "gone": 4.5, "f": 5, // shard 4
}

func runShardRepair(t *testing.T, b *testredis.Backend, c shardCombo) {
	ctx := context.Background()
	p := newShardPair(t, b, c)
	members := slices.Sorted(func(yield func(string) bool) {
		for m := range shardRepairScores {
			if !yield(m) {
				return
			}
		}
	})
	for _, m := range members {
		p.submit(m, shardRepairScores[m])
	}
	views := shardViews()[:2]
	for _, v := range views {
		p.layout(v)
	}
	p.checkClean()

	all, day := views[0], views[1]
	cl := b.Client.Client
	do := func(cmd string, key string, args ...string) {
		t.Helper()
		require.NoError(t, cl.Do(ctx, cl.B().Arbitrary(cmd).Keys(key).Args(args...).Build()).Error(), "%s %s %v", cmd, key, args)
	}
	storedAll := partitionValues(t, b, p.sName, all.window, all.period)
	storedDay := partitionValues(t, b, p.sName, day.window, day.period)
	sk := func(v shardView, m string) string {
		return shardKey(p.sName, shardBounds, shardOf(shardBounds, shardRepairScores[m]), v.window, v.period)
	}
	at := func(v shardView, i int) string { return shardKey(p.sName, shardBounds, i, v.window, v.period) }

	// All-time: one fault of each kind. (a) misplaced: out of its shard (3)
	// into shard 0; (b) duplicated: a copy in shard 4; (c) missing; (d) a
	// stray in shard 2; (e) stale: peer's stored value in old's right shard.
	do("ZREM", sk(all, "mis"), "mis")
	do("ZADD", at(all, 0), storedAll["mis"], "mis")
	do("ZADD", at(all, 4), storedAll["dup"], "dup")
	do("ZREM", sk(all, "gone"), "gone")
	do("ZADD", sk(all, "peer"), storedAll["peer"], "stray")
	require.NotEqual(t, storedAll["old"], storedAll["peer"])
	require.Equal(t, sk(all, "old"), sk(all, "peer"))
	do("ZADD", sk(all, "old"), storedAll["peer"], "old")
	// Daily: missing e; b misplaced into shard 2 (its own is 1); two strays.
	do("ZREM", sk(day, "e"), "e")
	do("ZADD", at(day, 2), storedDay["b"], "b")
	do("ZREM", sk(day, "b"), "b")
	do("ZADD", at(day, 0), storedDay["a"], "ghost")
	do("ZADD", at(day, 3), storedDay["mis"], "ghost2")
	// Daily: c (shard 2) only in two wrong shards.
	do("ZREM", sk(day, "c"), "c")
	do("ZADD", at(day, 0), storedDay["c"], "c")
	do("ZADD", at(day, 4), storedDay["c"], "c")
	wantAll := lb.CheckReport{Window: "alltime", Period: all.period, Members: int64(len(members)),
		Misplaced: []string{"mis"}, Duplicated: []string{"dup"}, Missing: []string{"gone"}, Stray: []string{"stray"}, Stale: []string{"old"}}
	wantDay := lb.CheckReport{Window: "daily", Period: day.period, Members: int64(len(members)),
		Misplaced: []string{"b"}, Duplicated: []string{"c"}, Missing: []string{"e"}, Stray: []string{"ghost", "ghost2"}}

	before := shardSnapshot(t, b, p.sName)
	reps, err := p.sharded.Check(ctx, false)
	require.NoError(t, err)
	requireReports(t, []lb.CheckReport{wantAll, wantDay}, reps, p.where()+" Check(false)")
	reps, err = p.sharded.Check(ctx, false, lb.In(lb.Daily()))
	require.NoError(t, err)
	requireReports(t, []lb.CheckReport{wantDay}, reps, p.where()+" Check(false, In(Daily))")
	require.Equal(t, before, shardSnapshot(t, b, p.sName), "%s Check(false) wrote something", p.where())

	// Repairing the daily window alone leaves the all-time one as it was.
	reps, err = p.sharded.Check(ctx, true, lb.In(lb.Daily()))
	require.NoError(t, err)
	wantDay.Repaired = true
	requireReports(t, []lb.CheckReport{wantDay}, reps, p.where()+" Check(true, In(Daily))")
	reps, err = p.sharded.Check(ctx, false)
	require.NoError(t, err)
	requireReports(t, []lb.CheckReport{wantAll, {Window: "daily", Period: day.period, Members: int64(len(members))}}, reps,
		p.where()+" Check(false) after repairing the daily window")
	p.layout(day)

	reps, err = p.sharded.Check(ctx, true)
	require.NoError(t, err)
	wantAll.Repaired = true
	require.Len(t, reps, 2, "%s Check(true)", p.where())
	for _, r := range reps {
		if r.Window == "alltime" {
			requireReports(t, []lb.CheckReport{wantAll}, []lb.CheckReport{r}, p.where()+" Check(true)")
		} else {
			requireCleanReport(t, r, int64(len(members)), p.where()+" Check(true), daily (already repaired)")
		}
	}
	p.checkClean()
	for _, v := range views {
		p.layout(v)
		p.compare(v, append(slices.Clone(members), "stray", "ghost", "ghost2"), []string{"nobody", "x"})
	}

	// The repaired board keeps working as the unsharded one.
	p.submit("stray", 2.25)
	p.submit("mis", -5)
	p.submit("gone", 1.5)
	p.submit("old", 3)
	p.submit("dup", 0.5)
	p.submit("b", -1e-3)
	p.remove("e", "ghost")
	for _, v := range views {
		p.layout(v)
		p.compare(v, append(slices.Clone(members), "stray", "ghost", "ghost2"), []string{"nobody", "x"})
	}
	p.checkClean()
}

func requireReports(t *testing.T, want, got []lb.CheckReport, where string) {
	t.Helper()
	require.Len(t, got, len(want), "%s: reports %+v", where, got)
	norm := func(rs []lb.CheckReport) []lb.CheckReport {
		out := slices.Clone(rs)
		for i := range out {
			for _, l := range []*[]string{&out[i].Misplaced, &out[i].Duplicated, &out[i].Missing, &out[i].Stray, &out[i].Stale} {
				if len(*l) == 0 {
					*l = nil
				}
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Window < out[j].Window })
		return out
	}
	require.Equal(t, norm(want), norm(got), where)
}

// shardSnapshot returns every key of a sharded board (shards, recent versions,
// partitions) with its content and expiry.
func shardSnapshot(t *testing.T, b *testredis.Backend, name string) map[string]string {
	t.Helper()
	ctx := context.Background()
	c := b.Client.Client
	out := map[string]string{}
	for _, k := range boardKeys(t, b, name) {
		typ, err := c.Do(ctx, c.B().Type().Key(k).Build()).ToString()
		require.NoError(t, err)
		var content string
		switch typ {
		case "zset":
			zs, err := c.Do(ctx, c.B().Zrange().Key(k).Min("0").Max("-1").Withscores().Build()).AsZScores()
			require.NoError(t, err)
			var sb strings.Builder
			for _, z := range zs {
				sb.WriteString(z.Member + "=" + strconv.FormatFloat(z.Score, 'g', -1, 64) + " ")
			}
			content = sb.String()
		case "hash":
			h, err := c.Do(ctx, c.B().Hgetall().Key(k).Build()).AsStrMap()
			require.NoError(t, err)
			fields := make([]string, 0, len(h))
			for f, v := range h {
				fields = append(fields, f+"="+v)
			}
			sort.Strings(fields)
			content = strings.Join(fields, " ")
		default:
			content = "?"
		}
		exp, err := c.Do(ctx, c.B().Pexpiretime().Key(k).Build()).AsInt64()
		require.NoError(t, err)
		out[k] = typ + ": " + content + " exp=" + strconv.FormatInt(exp, 10)
	}
	return out
}

// ---- 5. a write that dies between its two round trips ----

// errCrash stands for a process or a connection dying in the middle of a
// write.
var errCrash = errors.New("injected crash")

// crashClient passes calls through to Redis until it is armed; then it
// fails the armed-th call from then and every call after it, without
// sending them, until disarmed: a process that died sends nothing more,
// and the calls of one round trip may be sent side by side (primaryOnly's
// reads beside a shard's write under WithReplicaReads), in any order.
// With drop set, it sends those calls' commands except the ones on a key
// holding drop (one node's part of the round trip lost).
type crashClient struct {
	rueidis.Client
	mu      sync.Mutex
	left    int64 // calls to pass before the crash; 0: not armed
	crashed bool  // the crash began
	drop    string
}

func (c *crashClient) arm(nth int64, drop string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.left, c.crashed, c.drop = nth, false, drop
}

// disarm ends the crash and tells whether it began.
func (c *crashClient) disarm() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	crashed := c.crashed
	c.left, c.crashed = 0, false
	return crashed
}

func (c *crashClient) hit() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return true
	}
	if c.left == 0 {
		return false
	}
	c.left--
	c.crashed = c.left == 0
	return c.crashed
}

func (c *crashClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if c.hit() {
		return rueidis.NewErrorResult(errCrash)
	}
	return c.Client.Do(ctx, cmd)
}

func (c *crashClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if !c.hit() {
		return c.Client.DoMulti(ctx, multi...)
	}
	out := make([]rueidis.RedisResult, len(multi))
	if c.drop == "" {
		for i := range out {
			out[i] = rueidis.NewErrorResult(errCrash)
		}
		return out
	}
	var send []rueidis.Completed
	var at []int
	for i := range multi {
		if slices.ContainsFunc(multi[i].Commands(), func(a string) bool { return strings.Contains(a, c.drop) }) {
			out[i] = rueidis.NewErrorResult(errCrash)
			continue
		}
		send = append(send, multi[i])
		at = append(at, i)
	}
	for j, r := range c.Client.DoMulti(ctx, send...) {
		out[at[j]] = r
	}
	return out
}

// TestShardedCrash kills a write between its partition step and its shard step
// (or loses one shard's part of it). Count stays exact, Check reports the
// member, and Check with repair, or per the package documentation the
// member's next write, brings the shards back to the partitions, after which the
// board answers as an unsharded one fed the writes that reached the partitions.
func TestShardedCrash(t *testing.T) {
	// Only a Cluster splits a write into two round trips: on one node every
	// write is one script, which cannot half-fail.
	func(t *testing.T, b *testredis.Backend) {
		type crashCase struct {
			name string
			// op is the write that crashes on the sharded board (returning
			// its error) and what the unsharded board is then fed.
			op func(board *lb.Leaderboard) error
			// drop: "" fails the whole second round trip; else the shard
			// whose part is lost, as "#s<i>." (its hash tag up to the layout).
			drop string
			// want is the report of each window after the crash.
			want func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport)
			// next is the member's next write (nil: repair with Check).
			next func(board *lb.Leaderboard) error
		}
		ctx := context.Background()
		submit := func(m string, s float64) func(*lb.Leaderboard) error {
			return func(board *lb.Leaderboard) error { _, err := board.Submit(ctx, m, s); return err }
		}
		misplaced := func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
			all.Misplaced, day.Misplaced = []string{"m"}, []string{"m"}
			return all, day
		}
		duplicated := func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
			all.Duplicated, day.Duplicated = []string{"m"}, []string{"m"}
			return all, day
		}
		missing := func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
			all.Missing, day.Missing = []string{"m"}, []string{"m"}
			return all, day
		}
		stray := func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
			all.Stray, day.Stray = []string{"m"}, []string{"m"}
			return all, day
		}
		remove := func(board *lb.Leaderboard) error { return board.Remove(ctx, "m") }
		many := func(board *lb.Leaderboard) error {
			return board.SubmitMany(ctx, map[string]float64{"m": 4, "n": 2.25})
		}
		// m starts at -3 (shard 0); 4 is in shard 4, 0.5 in shard 2.
		cases := []crashCase{
			{name: "Submit across shards, then Check", op: submit("m", 4), want: misplaced},
			{name: "Submit across shards, delete lost", op: submit("m", 4), drop: "#s0.", want: duplicated},
			{name: "Submit across shards, put lost", op: submit("m", 4), drop: "#s4.", want: missing},
			{name: "Submit within a shard", op: submit("m", -4), want: func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
				all.Stale, day.Stale = []string{"m"}, []string{"m"}
				return all, day
			}},
			{name: "Remove", op: remove, want: stray},
			{name: "SubmitMany", op: many, want: func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
				all.Misplaced, day.Misplaced = []string{"m"}, []string{"m"}
				all.Missing, day.Missing = []string{"n"}, []string{"n"}
				return all, day
			}},
			{name: "Submit across shards, then the next write moves it on", op: submit("m", 4), want: misplaced, next: submit("m", 0.5)},
			{name: "Submit across shards, then the next write stays", op: submit("m", 4), want: misplaced, next: submit("m", 4.5)},
			{name: "Submit within a shard, then the next write", op: submit("m", -4), want: func(all, day lb.CheckReport) (lb.CheckReport, lb.CheckReport) {
				all.Stale, day.Stale = []string{"m"}, []string{"m"}
				return all, day
			}, next: submit("m", -3.5)},
			{name: "Remove, then the next write", op: remove, want: stray, next: submit("m", 2)},
		}
		for i, cc := range cases {
			t.Run(cc.name, func(t *testing.T) {
				// Every other case under Competition ranks, whose reads
				// count by score with scripts.
				c := shardCombo{policy: lb.Replace, order: lb.HighestFirst, rank: []lb.RankMode{lb.Ordinal, lb.Competition}[i%2], seed: uint64(6000 + i)}
				p := newShardPair(t, b, c)
				crash := &crashClient{Client: b.Client}
				var err error
				p.sharded, err = lb.New(crash, p.sName, append(c.options(t), lb.WithShards(shardBounds...))...)
				require.NoError(t, err)
				for _, m := range []string{"a", "b", "c", "d", "e"} {
					p.submit(m, shardRepairScores[m])
				}
				// Every script the writes use is loaded on every node first:
				// a NOSCRIPT retry would move the crash to another call.
				p.submit("m", 4)
				p.submitMany(map[string]float64{"m": 2, "n": 0.5, "o": -3})
				p.remove("n", "o")
				p.submit("m", -3)

				views := shardViews()[:2]
				crash.arm(2, cc.drop)
				p.logf("crash in the second round trip of the next write (drop %q)", cc.drop)
				require.Error(t, cc.op(p.sharded), "the crashed write")
				require.True(t, crash.disarm(), "the crash did not happen: the write made fewer than two calls")
				require.NoError(t, cc.op(p.plain))

				// Count and every Total are the members the shards hold: a
				// crashed write's change is missing from them (as from the
				// ranks) until the member's next write or a Check repairs it;
				// the partitions (Among, Check) hold it already.
				for _, v := range views {
					held := int64(0)
					for i := range len(shardBounds) + 1 {
						held += int64(len(zscores(t, b, shardKey(p.sName, shardBounds, i, v.window, v.period))))
					}
					n, err := p.sharded.Count(ctx, v.q...)
					require.NoError(t, err)
					require.Equal(t, held, n, "%s Count after the crash", p.where())
					pg, err := p.sharded.Page(ctx, 1, 1, v.q...)
					require.NoError(t, err)
					require.Equal(t, held, pg.Total, "%s Page(1, 1).Total after the crash", p.where())
				}
				// Reads show a member once, with the value its partition
				// holds where a copy sits in the right shard.
				for _, v := range views {
					truth, err := p.sharded.Among(ctx, []string{"m", "n"}, v.q...)
					require.NoError(t, err)
					top, err := p.sharded.Top(ctx, 100, v.q...)
					require.NoError(t, err)
					pg, err := p.sharded.Page(ctx, 1, 100, v.q...)
					require.NoError(t, err)
					for _, es := range [][]lb.Entry{top, pg.Entries} {
						seen := map[string]bool{}
						for _, e := range es {
							require.False(t, seen[e.Member], "%s %s twice after the crash: %v", p.where(), e.Member, es)
							seen[e.Member] = true
							for _, tr := range truth {
								if tr.Member == e.Member && cc.drop == "#s0." {
									require.Equal(t, tr.Score, e.Score, "%s %s after the crash: the copy its partition holds", p.where(), e.Member)
								}
							}
						}
					}
				}
				n, err := p.plain.Count(ctx)
				require.NoError(t, err)
				wantAll, wantDay := cc.want(
					lb.CheckReport{Window: "alltime", Period: views[0].period, Members: n},
					lb.CheckReport{Window: "daily", Period: views[1].period, Members: n})
				reps, err := p.sharded.Check(ctx, false)
				require.NoError(t, err)
				requireReports(t, []lb.CheckReport{wantAll, wantDay}, reps, p.where()+" Check(false) after the crash")

				if cc.next != nil {
					// "A process that dies between a write's two round trips
					// leaves the member's shard entry behind its partition until
					// the member's next write or a Check with repair."
					require.NoError(t, cc.next(p.plain))
					require.NoError(t, cc.next(p.sharded), "the next write")
					p.logf("the next write")
					n, err := p.plain.Count(ctx)
					require.NoError(t, err)
					reps, err := p.sharded.Check(ctx, false)
					require.NoError(t, err)
					for _, r := range reps {
						requireCleanReport(t, r, n, p.where()+" Check(false) after the member's next write")
					}
				} else {
					reps, err := p.sharded.Check(ctx, true)
					require.NoError(t, err)
					wantAll.Repaired, wantDay.Repaired = true, true
					requireReports(t, []lb.CheckReport{wantAll, wantDay}, reps, p.where()+" Check(true) after the crash")
				}
				p.checkClean()
				for _, v := range shardViews() {
					p.layout(v)
					p.compare(v, []string{"a", "b", "c", "d", "e", "m", "n", "o"}, []string{"nobody"})
				}
			})
		}
	}(t, testredis.Cluster(t))
}

// TestShardedLateWrite: on a Cluster, a write whose second step reaches
// the shards more than 10 seconds after its first (a process paused
// between them) is refused there as late and redone with a new version
// (see versions.lua): alone, the member ends where the late write put it;
// a write of the same member that ran in between keeps its value. Either
// way the board ends as the unsharded one fed the same writes in the order
// their first steps ran.
func TestShardedLateWrite(t *testing.T) {
	b := testredis.Cluster(t)
	for _, cs := range []struct{ many, between bool }{{false, false}, {true, false}, {false, true}} {
		many := cs.many
		t.Run(fmt.Sprintf("many=%v,between=%v", cs.many, cs.between), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := shardCombo{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Ordinal, seed: 7000}
			p := newShardPair(t, b, c)
			for _, m := range []string{"a", "b", "c", "d", "e"} {
				p.submit(m, shardRepairScores[m])
			}
			p.submit("m", -3)
			pause := &pauseClient{Client: b.Client, paused: make(chan struct{})}
			slow, err := lb.New(pause, p.sName, append(c.options(t), lb.WithShards(shardBounds...))...)
			require.NoError(t, err)
			pause.arm(2, 10500*time.Millisecond)
			done := make(chan error, 1)
			go func() {
				if many {
					done <- slow.SubmitMany(ctx, map[string]float64{"m": 4})
					return
				}
				_, err := slow.Submit(ctx, "m", 4)
				done <- err
			}()
			<-pause.paused // m = 4 is in its partition; the shards wait
			_, err = p.plain.Submit(ctx, "m", 4)
			require.NoError(t, err)
			// A write in between, on time. Its Result is not compared: the
			// shards do not hold the late write's move yet, a write in
			// flight that its Previous rank cannot see.
			for _, board := range []*lb.Leaderboard{p.plain, p.sharded} {
				if cs.between {
					_, err = board.Submit(ctx, "m", 0.5)
					require.NoError(t, err)
				}
			}
			require.NoError(t, <-done, "the late write")
			p.checkClean()
			for _, v := range shardViews() {
				p.layout(v)
				p.compare(v, []string{"a", "b", "c", "d", "e", "m"}, []string{"nobody"})
			}
		})
	}
}

// pauseClient holds its armed call (the nth from arming) for a while
// before sending it, as a process that pauses mid-write; paused is closed
// when the hold starts.
type pauseClient struct {
	rueidis.Client
	armed  atomic.Int64
	hold   time.Duration
	paused chan struct{}
}

func (c *pauseClient) arm(nth int64, hold time.Duration) {
	c.hold = hold
	c.armed.Store(nth)
}

func (c *pauseClient) wait() {
	if c.armed.Load() > 0 && c.armed.Add(-1) == 0 {
		close(c.paused)
		time.Sleep(c.hold)
	}
}

func (c *pauseClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.wait()
	return c.Client.Do(ctx, cmd)
}

func (c *pauseClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	c.wait()
	return c.Client.DoMulti(ctx, multi...)
}

// TestShardedBulk loads a few thousand members with SubmitMany, then reads
// at the largest sizes the API allows: a sharded board must still answer as
// the unsharded one.
func TestShardedBulk(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shardCombo{
			{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Competition, seed: 7001},
			{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Ordinal, bounds: shardDense, seed: 7002},
		} {
			if b.Mini != nil && c.seed != 7001 {
				continue // miniredis's Lua is slow: one combo there
			}
			t.Run(c.name(), func(t *testing.T) {
				n := 2500
				if b.Mini != nil {
					n = 1200
				}
				p := newShardPair(t, b, c)
				members := make([]string, n)
				for round := range 2 {
					batch := make(map[string]float64, n)
					for i := range members {
						members[i] = fmt.Sprintf("p%04d", i)
						// Quarter steps from -6 to 6: heavy ties on every shard.
						batch[members[i]] = 0.25 * float64(p.rng.IntN(49)-24)
					}
					p.step = round
					p.submitMany(batch)
				}
				p.remove(members[:100]...)
				ctx := context.Background()
				for _, v := range shardViews()[:2] {
					where := p.where() + " view=" + v.name
					shardSame(p, where+" Count", func(board *lb.Leaderboard) (int64, error) { return board.Count(ctx, v.q...) })
					shardSame(p, where+" Top(1000)", func(board *lb.Leaderboard) ([]lb.Entry, error) { return board.Top(ctx, 1000, v.q...) })
					for _, num := range []int{1, 2, 3, 4} {
						shardSame(p, fmt.Sprintf("%s Page(%d, 1000)", where, num), func(board *lb.Leaderboard) (lb.Page, error) {
							return board.Page(ctx, num, 1000, v.q...)
						})
					}
					shardSame(p, where+" Page(101, 17)", func(board *lb.Leaderboard) (lb.Page, error) { return board.Page(ctx, 101, 17, v.q...) })
					shardSame(p, where+" Among(1000)", func(board *lb.Leaderboard) ([]lb.Entry, error) {
						return board.Among(ctx, members[50:1050], v.q...)
					})
					for _, m := range []string{members[0], members[100], members[n/2], members[n-1]} {
						shardSame(p, fmt.Sprintf("%s Rank(%q)", where, m), func(board *lb.Leaderboard) (lb.Standing, error) {
							return board.Rank(ctx, m, v.q...)
						})
						shardSame(p, fmt.Sprintf("%s Around(%q, 500)", where, m), func(board *lb.Leaderboard) ([]lb.Entry, error) {
							return board.Around(ctx, m, lb.MaxRadius, v.q...)
						})
					}
					p.layout(v)
				}
				p.checkClean()
			})
		}
	})
}

// TestShardedHintedReads: on a Cluster a Page, Range or Cutoff with
// IncludeData reads its entries beside the shards' counts, where the last
// counts place them. The answers are the unsharded board's whether the
// hint holds (two round trips) or the counts moved by more than its margin
// (three, the two-step way).
func TestShardedHintedReads(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		plain, err := lb.New(b.Client, shardName(t, b), lb.WithPolicy(lb.Replace))
		require.NoError(t, err)
		sharded, err := lb.New(b.Client, shardName(t, b), lb.WithPolicy(lb.Replace), lb.WithShards(shardBounds...))
		require.NoError(t, err)
		both := func(fn func(*lb.Leaderboard) error) {
			require.NoError(t, fn(plain))
			require.NoError(t, fn(sharded))
		}
		fill := func(prefix string, n int, score func(i int) float64) {
			both(func(board *lb.Leaderboard) error {
				scores := map[string]float64{}
				for i := range n {
					scores[fmt.Sprintf("%s%03d", prefix, i)] = score(i)
				}
				return board.SubmitMany(ctx, scores)
			})
		}
		fill("m", 300, func(i int) float64 { return float64(i%11) - 5 })
		both(func(board *lb.Leaderboard) error { return board.SetData(ctx, "m007", "Seven") })
		data := lb.IncludeData()
		reads := []struct {
			name string
			call func(*lb.Leaderboard) (any, error)
		}{
			// Positions past the best shard, whether it holds 100 more or not.
			{"Page(12, 20)", func(board *lb.Leaderboard) (any, error) { return board.Page(ctx, 12, 20, data) }},
			{"Range(240, 270)", func(board *lb.Leaderboard) (any, error) { return board.Range(ctx, 240, 270, data) }},
			{"Cutoff(50)", func(board *lb.Leaderboard) (any, error) { return board.Cutoff(ctx, 50, data) }},
		}
		check := func(when string, r int, wantCalls int64) {
			want, err := reads[r].call(plain)
			require.NoError(t, err)
			before := b.Client.Calls()
			got, err := reads[r].call(sharded)
			require.NoError(t, err)
			require.Equal(t, want, got, "%s %s", when, reads[r].name)
			if b.Name == "cluster" {
				require.Equal(t, wantCalls, b.Client.Calls()-before, "%s %s round trips", when, reads[r].name)
			}
		}
		// The first read has no counts to go by; every read's counts are
		// the next one's hint.
		check("without a hint", 0, 3)
		for r := range reads {
			check("with a hint", r, 2)
			// 100 members more in the best shard, or 100 fewer.
			if r%2 == 0 {
				fill("new", 100, func(int) float64 { return 4.5 })
			} else {
				both(func(board *lb.Leaderboard) error { _, err := board.RemoveBetween(ctx, 4.5, 4.5); return err })
			}
			check("after the counts moved", r, 3)
			check("with the new counts", r, 2)
		}
	})
}

// TestShardedRemoveBetweenPieces: a sharded board removes a range in
// pieces of a few hundred members (short scripts), all of them, with or
// without a store that records removals, and its layout checks clean.
func TestShardedRemoveBetweenPieces(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, withStore := range []bool{false, true} {
			opts := []lb.Option{lb.WithShards(shardBounds...)}
			if withStore {
				opts = append(opts, lb.WithStore(newMemStore()))
			}
			name := shardName(t, b)
			board, err := lb.New(b.Client, name, opts...)
			require.NoError(t, err)
			scores := map[string]float64{}
			for i := range 1450 {
				scores[fmt.Sprintf("m%04d", i)] = float64(i%9) - 4
			}
			require.NoError(t, board.SubmitMany(ctx, scores))
			// A stray in the range (in a shard, in no partition: a crashed
			// write's leftover) goes too, from every shard: a removal
			// clears a member from the shard of its partition's value
			// alone only when it has one.
			all := lb.AllTime().Period(future).ID
			for _, i := range []int{shardOf(shardBounds, 0), shardOf(shardBounds, 2)} {
				key := shardKey(name, shardBounds, i, "alltime", all)
				require.NoError(t, b.Client.Do(ctx, b.Client.B().Zadd().Key(key).ScoreMember().ScoreMember(float64(i)-1.5, "stray").Build()).Error())
			}
			calls := b.Client.Calls()
			n, err := board.RemoveBetween(ctx, -3, 2)
			require.NoError(t, err)
			if calls = b.Client.Calls() - calls; b.Name != "cluster" {
				// A chunk of 100 read, then removed (with a store recorded
				// between): two round trips, one script a removal. The
				// first chunk's read may load its script (one call more).
				chunks := (n + 1 + 99) / 100
				require.GreaterOrEqual(t, calls, 2*chunks, "store %v", withStore)
				require.LessOrEqual(t, calls, 2*chunks+2, "store %v", withStore)
			}
			// Swept, not counted: the count is of the members the
			// partitions (the board's truth) held within the range.
			requireGone(t, b, name, "stray")
			// Remove clears a stray from every shard too.
			for _, i := range []int{shardOf(shardBounds, -5), shardOf(shardBounds, 5)} {
				key := shardKey(name, shardBounds, i, "alltime", all)
				require.NoError(t, b.Client.Do(ctx, b.Client.B().Zadd().Key(key).ScoreMember().ScoreMember(float64(10*i-20), "stray2").Build()).Error())
			}
			require.NoError(t, board.Remove(ctx, "stray2"))
			requireGone(t, b, name, "stray2")
			left, err := board.Count(ctx)
			require.NoError(t, err)
			want := int64(0)
			for _, s := range scores {
				if s >= -3 && s <= 2 {
					want++
				}
			}
			require.Equal(t, want, n, "store %v", withStore)
			require.Equal(t, int64(1450)-want, left, "store %v", withStore)
			reps, err := board.Check(ctx, false)
			require.NoError(t, err)
			requireCleanReport(t, reps[0], left, fmt.Sprintf("store %v", withStore))
		}
	})
}

// TestRemoveBetweenExactChunks: RemoveBetween of a range that fills its
// last chunk exactly (MaxN members with a store that records removals;
// 100, a sharded board's piece, on one node) costs that chunk's round
// trips alone: it read one chunk more, which found none.
func TestRemoveBetweenExactChunks(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, c := range []struct {
			name   string
			shards []float64
			store  bool
			chunk  int
		}{
			{"plain store", nil, true, lb.MaxN},
			{"sharded", []float64{0, 1e6}, false, 100},
			{"sharded store", []float64{0, 1e6}, true, 100},
		} {
			if c.shards != nil && b.Name == "cluster" {
				continue // three round trips a chunk or more there (see RemoveBetween)
			}
			for _, n := range []int{c.chunk - 1, c.chunk, c.chunk + 1, 2 * c.chunk} {
				opts := []lb.Option{}
				if c.shards != nil {
					opts = append(opts, lb.WithShards(c.shards...))
				}
				if c.store {
					opts = append(opts, lb.WithStore(newMemStore()))
				}
				board, err := lb.New(b.Client, shardName(t, b), opts...)
				require.NoError(t, err)
				scores := map[string]float64{"keep": 1, "warm": 7e9}
				for i := range n {
					scores[fmt.Sprintf("cheat%04d", i)] = 1e6 + 5 + float64(i)
				}
				require.NoError(t, board.SubmitMany(ctx, scores))
				// The scripts loaded first: a removal of one member.
				got, err := board.RemoveBetween(ctx, 5e9, 8e9)
				require.NoError(t, err)
				require.Equal(t, int64(1), got)
				calls := b.Client.Calls()
				got, err = board.RemoveBetween(ctx, 1e6, math.Inf(1))
				require.NoError(t, err)
				require.Equal(t, int64(n), got)
				trips := 2 * ((n + c.chunk - 1) / c.chunk)
				if c.shards == nil && !c.store {
					trips /= 2
				}
				require.Equal(t, int64(trips), b.Client.Calls()-calls, "%s: round trips of a RemoveBetween of %d members", c.name, n)
			}
		}
	})
}

// requireGone fails unless no shard of board name's all-time period holds
// member.
func requireGone(t *testing.T, b *testredis.Backend, name, member string) {
	t.Helper()
	all := lb.AllTime().Period(future).ID
	for i := range len(shardBounds) + 1 {
		_, err := b.Client.Do(context.Background(), b.Client.B().Zscore().Key(shardKey(name, shardBounds, i, "alltime", all)).Member(member).Build()).ToFloat64()
		require.True(t, rueidis.IsRedisNil(err), "%s left in shard %d: %v", member, i, err)
	}
}

// recentBase is the shard key a piece of recent versions (keys.Recent)
// sits beside.
func recentBase(k string) (string, bool) {
	i := strings.LastIndex(k, ":v")
	if i < 0 {
		return "", false
	}
	v, n, ok := strings.Cut(k[i+2:], ":")
	p, err := strconv.Atoi(n)
	if !ok || (v != "0" && v != "1") || err != nil || p < 0 || p >= keys.RecentParts || strconv.Itoa(p) != n {
		return "", false
	}
	return k[:i], true
}

// TestShardedCheckKeepsOldLayoutBoards: a period whose members are all in
// its shards and in partitions under the keys of the layout before
// partitions shared tags (a board an older version wrote), none under this
// one's, is reported all stray, and a repair refuses to empty it: an
// error, the shards untouched; also after this version wrote a member of
// its own (a rolling upgrade's first write), which the refusal checked
// for only while this version's partitions were empty. Without those old
// keys (a period a Reset emptied while writes straddled it) the same
// strays are repaired away.
func TestShardedCheckKeepsOldLayoutBoards(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		c := b.Client.Client
		name := shardName(t, b)
		board, err := lb.New(b.Client, name, lb.WithShards(10, 20))
		require.NoError(t, err)
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 5, "b": 15, "c": 25}))
		parts := b.Keys(t, "lb:{"+name+"#p~*}:*:alltime")
		require.NotEmpty(t, parts)
		for _, k := range parts {
			require.NoError(t, c.Do(ctx, c.B().Del().Key(k).Build()).Error())
		}
		old := keys.NewBoard("lb", name).LegacyPartitions()[1234].Period("alltime", "alltime")
		require.NoError(t, c.Do(ctx, c.B().Hset().Key(old).FieldValue().FieldValue("a", "5").Build()).Error())
		reps, err := board.Check(ctx, false)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, reps[0].Stray)
		_, err = board.Check(ctx, true)
		require.ErrorContains(t, err, "older version")
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 3, n, "a refused repair left the shards")
		_, err = board.Submit(ctx, "newcomer", 30)
		require.NoError(t, err)
		_, err = board.Check(ctx, true)
		require.ErrorContains(t, err, "older version", "after a write of this version")
		n, err = board.Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 4, n, "a refused repair left the shards")
		err = board.Remove(ctx, "newcomer")
		require.NoError(t, err)

		require.NoError(t, c.Do(ctx, c.B().Del().Key(old).Build()).Error())
		reps, err = board.Check(ctx, true)
		require.NoError(t, err)
		require.True(t, reps[0].Repaired)
		n, err = board.Count(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		reps, err = board.Check(ctx, false)
		require.NoError(t, err)
		require.True(t, reps[0].Clean(), "%+v", reps[0])
	})
}
