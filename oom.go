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
// trip more, only while Redis refuses writes. A board with WithReplicaReads
// reads that way already and is not wrapped.
type oomReads struct {
	backend
	lb   *Leaderboard
	once sync.Once
	alt  backend
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
		o.alt = build(o.lb.client, o.lb.name, c).be
	})
	return o.alt
}

// isOOM reports Redis's refusal of a command over its maxmemory.
func isOOM(err error) bool { return redisErrorIs(err, "OOM") }

// redisErrorIs reports whether err holds a Redis error reply of the kind
// code names ("OOM", "READONLY": its first word).
func redisErrorIs(err error, code string) bool {
	var re *rueidis.RedisError
	return err != nil && errors.As(err, &re) && strings.HasPrefix(re.Error(), code+" ")
}

func (o *oomReads) top(ctx context.Context, tg target, n int) ([]Entry, error) {
	es, err := o.backend.top(ctx, tg, n)
	if isOOM(err) {
		return o.scripted().top(ctx, tg, n)
	}
	return es, err
}

func (o *oomReads) rank(ctx context.Context, tg target, member string) (Standing, error) {
	st, err := o.backend.rank(ctx, tg, member)
	if isOOM(err) {
		return o.scripted().rank(ctx, tg, member)
	}
	return st, err
}

func (o *oomReads) cutoff(ctx context.Context, tg target, percent float64) ([]Entry, error) {
	es, err := o.backend.cutoff(ctx, tg, percent)
	if isOOM(err) {
		return o.scripted().cutoff(ctx, tg, percent)
	}
	return es, err
}

func (o *oomReads) ranks(ctx context.Context, tg target, members []string) ([]Standing, error) {
	st, err := o.backend.ranks(ctx, tg, members)
	if isOOM(err) {
		return o.scripted().ranks(ctx, tg, members)
	}
	return st, err
}

func (o *oomReads) around(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	es, err := o.backend.around(ctx, tg, member, radius)
	if isOOM(err) {
		return o.scripted().around(ctx, tg, member, radius)
	}
	return es, err
}

func (o *oomReads) page(ctx context.Context, tg target, start int64, count int, total bool) (Page, error) {
	p, err := o.backend.page(ctx, tg, start, count, total)
	if isOOM(err) {
		return o.scripted().page(ctx, tg, start, count, total)
	}
	return p, err
}

func (o *oomReads) between(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	es, err := o.backend.between(ctx, tg, r, n)
	if isOOM(err) {
		return o.scripted().between(ctx, tg, r, n)
	}
	return es, err
}

func (o *oomReads) countBetween(ctx context.Context, tg target, r scoreRange) (int64, error) {
	n, err := o.backend.countBetween(ctx, tg, r)
	if isOOM(err) {
		return o.scripted().countBetween(ctx, tg, r)
	}
	return n, err
}

func (o *oomReads) aroundScore(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, error) {
	r, es, err := o.backend.aroundScore(ctx, tg, edge, score, radius)
	if isOOM(err) {
		return o.scripted().aroundScore(ctx, tg, edge, score, radius)
	}
	return r, es, err
}

func (o *oomReads) walk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error) {
	es, next, err := o.backend.walk(ctx, tg, at, n)
	if isOOM(err) {
		return o.scripted().walk(ctx, tg, at, n)
	}
	return es, next, err
}

func (o *oomReads) among(ctx context.Context, tg target, members []string) ([]Entry, error) {
	es, err := o.backend.among(ctx, tg, members)
	if isOOM(err) {
		return o.scripted().among(ctx, tg, members)
	}
	return es, err
}

func (o *oomReads) count(ctx context.Context, tg target) (int64, error) {
	n, err := o.backend.count(ctx, tg)
	if isOOM(err) {
		return o.scripted().count(ctx, tg)
	}
	return n, err
}

func (o *oomReads) counts(ctx context.Context, tgs []target) ([]int64, error) {
	ns, err := o.backend.counts(ctx, tgs)
	if isOOM(err) {
		return o.scripted().counts(ctx, tgs)
	}
	return ns, err
}
