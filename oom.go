package leaderboard

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/rueidis"
)

// oomReads is a board's backend with a way around a full Redis. Over its
// maxmemory under noeviction, Redis refuses every command queued in a
// MULTI, reads too, and serves plain commands and scripts that only read:
// the reads that are a MULTI (Rank, Ranks, a Page past the first, Between,
// AroundScore, Among with IncludeData, a sharded board's per-shard reads)
// would fail while Redis is full. Such a read that fails with OOM is read
// again as under WithReplicaReads, where no read sends a MULTI: one round
// trip more, only while Redis refuses writes; where that read fails too
// (a server before 7.0 has no EVALSHA_RO), the OOM error is returned. A
// board with WithReplicaReads reads that way already and is not wrapped.
type oomReads struct {
	backend
	lb      *Leaderboard
	once    sync.Once
	noMulti backend
}

// baseBackend is be without its oomReads wrapper.
func baseBackend(be backend) backend {
	if o, ok := be.(*oomReads); ok {
		return o.backend
	}
	return be
}

// scripted is the backend of the board as WithReplicaReads reads it, built
// at the first read that needs it: without the hot top, whose rebuild of
// a missing mirror is a write (the board's own read tried the mirror).
func (o *oomReads) scripted() backend {
	o.once.Do(func() {
		c := o.lb.cfg
		c.replicaReads, c.hotTop = true, 0
		o.noMulti = build(o.lb.client, o.lb.name, c).be
	})
	return o.noMulti
}

// again is a read's answer v and error err, or, when err is Redis's OOM,
// the answer of read on the board read without a MULTI (scripted), its
// ErrNotRanked included, unless that fails too.
func again[T any](o *oomReads, v T, err error, read func(backend) (T, error)) (T, error) {
	if !isOOM(err) {
		return v, err
	}
	// ErrNotRanked (a member not on the board) is that read's answer, not
	// a failure of it.
	if w, werr := read(o.scripted()); werr == nil || errors.Is(werr, ErrNotRanked) {
		return w, werr
	}
	return v, err
}

// scorePlace is AroundScore's two answers, and walked a walk chunk's, as one
// (again).
type scorePlace struct {
	rank int64
	es   []Entry
}

type walked struct {
	es   []Entry
	next walkCursor
}

// isOOM reports Redis's refusal of a command over its maxmemory.
func isOOM(err error) bool { return redisErrorIs(err, "OOM") }

// redisErrorIs reports whether err holds a Redis error reply of the kind
// code names ("OOM", "READONLY": its first word).
func redisErrorIs(err error, code string) bool {
	if err == nil {
		return false // before re, which errors.As makes escape: no allocation a read
	}
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), code+" ")
}

func (o *oomReads) top(ctx context.Context, tg target, n int) ([]Entry, error) {
	es, err := o.backend.top(ctx, tg, n)
	return again(o, es, err, func(b backend) ([]Entry, error) { return b.top(ctx, tg, n) })
}

func (o *oomReads) rank(ctx context.Context, tg target, member string) (Standing, error) {
	st, err := o.backend.rank(ctx, tg, member)
	return again(o, st, err, func(b backend) (Standing, error) { return b.rank(ctx, tg, member) })
}

func (o *oomReads) cutoff(ctx context.Context, tg target, percent float64) ([]Entry, error) {
	es, err := o.backend.cutoff(ctx, tg, percent)
	return again(o, es, err, func(b backend) ([]Entry, error) { return b.cutoff(ctx, tg, percent) })
}

func (o *oomReads) ranks(ctx context.Context, tg target, members []string) ([]Standing, error) {
	st, err := o.backend.ranks(ctx, tg, members)
	return again(o, st, err, func(b backend) ([]Standing, error) { return b.ranks(ctx, tg, members) })
}

func (o *oomReads) around(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	es, err := o.backend.around(ctx, tg, member, radius)
	return again(o, es, err, func(b backend) ([]Entry, error) { return b.around(ctx, tg, member, radius) })
}

func (o *oomReads) page(ctx context.Context, tg target, start int64, count int, total bool) (Page, error) {
	p, err := o.backend.page(ctx, tg, start, count, total)
	return again(o, p, err, func(b backend) (Page, error) { return b.page(ctx, tg, start, count, total) })
}

func (o *oomReads) between(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	es, err := o.backend.between(ctx, tg, r, n)
	return again(o, es, err, func(b backend) ([]Entry, error) { return b.between(ctx, tg, r, n) })
}

func (o *oomReads) countBetween(ctx context.Context, tg target, r scoreRange) (int64, error) {
	n, err := o.backend.countBetween(ctx, tg, r)
	return again(o, n, err, func(b backend) (int64, error) { return b.countBetween(ctx, tg, r) })
}

func (o *oomReads) aroundScore(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, error) {
	read := func(b backend) (scorePlace, error) {
		r, es, err := b.aroundScore(ctx, tg, edge, score, radius)
		return scorePlace{r, es}, err
	}
	p, err := read(o.backend)
	p, err = again(o, p, err, read)
	return p.rank, p.es, err
}

func (o *oomReads) walk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error) {
	read := func(b backend) (walked, error) {
		es, next, err := b.walk(ctx, tg, at, n)
		return walked{es, next}, err
	}
	w, err := read(o.backend)
	w, err = again(o, w, err, read)
	return w.es, w.next, err
}

func (o *oomReads) among(ctx context.Context, tg target, members []string) ([]Entry, error) {
	es, err := o.backend.among(ctx, tg, members)
	return again(o, es, err, func(b backend) ([]Entry, error) { return b.among(ctx, tg, members) })
}

func (o *oomReads) count(ctx context.Context, tg target) (int64, error) {
	n, err := o.backend.count(ctx, tg)
	return again(o, n, err, func(b backend) (int64, error) { return b.count(ctx, tg) })
}

func (o *oomReads) counts(ctx context.Context, tgs []target) ([]int64, error) {
	ns, err := o.backend.counts(ctx, tgs)
	return again(o, ns, err, func(b backend) ([]int64, error) { return b.counts(ctx, tgs) })
}
