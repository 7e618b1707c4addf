package leaderboard

import (
	"context"
	"fmt"
)

// PeriodInfo is one readable period of a window.
type PeriodInfo struct {
	Period
	// Members is the period's member count; 0 when nobody played.
	Members int64
}

// Periods lists the readable periods of one window (the default, or In(w)):
// the current one first, then the closed ones within their retention,
// newest first, each with its member count (0: nobody played). The periods
// come from the window and the retention (WithRetention), never from
// scanning the keyspace; At returns ErrInvalidArgument. One round trip: the
// periods' counts in one DoMulti (on a sharded board every shard's count of
// every period).
func (lb *Leaderboard) Periods(ctx context.Context, q ...Query) (_ []PeriodInfo, err error) {
	defer endedWith(ctx, &err)
	w, err := lb.currentWindow(q, "Periods")
	if err != nil {
		return nil, err
	}
	tgs, err := lb.windowLivePeriods(w, lb.now())
	if err != nil {
		return nil, err
	}
	if err := notStarted(ctx, "periods"); err != nil {
		return nil, err
	}
	counts, err := lb.be.counts(ctx, tgs)
	if err != nil {
		return nil, wrap("periods", err)
	}
	out := make([]PeriodInfo, len(tgs))
	for i, tg := range tgs {
		out[i] = PeriodInfo{Period: tg.period, Members: counts[i]}
	}
	return out, nil
}

// currentWindow resolves the window a call on current periods names (the
// default, or In(w)); op's At is ErrInvalidArgument.
func (lb *Leaderboard) currentWindow(qs []Query, op string) (Window, error) {
	q, err := parseQueries(qs)
	if err != nil {
		return nil, err
	}
	if !q.at.IsZero() {
		return nil, fmt.Errorf("%w: %s works on current periods: At is not allowed", ErrInvalidArgument, op)
	}
	return lb.queryWindow(q)
}

// Reset empties the current period of one window (the default, or In(w))
// now: its members and their scores, in every shard and partition on a
// sharded board (both layouts during a move to new bounds); member data,
// ids and the other periods stay. With a store that can forget a period (a
// PeriodDeleter, as pgstore is), the store forgets the period's submissions first, so
// that a Rebuild does not bring them back: a store failure returns an
// error and leaves Redis untouched, a Redis failure after it returns an
// error matching ErrPending (run Reset again). Submissions after the reset
// count afresh. A write that runs while it does lands wholly before or
// wholly after it, except on a sharded board on a Cluster, where a write's
// two steps (partition, then shards) can straddle it and leave the member
// in a shard and in no partition, or the other way round, until Check
// repairs it: reset such a board while no writes run, or run Check with
// repair after. With a store, a write that runs while it does may land
// in the store and in Redis in different orders (each goes to the store
// first): one that reached the store before the store forgot the period
// and Redis after the reset is in Redis alone (Verify counts it under
// Extra, a Rebuild drops it); reset a period once its writes have
// stopped (at its end, say), or Verify after.
// At returns ErrInvalidArgument. One round trip: an UNLINK of the
// period's key; on a sharded board on one node one UNLINK of its shards and
// its 4096 partitions, atomic; on a Cluster one UNLINK a hash slot's keys
// in one DoMulti (with WithHotTop one more, which deletes the top mirror
// after the rest: see Delete).
func (lb *Leaderboard) Reset(ctx context.Context, q ...Query) (err error) {
	defer endedWith(ctx, &err)
	w, err := lb.currentWindow(q, "Reset")
	if err != nil {
		return err
	}
	now := lb.now()
	tg, err := lb.target(w, now)
	if err != nil {
		return err
	}
	if err := notStarted(ctx, "reset"); err != nil {
		return err
	}
	if d, ok := lb.store.(PeriodDeleter); ok {
		if err := d.DeletePeriod(ctx, lb.name, submissionPeriods([]target{tg})[0], now); err != nil {
			return storeErr("reset", err)
		}
		return lb.afterStore(ctx, "reset", wrap("reset", lb.be.clear(ctx, []target{tg}, false)), nil)
	}
	return wrap("reset", lb.be.clear(ctx, []target{tg}, false))
}

// Delete removes the whole board: every readable period of every window, and
// one starting within the clock skew (see WithClockSkew) (each shard and
// partition of a sharded board, both layouts during a move), its remembered
// WithID ids, member data and Rebuild's markers (see Present). With a store
// that can delete a board (a BoardDeleter, as pgstore is), the store's records
// of the board go first, so that a Rebuild does not bring it back: a store
// failure returns an error and leaves Redis untouched, a Redis failure after it
// returns an error matching ErrPending (run Delete again). Writes that run
// while it does may leave keys behind: stop them first. One round trip (a
// sharded board's keys past the first 500,000 take more: see below): one UNLINK
// of the board's keys (all in its slot), or on a sharded board one UNLINK a
// period (atomic) and one of the rest on one node, one UNLINK a hash slot's
// keys on a Cluster, in one DoMulti, the top mirrors (WithHotTop) last, so that
// one a read rebuilt meanwhile goes too; on a Cluster, whose pipelines to
// different nodes keep no order, that takes one more round trip, which leaves
// the mirrors' turn counters to expire 10 seconds later. A sharded board names
// each readable period's 4,096 partitions and its shards (on a Cluster each
// with its 2,048 recent versions) and sends them in DoMultis of about 500,000
// keys, one after another, a round trip each: a daily board with 8 shards kept
// for a year takes 4 on one node and 15 on a Cluster. A failure returns
// its error and leaves the periods after it: run Delete again.
func (lb *Leaderboard) Delete(ctx context.Context) (err error) {
	defer endedWith(ctx, &err)
	live, err := lb.livePeriods(lb.now())
	if err != nil {
		return err
	}
	if err := notStarted(ctx, "delete"); err != nil {
		return err
	}
	if d, ok := lb.store.(BoardDeleter); ok {
		if err := d.DeleteBoard(ctx, lb.name); err != nil {
			return storeErr("delete", err)
		}
		return lb.afterStore(ctx, "delete", wrap("delete", lb.be.clear(ctx, live, true)), nil)
	}
	return wrap("delete", lb.be.clear(ctx, live, true))
}
