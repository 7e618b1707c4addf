package pgstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// smClock is a settable board clock.
type smClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *smClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *smClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// smDay1 is noon UTC some two months ahead (a real Redis expires keys by
// its own clock).
var smDay1 = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 2, 0).Add(12 * time.Hour)

type smCombo struct {
	policy leaderboard.Policy
	order  leaderboard.Order
	rank   leaderboard.RankMode
	tb     string // "", "earlier", "later"
	shards []float64
	hot    int
	seed   uint64
}

func (c smCombo) name() string {
	return fmt.Sprintf("%v/%v/%v/tb=%s/shards=%v/hot=%d/seed=%d", c.policy, c.order, c.rank, c.tb, c.shards, c.hot, c.seed)
}

type smVal struct {
	score float64
	at    time.Time
}

type smModel struct {
	c      smCombo
	boards map[string]map[string]smVal // "alltime" or "daily/<id>"
}

func (m *smModel) board(k string) map[string]smVal {
	if m.boards[k] == nil {
		m.boards[k] = map[string]smVal{}
	}
	return m.boards[k]
}

func (m *smModel) better(a, b float64) bool {
	if m.c.order == leaderboard.HighestFirst {
		return a > b
	}
	return a < b
}

func (m *smModel) apply(k, mem string, s float64, at time.Time) {
	b := m.board(k)
	old, ok := b[mem]
	switch m.c.policy {
	case leaderboard.KeepBest:
		if !ok || m.better(s, old.score) {
			b[mem] = smVal{s, at}
		}
	case leaderboard.Replace:
		b[mem] = smVal{s, at}
	case leaderboard.Accumulate:
		if !ok {
			b[mem] = smVal{s, at}
		} else if s != 0 {
			sum := old.score + s
			if m.c.tb != "" {
				sum = math.Round(sum*100) / 100
			}
			b[mem] = smVal{sum, at}
		}
	}
}

func dayKey(t time.Time) string { return "daily/" + t.UTC().Format("2006-01-02") }

type smRun struct {
	t     *testing.T
	ctx   context.Context
	rng   *rand.Rand
	b     *testredis.Backend
	name  string
	board *leaderboard.Leaderboard
	clock *smClock
	m     *smModel
	log   []string
	day2  bool
}

var smMembers = []string{"a", "b", "c", "d", "e", "f", "g", "h", "A", "zz", "p:1", "p:10"}
var smScores = []float64{-5, -2, -0.5, 0, 0.25, 1, 1, 2, 2, 3, 3, 4.5, 7, 10, 0.1, 0.2, 0.7, -1.3}

func (r *smRun) member() string { return smMembers[r.rng.IntN(len(smMembers))] }
func (r *smRun) score() float64 { return smScores[r.rng.IntN(len(smScores))] }
func (r *smRun) logf(f string, a ...any) {
	r.log = append(r.log, fmt.Sprintf("%s ", r.clock.Now().Format("01-02T15:04:05"))+fmt.Sprintf(f, a...))
}

func (r *smRun) window() (string, leaderboard.Query) {
	if r.rng.IntN(2) == 0 {
		return dayKey(r.clock.Now()), leaderboard.In(leaderboard.Daily())
	}
	return "alltime", leaderboard.In(leaderboard.AllTime())
}

func (r *smRun) livePeriods() []string {
	out := []string{"alltime", dayKey(r.clock.Now())}
	if r.day2 {
		out = append(out, dayKey(r.clock.Now().Add(-24*time.Hour)))
	}
	return out
}

func (r *smRun) step() {
	now := r.clock.Now()
	switch x := r.rng.IntN(104); {
	case x >= 100 && x < 102 && r.day2:
		y := now.Add(-24*time.Hour + time.Duration(r.rng.IntN(3600))*time.Second)
		mem, s := r.member(), r.score()
		r.logf("Submit(%q, %v, WithTime(%v))", mem, s, y)
		_, err := r.board.Submit(r.ctx, mem, s, leaderboard.WithTime(y))
		require.NoError(r.t, err, "Submit WithTime")
		r.m.apply("alltime", mem, s, y)
		r.m.apply(dayKey(y), mem, s, y)
	case x >= 102:
		k, q := r.window()
		r.logf("Reset(%s)", k)
		require.NoError(r.t, r.board.Reset(r.ctx, q))
		delete(r.m.boards, k)
	case x < 45:
		mem, s := r.member(), r.score()
		r.logf("Submit(%q, %v)", mem, s)
		_, err := r.board.Submit(r.ctx, mem, s)
		require.NoError(r.t, err, "Submit")
		r.m.apply("alltime", mem, s, now)
		r.m.apply(dayKey(now), mem, s, now)
	case x < 65:
		k, q := r.window()
		mem, s := r.member(), r.score()
		r.logf("Set(%q, %v, %s)", mem, s, k)
		require.NoError(r.t, r.board.Set(r.ctx, mem, s, q), "Set")
		r.m.board(k)[mem] = smVal{s, now}
	case x < 80:
		batch := map[string]float64{}
		for range 1 + r.rng.IntN(4) {
			batch[r.member()] = r.score()
		}
		r.logf("SubmitMany(%v)", batch)
		require.NoError(r.t, r.board.SubmitMany(r.ctx, batch), "SubmitMany")
		for mem, s := range batch {
			r.m.apply("alltime", mem, s, now)
			r.m.apply(dayKey(now), mem, s, now)
		}
	case x < 90:
		ms := []string{r.member()}
		if r.rng.IntN(2) == 0 {
			ms = append(ms, r.member(), "ghost")
		}
		r.logf("Remove(%q)", ms)
		require.NoError(r.t, r.board.Remove(r.ctx, ms...), "Remove")
		for _, k := range r.livePeriods() {
			for _, mem := range ms {
				delete(r.m.board(k), mem)
			}
		}
	default:
		k, q := r.window()
		bounds := []float64{math.Inf(-1), -2, 0, 0.25, 1, 2, 3, 5, math.Inf(1)}
		a, b := bounds[r.rng.IntN(len(bounds))], bounds[r.rng.IntN(len(bounds))]
		lo, hi := min(a, b), max(a, b)
		r.logf("RemoveBetween(%v, %v, %s)", lo, hi, k)
		n, err := r.board.RemoveBetween(r.ctx, lo, hi, q)
		require.NoError(r.t, err, "RemoveBetween")
		var want int64
		for mem, v := range r.m.board(k) {
			if v.score >= lo && v.score <= hi {
				delete(r.m.board(k), mem)
				want++
			}
		}
		require.Equal(r.t, want, n, "RemoveBetween count")
	}
}

// queries gives the reads of every live period.
func (r *smRun) queries() map[string][]leaderboard.Query {
	now := r.clock.Now()
	out := map[string][]leaderboard.Query{
		"alltime":   {leaderboard.In(leaderboard.AllTime())},
		dayKey(now): {leaderboard.In(leaderboard.Daily())},
	}
	if r.day2 {
		y := now.Add(-24 * time.Hour)
		out[dayKey(y)] = []leaderboard.Query{leaderboard.In(leaderboard.Daily()), leaderboard.At(y)}
	}
	return out
}

// modelOrder sorts the model board as the board must.
func (r *smRun) modelOrder(k string) []leaderboard.Entry {
	b := r.m.boards[k]
	es := make([]leaderboard.Entry, 0, len(b))
	for mem, v := range b {
		es = append(es, leaderboard.Entry{Member: mem, Score: v.score})
	}
	high := r.m.c.order == leaderboard.HighestFirst
	sort.Slice(es, func(i, j int) bool {
		a, bb := es[i], es[j]
		if a.Score != bb.Score {
			if high {
				return a.Score > bb.Score
			}
			return a.Score < bb.Score
		}
		if r.m.c.tb != "" {
			ta, tb := b[a.Member].at.Truncate(time.Second), b[bb.Member].at.Truncate(time.Second)
			if !ta.Equal(tb) {
				if r.m.c.tb == "earlier" {
					return ta.Before(tb)
				}
				return ta.After(tb)
			}
		}
		if high {
			return a.Member > bb.Member
		}
		return a.Member < bb.Member
	})
	for i := range es {
		es[i].Rank = int64(i + 1)
		if r.m.c.rank == leaderboard.Competition {
			better := 0
			for _, o := range es {
				if r.m.better(o.Score, es[i].Score) {
					better++
				}
			}
			es[i].Rank = int64(better + 1)
		}
	}
	return es
}

func (r *smRun) checkModel() {
	for k, q := range r.queries() {
		got, err := r.board.Top(r.ctx, leaderboard.MaxN, q...)
		require.NoError(r.t, err)
		want := r.modelOrder(k)
		if len(want) == 0 {
			want = nil
		}
		if len(got) == 0 {
			got = nil
		}
		require.Equal(r.t, want, got, "model vs Top of %s", k)
		n, err := r.board.Count(r.ctx, q...)
		require.NoError(r.t, err)
		require.Equal(r.t, int64(len(want)), n, "Count of %s", k)
		// Ranks of every known member, with ghosts.
		ms := append(slices.Clone(smMembers), "ghost")
		st, err := r.board.Ranks(r.ctx, ms, q...)
		require.NoError(r.t, err)
		pos := map[string]leaderboard.Entry{}
		for _, e := range want {
			pos[e.Member] = e
		}
		for i, s := range st {
			e, ok := pos[ms[i]]
			if !ok {
				require.Equal(r.t, leaderboard.Standing{Entry: leaderboard.Entry{Member: ms[i]}, Total: int64(len(want))}, s, "Ranks unranked %s in %s", ms[i], k)
				continue
			}
			require.Equal(r.t, e, s.Entry, "Ranks %s in %s", ms[i], k)
			require.Equal(r.t, int64(len(want)), s.Total)
		}
		// Among a random subset.
		sub := []string{}
		for _, m := range ms {
			if r.rng.IntN(2) == 0 {
				sub = append(sub, m)
			}
		}
		if len(sub) > 0 {
			among, err := r.board.Among(r.ctx, sub, q...)
			require.NoError(r.t, err)
			var wantAmong []leaderboard.Entry
			for _, e := range want {
				if slices.Contains(sub, e.Member) {
					wantAmong = append(wantAmong, leaderboard.Entry{Member: e.Member, Score: e.Score})
				}
			}
			for i := range wantAmong {
				wantAmong[i].Rank = int64(i + 1)
				if r.m.c.rank == leaderboard.Competition {
					better := 0
					for _, o := range wantAmong {
						if r.m.better(o.Score, wantAmong[i].Score) {
							better++
						}
					}
					wantAmong[i].Rank = int64(better + 1)
				}
			}
			if len(among) == 0 {
				among = nil
			}
			require.Equal(r.t, wantAmong, among, "Among(%v) of %s", sub, k)
		}
	}
}

// view reads every live period whole.
func (r *smRun) view() map[string]any {
	out := map[string]any{}
	for k, q := range r.queries() {
		top, err := r.board.Top(r.ctx, leaderboard.MaxN, q...)
		require.NoError(r.t, err)
		out[k] = top
	}
	return out
}

func (r *smRun) requireVerifyClean(what string) {
	reports, err := r.board.Verify(r.ctx)
	require.NoError(r.t, err)
	for _, rep := range reports {
		require.True(r.t, rep.Clean(), "%s: Verify %+v", what, rep)
	}
}

func smNewBoard(t *testing.T, b *testredis.Backend, s *Store, c smCombo, name string, clock *smClock) *leaderboard.Leaderboard {
	opts := []leaderboard.Option{
		leaderboard.WithStore(s), leaderboard.WithPolicy(c.policy), leaderboard.WithOrder(c.order),
		leaderboard.WithRanking(c.rank), leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()),
		leaderboard.WithClock(clock.Now),
	}
	if c.tb != "" {
		o := leaderboard.TimeOrder{Epoch: smDay1.Add(-48 * time.Hour), Resolution: time.Second, MaxScore: 1e6, Decimals: 2}
		var tb leaderboard.TieBreak
		var err error
		if c.tb == "earlier" {
			tb, err = leaderboard.EarlierFirst(o)
		} else {
			tb, err = leaderboard.LaterFirst(o)
		}
		require.NoError(t, err)
		opts = append(opts, leaderboard.WithTieBreak(tb))
	}
	if c.shards != nil {
		opts = append(opts, leaderboard.WithShards(c.shards...))
	}
	if c.hot > 0 {
		opts = append(opts, leaderboard.WithHotTop(c.hot))
	}
	board, err := leaderboard.New(b.Client, name, opts...)
	require.NoError(t, err)
	return board
}

func smCombos() []smCombo {
	var out []smCombo
	i := 0
	for _, p := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate} {
		for _, tb := range []string{"", "earlier", "later"} {
			for _, sh := range [][]float64{nil, {0, 3}} {
				i++
				c := smCombo{policy: p, tb: tb, shards: sh, seed: uint64(7000 + i)}
				if i%2 == 0 {
					c.order = leaderboard.LowestFirst
				}
				if i%3 == 0 {
					c.rank = leaderboard.Competition
				}
				if i%4 == 1 {
					c.hot = 3
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// TestStoreModelCorrections drives store-backed boards with a random mix of
// Submit, Set, SubmitMany, Remove and RemoveBetween over two days, checks
// every live period against a Go model, then Verify, a wipe and a Rebuild
// that must give back what Redis had.
func TestStoreModelCorrections(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		s := newStore(t)
		rounds, _ := strconv.Atoi(os.Getenv("STORE_MODEL_ROUNDS"))
		for round := range max(rounds, 1) {
			for _, c := range smCombos() {
				c.seed += uint64(round) * 1000
				t.Run(c.name(), func(t *testing.T) {
					runStoreModel(t, b, s, c, 160)
				})
			}
		}
	})
}

func runStoreModel(t *testing.T, b *testredis.Backend, s *Store, c smCombo, steps int) {
	clock := &smClock{now: smDay1}
	name := b.BoardName(t)
	r := &smRun{t: t, ctx: context.Background(), rng: rand.New(rand.NewPCG(c.seed, c.seed*31)), b: b, name: name,
		board: smNewBoard(t, b, s, c, name, clock), clock: clock, m: &smModel{c: c, boards: map[string]map[string]smVal{}}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ops:\n%s", strings.Join(r.log, "\n"))
		}
	})
	for i := range steps {
		if i == steps/2 {
			clock.Set(smDay1.Add(24 * time.Hour))
			r.day2 = true
			r.logf("clock -> next day")
		} else {
			clock.Set(clock.Now().Add(time.Duration(r.rng.IntN(3)) * time.Second))
		}
		r.step()
		if i%20 == 19 {
			r.checkModel()
		}
	}
	r.checkModel()
	r.requireVerifyClean("before wipe")
	before := r.view()
	b.Wipe(t, name)
	rep, err := r.board.Rebuild(r.ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Refused)
	require.Equal(t, before, r.view(), "Rebuild gives back what Redis had")
	r.checkModel()
	r.requireVerifyClean("after rebuild")
}

// TestRefusedWritesLeaveNoTrace: a SubmitMany or a Set that is bad input
// (refused before Redis, or by Redis as it adds a total) writes nothing:
// no Redis key changes, no store row, on every kind of board.
func TestRefusedWritesLeaveNoTrace(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		tb, err := leaderboard.EarlierFirst(leaderboard.TimeOrder{Epoch: smDay1.Add(-48 * time.Hour), Resolution: time.Second, MaxScore: 1000, Decimals: 1})
		require.NoError(t, err)
		for _, sh := range [][]float64{nil, {0, 100, 500}} {
			for _, withTB := range []bool{false, true} {
				t.Run(fmt.Sprintf("shards=%v/tb=%v", sh, withTB), func(t *testing.T) {
					clock := &smClock{now: smDay1}
					name := b.BoardName(t)
					opts := []leaderboard.Option{leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate),
						leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()), leaderboard.WithClock(clock.Now)}
					if sh != nil {
						opts = append(opts, leaderboard.WithShards(sh...))
					}
					big := math.MaxFloat64
					if withTB {
						opts = append(opts, leaderboard.WithTieBreak(tb))
						big = 900
					}
					board, err := leaderboard.New(b.Client, name, opts...)
					require.NoError(t, err)
					seed := map[string]float64{"over": big}
					for i := range 300 {
						seed[fmt.Sprintf("m%03d", i)] = float64(i % 50)
					}
					require.NoError(t, board.SubmitMany(ctx, seed))
					clock.Set(smDay1.Add(5 * time.Second))
					rows := boardRows(t, s, name)
					before := b.Snapshot(t, name)
					// A batch in which one total leaves the board's range.
					batch := map[string]float64{"over": big}
					for i := range 300 {
						batch[fmt.Sprintf("m%03d", i)] = 1
						batch[fmt.Sprintf("new%03d", i)] = 2
					}
					err = board.SubmitMany(ctx, batch)
					if withTB {
						require.ErrorIs(t, err, leaderboard.ErrPrecision)
					} else {
						require.ErrorIs(t, err, leaderboard.ErrInvalidScore)
					}
					require.Equal(t, rows, boardRows(t, s, name), "store rows after a refused SubmitMany")
					require.Equal(t, before, b.Snapshot(t, name), "Redis after a refused SubmitMany")
					// Bad input to Set and SubmitMany, refused before anything.
					for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
						require.ErrorIs(t, board.Set(ctx, "m001", x), leaderboard.ErrInvalidScore)
						require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"m001": 1, "zz": x}), leaderboard.ErrInvalidScore)
					}
					require.ErrorIs(t, board.Set(ctx, "m001", 1, leaderboard.At(clock.Now())), leaderboard.ErrInvalidArgument)
					require.ErrorIs(t, board.Set(ctx, "", 1), leaderboard.ErrInvalidMember)
					require.ErrorIs(t, board.Set(ctx, strings.Repeat("x", leaderboard.MaxMemberLen+1), 1), leaderboard.ErrInvalidMember)
					_, err = board.RemoveBetween(ctx, 0, 1, leaderboard.At(clock.Now()))
					require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
					_, err = board.RemoveBetween(ctx, math.NaN(), 1)
					require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
					_, err = board.RemoveBetween(ctx, 2, 1)
					require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
					require.ErrorIs(t, board.Remove(ctx, "m001", ""), leaderboard.ErrInvalidMember)
					if withTB {
						require.ErrorIs(t, board.Set(ctx, "m001", 1000.5), leaderboard.ErrPrecision)
						require.ErrorIs(t, board.Set(ctx, "m001", 1.25), leaderboard.ErrPrecision)
						require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"m001": 1, "zz": 1.25}), leaderboard.ErrPrecision)
					}
					require.Equal(t, rows, boardRows(t, s, name), "store rows after bad input")
					var corr int
					require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.tCorrections+" WHERE board = $1", name).Scan(&corr))
					require.Zero(t, corr, "corrections after bad input")
					require.Equal(t, before, b.Snapshot(t, name), "Redis after bad input")
					requireVerify(t, board, true)
				})
			}
		}
	})
}

// TestRetractAfterCorrection: a submission Redis refuses after a
// Set, a Remove or a Reset of its member's period is retracted, and the
// store's kept standings stay those of the log with the correction, the
// removal or the reset: Verify is clean and a Rebuild gives the board
// Redis had.
func TestRetractAfterCorrection(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		tb, err := leaderboard.LaterFirst(leaderboard.TimeOrder{Epoch: smDay1.Add(-48 * time.Hour), Resolution: time.Second, MaxScore: 1000, Decimals: 1})
		require.NoError(t, err)
		for _, withTB := range []bool{false, true} {
			for _, sh := range [][]float64{nil, {0, 100}} {
				t.Run(fmt.Sprintf("tb=%v/shards=%v", withTB, sh), func(t *testing.T) {
					clock := &smClock{now: smDay1}
					tick := func() { clock.Set(clock.Now().Add(time.Second)) }
					name := b.BoardName(t)
					opts := []leaderboard.Option{leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate),
						leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()), leaderboard.WithClock(clock.Now)}
					big, refusal := 1.7e308, leaderboard.ErrInvalidScore
					if withTB {
						opts = append(opts, leaderboard.WithTieBreak(tb))
						big, refusal = 600, leaderboard.ErrPrecision
					}
					if sh != nil {
						opts = append(opts, leaderboard.WithShards(sh...))
					}
					board, err := leaderboard.New(b.Client, name, opts...)
					require.NoError(t, err)
					sub := func(m string, v float64, want error) {
						t.Helper()
						tick()
						_, err := board.Submit(ctx, m, v)
						if want == nil {
							require.NoError(t, err)
						} else {
							require.ErrorIs(t, err, want)
						}
					}
					sub("m", 5, nil)
					sub("o", 2, nil)
					sub("r", 7, nil)
					tick()
					require.NoError(t, board.Set(ctx, "m", big))
					sub("m", big, refusal)
					sub("m", 1, nil)
					tick()
					require.NoError(t, board.Set(ctx, "o", big, leaderboard.In(leaderboard.Daily())))
					sub("o", big, refusal) // refused in daily, which holds big
					sub("r", big, nil)
					tick()
					require.NoError(t, board.Remove(ctx, "r"))
					sub("r", 3, nil)
					sub("r", big, nil)
					sub("r", big, refusal)
					tick()
					require.NoError(t, board.Reset(ctx, leaderboard.In(leaderboard.Daily())))
					sub("m", big, refusal) // alltime refuses it
					sub("o", 4, nil)
					tick()
					require.NoError(t, board.Set(ctx, "o", big))
					sub("o", big, refusal)
					requireVerify(t, board, true)
					view := func() []any {
						return append(boardView(t, board), boardView(t, board, leaderboard.In(leaderboard.Daily()))...)
					}
					requireRebuildKeeps(t, b, name, board, view)
				})
			}
		}
	})
}
