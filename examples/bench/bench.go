package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"golang.org/x/sync/errgroup"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
)

// batchSize is how many members one SubmitMany of the load, and one ZADD of
// the ceiling, carries.
const batchSize = 1000

// poolSize is how many pre-drawn arguments (members, batches, friend lists)
// the operations pick from, so that drawing them costs the measured calls
// nothing.
const poolSize = 1 << 14

// bench is one board under test, and the plain sorted sets holding the same
// members that the raw versions of every operation read and write.
type bench struct {
	cfg   config
	c     *conn
	name  string
	board *leaderboard.Leaderboard
	// opts are the board's options; plainOpts the same without WithShards.
	opts, plainOpts []leaderboard.Option
	// bounds are the board's WithShards bounds (-shards); none unsharded.
	bounds  []float64
	windows []leaderboard.Window
	// raw are the plain sorted sets, one per window, in the windows' order.
	raw []rawKey
	// shardKeys is the board's own shard layout for the "rueidis shards"
	// versions; nil unsharded or with a tie-break.
	shardKeys *shardKeys

	members []string             // a pool of random members
	scores  []float64            // a pool of random submitted values
	batches []map[string]float64 // SubmitMany batches
	friends [][]string           // Among lists of 50
}

// rawKey is one plain sorted set of the raw versions.
type rawKey struct {
	key    string
	window string
	expire time.Time // zero: never
}

func newBench(cfg config, c *conn) (*bench, error) {
	b := &bench{cfg: cfg, c: c, name: cfg.name}
	if b.name == "" {
		b.name = randomName()
	}
	opts, err := b.boardOptions()
	if err != nil {
		return nil, err
	}
	board, err := leaderboard.New(c.rue, b.name, opts...)
	if err != nil {
		return nil, err
	}
	b.board, b.opts = board, opts
	b.shardKeys = newShardKeys(b)
	b.drawPools()
	return b, nil
}

// boardOptions builds the board's options from the flags, the raw sets
// beside it, and plainOpts (the options without WithShards).
func (b *bench) boardOptions() ([]leaderboard.Option, error) {
	cfg := b.cfg
	opts := []leaderboard.Option{
		leaderboard.WithKeyPrefix(cfg.prefix),
		leaderboard.WithPolicy(cfg.policy),
		leaderboard.WithOrder(cfg.order),
		leaderboard.WithRanking(cfg.ranking),
	}
	now := time.Now()
	rawBoard := keys.NewBoard(cfg.prefix, b.name+"-raw")
	for _, name := range cfg.windows {
		w, _ := windowByName(name)
		b.windows = append(b.windows, w)
		p := w.Period(now)
		rk := rawKey{key: rawBoard.Period(w.Name(), p.ID), window: w.Name()}
		if !p.End.IsZero() {
			rk.expire = p.End.Add(24 * time.Hour)
		}
		b.raw = append(b.raw, rk)
	}
	opts = append(opts, leaderboard.WithWindows(b.windows...))
	if cfg.tieBreak != "none" {
		tb, err := tieBreakOf(cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, leaderboard.WithTieBreak(tb))
	}
	b.plainOpts = slices.Clone(opts)
	if cfg.shards > 0 {
		b.bounds = make([]float64, cfg.shards-1)
		for i := range b.bounds {
			b.bounds[i] = float64(cfg.scoreMax) * float64(i+1) / float64(cfg.shards)
		}
		opts = append(opts, leaderboard.WithShards(b.bounds...))
	}
	return opts, nil
}

// tieBreakOf is the -tiebreak flag's encoding: 1 s resolution, room for
// Accumulate totals well past one submission.
func tieBreakOf(cfg config) (leaderboard.TieBreak, error) {
	o := leaderboard.TimeOrder{
		Epoch:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Resolution: time.Second,
		MaxScore:   float64(cfg.scoreMax) * 100,
	}
	var tb leaderboard.TieBreak
	var err error
	if cfg.tieBreak == "earlier" {
		tb, err = leaderboard.EarlierFirst(o)
	} else {
		tb, err = leaderboard.LaterFirst(o)
	}
	if err != nil {
		return nil, fmt.Errorf("-tiebreak %s with -score-max %d: %w", cfg.tieBreak, cfg.scoreMax, err)
	}
	return tb, nil
}

// drawPools draws the operations' arguments from the seed: members, scores,
// SubmitMany batches and Among lists.
func (b *bench) drawPools() {
	cfg := b.cfg
	r := rand.New(rand.NewPCG(cfg.seed, 0x62656e6368))
	b.members = make([]string, poolSize)
	b.scores = make([]float64, poolSize)
	for i := range b.members {
		b.members[i] = member(r.IntN(cfg.members))
		if cfg.policy == leaderboard.Accumulate {
			b.scores[i] = float64(r.IntN(100))
		} else {
			b.scores[i] = float64(r.IntN(cfg.scoreMax))
		}
	}
	b.batches = make([]map[string]float64, 16)
	n := min(batchSize, cfg.members)
	for i := range b.batches {
		m := make(map[string]float64, n)
		for len(m) < n {
			m[member(r.IntN(cfg.members))] = b.scores[r.IntN(poolSize)]
		}
		b.batches[i] = m
	}
	b.friends = make([][]string, 256)
	for i := range b.friends {
		f := make([]string, 50)
		for j := range f {
			f[j] = member(r.IntN(cfg.members))
		}
		b.friends[i] = f
	}
}

func member(i int) string { return "player:" + strconv.Itoa(i) }

// loadScore is member i's score as loaded: the same for the board and the
// raw sets, whatever the order the batches run in.
func (b *bench) loadScore(i int) float64 {
	x := uint64(i) ^ b.cfg.seed*0x9e3779b97f4a7c15
	// splitmix64
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x % uint64(b.cfg.scoreMax))
}

// loadReport is what loading cost.
type loadReport struct {
	// SDK and Raw are the wall times of loading with SubmitMany and with
	// plain pipelined ZADDs (the ceiling).
	SDK, Raw time.Duration
	// SDKBytes and RawBytes are the growth of Redis's used_memory (all
	// nodes) across each load, each read once Redis has no lazy frees
	// pending (UNLINKed keys of earlier runs would blur it).
	SDKBytes, RawBytes int64
	// MemoryKnown is false when INFO memory is not available (miniredis).
	MemoryKnown bool
}

// load writes the members into the board with SubmitMany and into the raw
// sets with ZADDs, batchSize members a call, cfg.loadConcurrency calls in
// flight, and measures both.
func (b *bench) load(ctx context.Context, progress console) (loadReport, error) {
	var rep loadReport
	m0, memOK := b.c.usedMemory(ctx)
	var err error
	rep.SDK, err = b.loadWith(ctx, progress, "SubmitMany", func(ctx context.Context, lo, hi int) error {
		batch := make(map[string]float64, hi-lo)
		for i := lo; i < hi; i++ {
			batch[member(i)] = b.loadScore(i)
		}
		if err := b.board.SubmitMany(ctx, batch); err != nil {
			return err
		}
		return b.loadData(ctx, b.board, false, lo, hi)
	})
	if err != nil {
		return rep, fmt.Errorf("load with SubmitMany: %w", err)
	}
	m1, _ := b.c.usedMemory(ctx)
	rep.Raw, err = b.loadWith(ctx, progress, "raw ZADD", func(ctx context.Context, lo, hi int) error {
		bd := b.c.rue.B()
		cmds := make(rueidis.Commands, 0, len(b.raw))
		for _, rk := range b.raw {
			z := bd.Zadd().Key(rk.key).ScoreMember()
			for i := lo; i < hi; i++ {
				z = z.ScoreMember(b.loadScore(i), member(i))
			}
			cmds = append(cmds, z.Build())
		}
		for _, r := range b.c.rue.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return b.loadData(ctx, nil, true, lo, hi)
	})
	if err != nil {
		return rep, fmt.Errorf("load with ZADD: %w", err)
	}
	m2, _ := b.c.usedMemory(ctx)
	if memOK {
		rep.SDKBytes, rep.RawBytes, rep.MemoryKnown = m1-m0, m2-m1, true
	}
	for _, rk := range b.raw {
		if !rk.expire.IsZero() {
			if err := b.c.rue.Do(ctx, b.c.rue.B().Pexpireat().Key(rk.key).MillisecondsTimestamp(rk.expire.UnixMilli()).Build()).Error(); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// loadWith calls write for every batch of batchSize members, from
// cfg.loadConcurrency goroutines, and returns how long the whole load took.
func (b *bench) loadWith(ctx context.Context, progress console, what string, write func(ctx context.Context, lo, hi int) error) (time.Duration, error) {
	n := b.cfg.members
	shown := newLoadProgress(progress, what, n)
	// The first error stops every goroutine (errgroup cancels ctx).
	g, ctx := errgroup.WithContext(ctx)
	var next atomic.Int64
	start := time.Now()
	for range b.cfg.loadConcurrency {
		g.Go(func() error {
			for {
				lo := int(next.Add(batchSize)) - batchSize
				if lo >= n {
					return nil
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				hi := min(lo+batchSize, n)
				if err := write(ctx, lo, hi); err != nil {
					return err
				}
				shown.add(hi - lo)
			}
		})
	}
	err := g.Wait()
	elapsed := time.Since(start)
	shown.finish(elapsed, err)
	return elapsed, err
}

// describe is the board's configuration in a line.
func (b *bench) describe() string {
	s := fmt.Sprintf("%d members, windows %v, policy %s, order %s", b.cfg.members, b.cfg.windows,
		policyName(b.cfg.policy), orderName(b.cfg.order))
	if b.cfg.ranking == leaderboard.Competition {
		s += ", competition ranks"
	}
	if b.cfg.shards > 0 {
		s += fmt.Sprintf(", %d shards", b.cfg.shards)
	}
	if b.cfg.tieBreak != "none" {
		s += ", tie-break " + b.cfg.tieBreak + " first"
	}
	return s + fmt.Sprintf(", scores in [0, %d)", b.cfg.scoreMax)
}

func policyName(p leaderboard.Policy) string {
	switch p {
	case leaderboard.KeepBest:
		return "KeepBest"
	case leaderboard.Replace:
		return "Replace"
	case leaderboard.Accumulate:
		return "Accumulate"
	}
	return "?"
}

func orderName(o leaderboard.Order) string {
	if o == leaderboard.LowestFirst {
		return "LowestFirst"
	}
	return "HighestFirst"
}

// worker is one goroutine's state while measuring: its own random source.
type worker struct {
	r *rand.Rand
}

func (w *worker) pick(n int) int { return w.r.IntN(n) }

// impl is one way of doing an operation.
type impl struct {
	// name is "sdk" or the baseline's name.
	name string
	// units is how many members one call handles (ops/s times units is
	// members/s).
	units int
	call  func(ctx context.Context, w *worker) error
}

// operation is one operation with its SDK version first and its baselines.
type operation struct {
	name, desc string
	impls      []impl
}

// errCheck turns a result that cannot be right into an error, so that a
// baseline doing less than the SDK cannot go unnoticed.
var errCheck = errors.New("unexpected reply")

func (b *bench) high() bool { return b.cfg.order == leaderboard.HighestFirst }

// rankFits reports whether rank is a rank the entry at 1-based position pos
// may hold: pos under Ordinal ranks; under Competition at most pos and at
// least 1, as ties share the best of their places.
func (b *bench) rankFits(rank, pos int64) bool {
	if b.cfg.ranking == leaderboard.Competition {
		return rank >= 1 && rank <= pos
	}
	return rank == pos
}

// ranksRun reports whether es, a stretch of the board, hold ranks that can
// follow one another: from 1 up, each one more than the last under
// Ordinal ranks, never less than the last under Competition.
func (b *bench) ranksRun(es []leaderboard.Entry) bool {
	for i := range es {
		switch {
		case es[i].Rank < 1:
			return false
		case i == 0:
		case b.cfg.ranking == leaderboard.Competition && es[i].Rank < es[i-1].Rank:
			return false
		case b.cfg.ranking == leaderboard.Ordinal && es[i].Rank != es[i-1].Rank+1:
			return false
		}
	}
	return true
}

// operation builds the named operation's implementations.
func (b *bench) operation(name string) operation {
	switch name {
	case "submit":
		return b.submitOp()
	case "submit-many":
		return b.submitManyOp()
	case "top":
		return b.topOp()
	case "rank":
		return b.rankOp()
	case "around":
		return b.aroundOp()
	case "page":
		return b.pageOp(1)
	case "page-deep":
		return b.pageOp(max(1, b.cfg.members/2/pageSize))
	case "among":
		return b.amongOp()
	case "count":
		return b.countOp()
	case "range":
		return b.rangeOp()
	case "between":
		return b.betweenOp()
	case "count-between":
		return b.countBetweenOp()
	case "around-score":
		return b.aroundScoreOp()
	case "cutoff":
		return b.cutoffOp()
	case "set":
		return b.setOp()
	case "top-data":
		return b.topDataOp()
	case "rank-data":
		return b.rankDataOp()
	}
	panic("unknown operation " + name)
}

// withBaselines adds the "rueidis competition" versions under
// -ranking competition (competition.go), and keeps only the SDK when
// -compare=false.
func (b *bench) withBaselines(op operation) operation {
	b.addCompetition(&op)
	if !b.cfg.compare {
		op.impls = op.impls[:1]
	}
	return op
}
