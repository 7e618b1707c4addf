package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// Submit applies the board's policy to member's score in every configured
// window, atomically, in one round trip, and sets each windowed key's expiry
// to its period's end plus the retention. A sharded board on a Cluster
// spends two (three when it sweeps a copy a crashed write left behind) and
// is atomic per step; see WithShards.
//
// The period each window writes to is the one holding the submission's time
// (the board's clock, or WithTime). A window whose period has already expired
// is skipped and reported Closed.
//
// A NaN or ±Inf score, or an Accumulate total that would overflow, returns
// ErrInvalidScore; a bad member ErrInvalidMember; a time more than the
// board's WithClockSkew after the clock's now ErrInvalidArgument. On a
// tie-broken board, a score or time the encoding cannot hold exactly, or an
// Accumulate total beyond MaxScore, returns ErrPrecision. Nothing is written
// then: not in Redis, and not in a store that is a Retractor (Redis alone
// finds a total out of range, after the store has appended it; Submit then
// retracts it).
//
// With a store, Submit appends to it first (see WithStore and WithID); a
// store failure leaves Redis untouched, a Redis failure after the store
// returns an error matching ErrPending.
func (lb *Leaderboard) Submit(ctx context.Context, member string, score float64, opts ...SubmitOption) (Result, error) {
	sub, err := lb.newSubmission(member, score, opts)
	if err != nil {
		return Result{}, err
	}
	res := Result{Windows: make([]WindowResult, len(lb.windows))}
	live, where, err := lb.submitTargets(sub, res.Windows)
	if err != nil {
		return Result{}, err
	}
	if lb.store != nil {
		if err := lb.appendSubmission(ctx, &sub, live); err != nil {
			return Result{}, err
		}
	}
	if len(live) > 0 {
		if err := lb.be.submit(ctx, sub, live, where, &res); err != nil {
			return Result{}, lb.afterRefusal(ctx, "submit", err, sub.record)
		}
	}
	first := res.Windows[0]
	res.Standing, res.Previous, res.Changed = first.Standing, first.Previous, first.Changed
	return res, nil
}

// newSubmission checks a Submit's arguments and options and encodes the
// score as Redis stores it.
func (lb *Leaderboard) newSubmission(member string, score float64, opts []SubmitOption) (submission, error) {
	if err := checkMember(member); err != nil {
		return submission{}, err
	}
	if err := checkScore(score); err != nil {
		return submission{}, err
	}
	if score == 0 {
		score = 0 // -0 would be stored as "-0"
	}
	var sc submitConfig
	for _, opt := range opts {
		if opt == nil {
			return submission{}, fmt.Errorf("%w: nil submit option", ErrInvalidArgument)
		}
		opt(&sc)
	}
	if sc.hasID && (sc.id == "" || len(sc.id) > MaxIDLen) {
		return submission{}, fmt.Errorf("%w: WithID id of %d bytes, want 1..%d", ErrInvalidArgument, len(sc.id), MaxIDLen)
	}
	now := lb.now()
	sub := submission{member: member, score: score, stored: score, id: sc.id, at: now, reached: now}
	if !sc.at.IsZero() {
		switch {
		case !sc.at.After(now):
			sub.reached = sc.at
		case sc.at.Sub(now) > lb.skew:
			return submission{}, fmt.Errorf("%w: WithTime %v is %v after the clock's now %v, more than the board's clock skew %v",
				ErrInvalidArgument, sc.at, sc.at.Sub(now), now, lb.skew)
		}
		// Within the skew: another server's clock a little ahead of ours;
		// the score was reached now.
	}
	if lb.tb != nil {
		var err error
		if sub.s, err = lb.tb.scaled(score); err != nil {
			return submission{}, err
		}
		if sub.t, err = lb.tb.slot(sub.reached); err != nil {
			return submission{}, err
		}
		sub.stored = lb.tb.encode(sub.s, sub.t, lb.high())
	}
	return sub, nil
}

// submitTargets resolves the period of every window holding the
// submission's time into out, and returns the live ones (live[j] reports
// into out[where[j]]); a window whose period has expired is reported Closed.
func (lb *Leaderboard) submitTargets(sub submission, out []WindowResult) (live []target, where []int, err error) {
	live = make([]target, 0, len(lb.windows))
	where = make([]int, 0, len(lb.windows))
	now := sub.at.UnixMilli()
	for i, w := range lb.windows {
		tg, err := lb.target(w, sub.reached)
		if err != nil {
			return nil, nil, err
		}
		out[i] = WindowResult{Window: w.Name(), Period: tg.period.ID, Previous: Entry{Member: sub.member}}
		if tg.expire != 0 && tg.expire <= now {
			out[i].Closed = true
			continue
		}
		live = append(live, tg)
		where = append(where, i)
	}
	return live, where, nil
}

// appendSubmission records sub in the store before it reaches Redis: once
// the store holds it, nothing that goes wrong in Redis can lose it. When the
// store reports its id a duplicate, it decides with the store whether Redis
// may still apply it (see storeKnowsApplied).
func (lb *Leaderboard) appendSubmission(ctx context.Context, sub *submission, live []target) error {
	sub.record = lb.storeSubmission(sub.member, sub.score, sub.id, sub.reached, sub.at, live)
	dup, err := lb.store.Append(ctx, sub.record)
	if err != nil {
		return fmt.Errorf("leaderboard: submit: store: %w (Redis was not written)", err)
	}
	if dup && sub.id != "" {
		if sub.storeSeen, err = lb.storeKnowsApplied(ctx, sub); err != nil {
			return fmt.Errorf("leaderboard: submit: store: %w (Redis was not written)", err)
		}
	}
	return nil
}

// storeKnowsApplied reports whether a submission whose id the store already
// holds is to be taken as applied whatever Redis remembers. Redis's id set
// is a cache of the store's ids over the dedupe window (Rebuild restores
// it): for an id the store received within the window, Redis knows whether
// it applied it, and a retry of one that reached the store but not Redis
// (ErrPending, a timeout) is applied there once. An id received before the
// window, or by a store that cannot say when (not an IDKeeper), was applied
// as far as anyone can know: the store wins.
func (lb *Leaderboard) storeKnowsApplied(ctx context.Context, sub *submission) (bool, error) {
	k, ok := lb.store.(IDKeeper)
	if !ok {
		return true, nil
	}
	received, found, err := k.IDReceived(ctx, lb.name, sub.id)
	if err != nil {
		return false, err
	}
	return !found || !received.Add(lb.dedupe).After(sub.at), nil
}

// afterRefusal turns a Redis error after the store step into Submit's (and
// SubmitMany's) answer: a refusal (ErrInvalidScore, ErrPrecision) retracts
// what the store appended, so bad input leaves nothing behind; any other
// error means the store holds what Redis does not: ErrPending.
func (lb *Leaderboard) afterRefusal(ctx context.Context, op string, err error, appended ...Submission) error {
	if lb.store == nil || len(appended) == 0 {
		return err
	}
	if !errors.Is(err, ErrInvalidScore) && !errors.Is(err, ErrPrecision) {
		return fmt.Errorf("%w: %w", ErrPending, err)
	}
	r, ok := lb.store.(Retractor)
	if !ok {
		return err
	}
	if rerr := r.Retract(ctx, appended); rerr != nil {
		return fmt.Errorf("%w (leaderboard: %s: store: retracting the refused submission: %v; it stays in the store)", err, op, rerr)
	}
	return err
}

// submission is one checked Submit, ready for Redis.
type submission struct {
	member  string
	score   float64   // as submitted
	stored  float64   // what ZADD stores: the score, or its tie-break composite
	s, t    int64     // with a tie-break: the scaled score and the time slot
	id      string    // WithID; "" for none
	at      time.Time // the board's clock at the call
	reached time.Time // when the score was reached: WithTime, or at
	// record is what the store was given (Board empty without a store).
	record Submission
	// storeSeen: the store holds the id and wins over Redis's memory.
	storeSeen bool
}

// incrNeverOverflows bounds the Accumulate increments that Submit sends as a
// plain ZINCRBY: a finite total t plus an x with |x| < 2^970 never rounds to
// ±Inf, since overflow needs |t + x| to reach MaxFloat64 plus half its ulp
// (2^970). Larger increments, which could overflow, go through the script,
// which refuses an overflowing total before writing anything.
const incrNeverOverflows = 0x1p970

// submitReplies decodes six values a window of what submit.lua (and
// shard_local.lua) return, and submit.lua's closing duplicate flag.
func (lb *Leaderboard) submitReplies(replies []rueidis.RedisMessage, member string, live []target, where []int, res *Result) error {
	var err error
	const perWindow = 6
	if len(replies) == perWindow*len(live)+1 {
		dup, err := replies[len(replies)-1].AsInt64()
		if err != nil {
			return wrap("submit", err)
		}
		res.Duplicate = dup == 1
		replies = replies[:len(replies)-1]
	}
	if len(replies) != perWindow*len(live) {
		return wrap("submit", fmt.Errorf("script returned %d values, want %d", len(replies), perWindow*len(live)))
	}
	out := res.Windows
	for j := range live {
		r := replies[perWindow*j : perWindow*(j+1)]
		wr := &out[where[j]]
		var v [4]int64 // previous rank, rank, total, worse
		for k, at := range [4]int{1, 3, 4, 5} {
			if v[k], err = r[at].AsInt64(); err != nil {
				return wrap("submit", err)
			}
		}
		prevRank, rank, total, worse := v[0], v[1], v[2], v[3]
		prev, had, err := optFloat(&r[0])
		if err != nil {
			return wrap("submit", err)
		}
		after, ranked, err := optFloat(&r[2])
		if err != nil {
			return wrap("submit", err)
		}
		if had {
			wr.Previous = Entry{Member: member, Score: lb.plain(prev), Rank: prevRank}
		}
		if !ranked {
			// A duplicate WithID retry for a member removed since: nothing
			// was written, and the member has no standing.
			wr.Standing = Standing{Entry: Entry{Member: member}, Total: total}
			continue
		}
		wr.Changed = !res.Duplicate && (!had || lb.plain(prev) != lb.plain(after))
		wr.Standing = lb.standing(member, lb.plain(after), rank, worse, total)
	}
	return nil
}

// SubmitMany applies the board's policy to many members' scores in every
// configured window's current period, atomically, in one round trip (two
// on a sharded board, atomic per step: see WithShards). It is
// the bulk load: it reports no standings. Every member and score is checked
// first; one bad entry refuses the whole batch and nothing is written. With
// a store, the batch goes to the store first (in one call when it is a
// BatchAppender), stamped with the board's clock.
func (lb *Leaderboard) SubmitMany(ctx context.Context, scores map[string]float64) error {
	for m, s := range scores {
		if err := checkMember(m); err != nil {
			return err
		}
		if err := checkScore(s); err != nil {
			return fmt.Errorf("%w (member %q)", err, m)
		}
		if lb.tb != nil {
			if _, err := lb.tb.scaled(s); err != nil {
				return fmt.Errorf("%w (member %q)", err, m)
			}
		}
	}
	if len(scores) == 0 {
		return nil
	}
	now := lb.now()
	live := make([]target, 0, len(lb.windows))
	for _, w := range lb.windows {
		tg, err := lb.target(w, now)
		if err != nil {
			return err
		}
		live = append(live, tg)
	}
	var slot int64
	if lb.tb != nil {
		var err error
		if slot, err = lb.tb.slot(now); err != nil {
			return err
		}
	}
	if lb.store == nil {
		return lb.be.submitMany(ctx, scores, live, slot)
	}
	subs, err := lb.appendMany(ctx, scores, now, live)
	if err != nil {
		return fmt.Errorf("leaderboard: submit many: store: %w (Redis was not written)", err)
	}
	if err := lb.be.submitMany(ctx, scores, live, slot); err != nil {
		return lb.afterRefusal(ctx, "submit many", err, subs...)
	}
	return nil
}

// storeSubmission is a submission as the store records it, with the
// periods it is written to in Redis (live).
func (lb *Leaderboard) storeSubmission(member string, score float64, id string, at, received time.Time, live []target) Submission {
	return Submission{Board: lb.name, ID: id, Member: member, Score: score, At: at, Received: received,
		Policy: lb.policy, Order: lb.order, Periods: submissionPeriods(live)}
}

// submissionPeriods lists the periods of targets for a Submission.
func submissionPeriods(live []target) []SubmissionPeriod {
	out := make([]SubmissionPeriod, len(live))
	for i, tg := range live {
		out[i] = SubmissionPeriod{Window: tg.window.Name(), Period: tg.period.ID, Start: tg.period.Start, End: tg.period.End}
	}
	return out
}

// appendMany records a SubmitMany batch in the store, in one call when the
// store takes batches (BatchAppender). Every submission shares one Periods
// slice: stores only read it.
func (lb *Leaderboard) appendMany(ctx context.Context, scores map[string]float64, at time.Time, live []target) ([]Submission, error) {
	subs := make([]Submission, 0, len(scores))
	periods := submissionPeriods(live)
	for m, s := range scores {
		subs = append(subs, Submission{Board: lb.name, Member: m, Score: s, At: at, Received: at,
			Policy: lb.policy, Order: lb.order, Periods: periods})
	}
	if ba, ok := lb.store.(BatchAppender); ok {
		_, err := ba.AppendBatch(ctx, subs)
		return subs, err
	}
	for _, sub := range subs {
		if _, err := lb.store.Append(ctx, sub); err != nil {
			return nil, err
		}
	}
	return subs, nil
}

// incrsNeverOverflow reports whether every increment is below
// incrNeverOverflows, so that no ZINCRBY of them can overflow.
func incrsNeverOverflow(scores map[string]float64) bool {
	for _, s := range scores {
		if math.Abs(s) >= incrNeverOverflows {
			return false
		}
	}
	return true
}

// idArgs appends a write script's WithID arguments: the id (empty for none),
// now, and when Redis forgets the id, in unix ms, or "store" when the store
// reports the id applied (storeKnowsApplied).
func (lb *Leaderboard) idArgs(args []string, sub submission) []string {
	now := sub.at.UnixMilli()
	forget := strconv.FormatInt(now+lb.dedupe.Milliseconds(), 10)
	if sub.storeSeen {
		forget = "store" // see seen_before in internal/scripts/common.lua
	}
	return append(args, sub.id, strconv.FormatInt(now, 10), forget)
}

// tieBreakArgs appends the tie-break's part of a write script's arguments:
// slots, the time slot, whether the tie part is reversed, the largest |S|.
func (lb *Leaderboard) tieBreakArgs(args []string, slot int64) []string {
	if lb.tb == nil {
		return append(args, "0", "0", "0", "0")
	}
	return append(args, lb.slotsArg(), strconv.FormatInt(slot, 10),
		flag(lb.tb.reversed(lb.high())), strconv.FormatInt(lb.tb.maxS, 10))
}

// scriptErr maps a write script's refusals to the sentinels; what names
// the refused write in the message.
func (lb *Leaderboard) scriptErr(op string, err error, what string) error {
	switch {
	case err == nil:
		return nil
	case scriptRefusal(err, "LBOVERFLOW"):
		return fmt.Errorf("%w: %s would overflow (%v)", ErrInvalidScore, what, err)
	case scriptRefusal(err, "LBRANGE"):
		return fmt.Errorf("%w: %s would pass MaxScore %v (%v)", ErrPrecision, what, lb.tb.order.MaxScore, err)
	}
	return wrap(op, err)
}

// Remove deletes members from every window's current period, atomically, in
// one round trip (two on a sharded board: see WithShards). Members that are not ranked are ignored. With a store
// that records removals (a Remover, as pgstore is), the removal goes to the
// store first, so that a Rebuild does not bring the members back: a store
// failure returns an error and leaves Redis untouched, a Redis failure
// after it returns an error matching ErrPending (run Remove again, or
// Rebuild). With a store that does not, Remove touches Redis only and a
// Rebuild brings removed members back.
func (lb *Leaderboard) Remove(ctx context.Context, members ...string) error {
	for _, m := range members {
		if err := checkMember(m); err != nil {
			return err
		}
	}
	if len(members) == 0 {
		return nil
	}
	now := lb.now()
	live := make([]target, 0, len(lb.windows))
	for _, w := range lb.windows {
		tg, err := lb.target(w, now)
		if err != nil {
			return err
		}
		live = append(live, tg)
	}
	if r, ok := lb.store.(Remover); ok {
		err := r.Remove(ctx, Removal{Board: lb.name, Members: members, At: now, Periods: submissionPeriods(live)})
		if err != nil {
			return fmt.Errorf("leaderboard: remove: store: %w (Redis was not written)", err)
		}
		if err := lb.be.remove(ctx, live, members); err != nil {
			return fmt.Errorf("%w: %w", ErrPending, err)
		}
		return nil
	}
	return lb.be.remove(ctx, live, members)
}

func (lb *Leaderboard) rankCmd(key, member string) rueidis.Completed {
	if lb.high() {
		return lb.client.B().Zrevrank().Key(key).Member(member).Build()
	}
	return lb.client.B().Zrank().Key(key).Member(member).Build()
}

func (lb *Leaderboard) policyArg() string {
	switch {
	case lb.policy == Replace:
		return "SET"
	case lb.policy == Accumulate:
		return "INCR"
	case lb.high():
		return "GT"
	default:
		return "LT"
	}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
