package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Submit applies the board's policy to member's score in every configured
// window, atomically, in one round trip, and sets each windowed key's expiry
// to its period's end plus the retention. A sharded board on a Cluster
// spends two (three when it sweeps a copy a crashed write left in another
// shard; three more for each window where it finds its own shard's copy
// behind the member's partition, or where its shard refuses the write as
// late after a pause between the steps: a repair, then a read of its
// standing) and is atomic per step; see
// WithShards. With WithHotTop a write that reaches the top may take more
// (see WithHotTop).
//
// The period each window writes to is the one holding the submission's time
// (the board's clock, or WithTime). A window whose period has already expired
// is skipped and reported Closed, as is one whose key Redis deleted as the
// write set its expiry, its own clock past it (see WithClock).
//
// A NaN or ±Inf score, or an Accumulate total that would overflow, returns
// ErrInvalidScore; a bad member ErrInvalidMember; a time more than the
// board's WithClockSkew after the clock's now ErrInvalidArgument. On a
// tie-broken board, a score or time the encoding cannot hold exactly, or an
// Accumulate total beyond MaxScore, returns ErrPrecision (a score or total
// beyond MaxScore matches ErrInvalidScore too). Nothing is written
// then: not in Redis, and not in a store that is a Retractor (Redis alone
// finds a total out of range, after the store has appended it; Submit then
// retracts it). What Redis refuses only it finds, in the round trip that
// also carries a write's upkeep of derived keys, which runs all the same
// and writes nothing new: the top mirror (WithHotTop) copied from the
// period as it stands, or dropped, and during a move to new bounds the
// member's current value copied to its shadow shard (WithShadowShards),
// as FillShadow would.
//
// With a store, Submit appends to it first (see WithStore and WithID); a
// store failure leaves Redis untouched, a Redis failure after the store
// returns an error matching ErrPending.
func (lb *Leaderboard) Submit(ctx context.Context, member string, score float64, opts ...SubmitOption) (_ Result, err error) {
	defer endedWith(ctx, &err)
	sub, err := lb.newSubmission(member, score, opts)
	if err != nil {
		return Result{}, err
	}
	if err := lb.storeRefuses("submit", &sub); err != nil {
		return Result{}, err
	}
	return lb.submitChecked(ctx, sub) // which looks at ctx before its first I/O
}

// submitChecked is Submit of a checked submission.
func (lb *Leaderboard) submitChecked(ctx context.Context, sub submission) (Result, error) {
	var m writeMem
	lb.initWriteMem(&m)
	res := Result{Windows: m.windows}
	live, where, err := lb.submitTargets(&sub, m.windows, m.all, m.where)
	if err != nil {
		return Result{}, err
	}
	if err := notStarted(ctx, "submit"); err != nil {
		return Result{}, err
	}
	var appended []Submission
	if lb.store != nil {
		if appended, err = lb.appendSubmission(ctx, &sub, live); err != nil {
			return Result{}, storeErr("submit", err)
		}
		if sub.replayed {
			if live, where, err = lb.submitTargets(&sub, m.windows, m.all, m.where); err != nil {
				return Result{}, err
			}
		}
	}
	if len(live) > 0 {
		if res.Duplicate, err = lb.be.submit(ctx, sub, live, where, res.Windows); err != nil {
			return Result{}, lb.afterStore(ctx, "submit", err, appended)
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
	score, err := takeScore(score)
	if err != nil {
		return submission{}, err
	}
	sc, err := submitOptions(opts)
	if err != nil {
		return submission{}, err
	}
	if sc.hasID && (sc.id == "" || len(sc.id) > MaxIDLen) {
		return submission{}, fmt.Errorf("%w: WithID id of %d bytes, want 1..%d", ErrInvalidArgument, len(sc.id), MaxIDLen)
	}
	if err := checkData(sc.data); err != nil {
		return submission{}, err
	}
	if sc.zeroTime {
		return submission{}, fmt.Errorf("%w: WithTime: the zero time", ErrInvalidArgument)
	}
	now := lb.now()
	sub := submission{member: member, score: score, stored: score, id: sc.id, at: now, reached: now, data: sc.data}
	if given := !sc.at.IsZero(); given {
		sc.at = sc.at.Truncate(time.Microsecond) // as the clock's (microClock)
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
	sub.stored, sub.s, sub.t, err = lb.storedOf(score, sub.reached)
	return sub, err
}

// storeHeld is members without those the store refuses as members (its
// SubmissionChecker returns ErrInvalidMember: pgstore's text that is not
// UTF-8 or holds NUL bytes): members itself when it refuses none. No
// submission of a refused member ever reached the store, so a removal
// records nothing there for it, and Redis removes it all the same: its
// scores or data written before the board had a store. Recording it
// would fail the whole removal with ErrInvalidMember, and RemoveBetween,
// which names no member, on every call.
func (lb *Leaderboard) storeHeld(members []string, now time.Time) []string {
	if lb.checker == nil {
		return members
	}
	refused := func(m string) bool { return lb.memberRefused(m, now) != nil }
	if !slices.ContainsFunc(members, refused) {
		return members
	}
	return slices.DeleteFunc(slices.Clone(members), refused)
}

// memberRefused is the store's error when its SubmissionChecker refuses
// member as a member (ErrInvalidMember), whatever the score; nil without a
// checker.
func (lb *Leaderboard) memberRefused(member string, now time.Time) error {
	if lb.checker == nil {
		return nil
	}
	if err := lb.checker.CheckSubmission(lb.storeSubmission(member, 0, "", now, time.Time{}, nil)); errors.Is(err, ErrInvalidMember) {
		return err
	}
	return nil
}

// storeRefuses is op's error when the store refuses sub for what it holds
// (a SubmissionChecker), asked before anything is sent; nil without one.
// Every write of a score asks it, Set without a Corrector store too,
// which does not reach it: what Submit refuses, Set refuses.
func (lb *Leaderboard) storeRefuses(op string, sub *submission) error {
	if lb.checker == nil {
		return nil
	}
	return lb.checkSubmission(op, sub)
}

// checkSubmission is storeRefuses's call of the store, out of line: the
// Submission it builds would else sit in the frame of every write, with
// or without a store.
//
//go:noinline
func (lb *Leaderboard) checkSubmission(op string, sub *submission) error {
	if err := lb.checker.CheckSubmission(lb.storeSubmission(sub.member, sub.score, sub.id, sub.reached, sub.at, nil)); err != nil {
		return storeErr(op, err)
	}
	return nil
}

// submitOptions applies opts. The config they write escapes to the heap
// (an option is a function value), so a Submit without options skips it.
func submitOptions(opts []SubmitOption) (submitConfig, error) {
	if len(opts) == 0 {
		return submitConfig{}, nil
	}
	sc := new(submitConfig)
	for _, opt := range opts {
		if opt == nil {
			return submitConfig{}, fmt.Errorf("%w: nil submit option", ErrInvalidArgument)
		}
		opt(sc)
	}
	return *sc, nil
}

// writeMem is one write's own memory, sized by the board's windows: the
// caller's Result.Windows, the write's periods and where each reports. On
// a one-window board (most boards) it is one allocation, not three: every
// write passes here.
type writeMem struct {
	windows []WindowResult
	all     []target
	where   []int
	one     struct {
		window [1]WindowResult
		target [1]target
		where  [1]int
	}
}

// initWriteMem sizes m for the board's windows.
func (lb *Leaderboard) initWriteMem(m *writeMem) {
	if n := len(lb.windows); n != 1 {
		m.windows, m.all, m.where = make([]WindowResult, n), make([]target, n), make([]int, 0, n)
		return
	}
	m.windows, m.all, m.where = m.one.window[:], m.one.target[:], m.one.where[:0]
}

// submitTargets resolves the period of every window holding the
// submission's time into all (one a window) and its report into out, and
// returns the live ones (live[j] reports into out[where[j]]), in all's
// and whereBuf's memory; a window whose period has expired is reported
// Closed.
func (lb *Leaderboard) submitTargets(sub *submission, out []WindowResult, all []target, whereBuf []int) (live []target, where []int, err error) {
	if err := lb.targetsInto(all, sub.reached); err != nil {
		return nil, nil, err
	}
	live = all[:0] // filtered in place: live[j] is written after all[j] is read
	where = whereBuf[:0]
	now := sub.at.UnixMilli()
	for i := range all {
		tg := &all[i] // not a copy: this runs on every write's stack
		out[i] = WindowResult{Window: tg.window.Name(), Period: tg.period.ID, Previous: Entry{Member: sub.member}}
		if tg.expire != 0 && tg.expire <= now {
			closeWindow(&out[i], sub.member)
			continue
		}
		live = append(live, *tg)
		where = append(where, i)
	}
	return live, where, nil
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
	data    string    // WithData; "" leaves the member's data
	set     bool      // Set: the stored score becomes this one, whatever the policy
	// storeSeen: the store holds the id and wins over Redis's memory.
	storeSeen bool
	// replayed: a retry that took the score and time the store holds
	// under its id (see storeKnowsApplied); its periods are those of
	// that time.
	replayed bool
}

// SubmitMany applies the board's policy to many members' scores in every
// configured window's current period, atomically, in one round trip (two
// on a sharded board on a Cluster, atomic per step, one there when it
// changes nothing, with no shard to write: see WithShards; there
// a call whose shard writes, about members x windows, pass 100,000 sends
// them in round trips of at most 100,000, as Remove sends its sweeps); an
// empty map writes nothing and makes no call. It is the bulk load: it
// reports no standings. Every member and score is checked
// first; one bad entry refuses the whole batch and nothing is written (an
// entry Redis refuses leaves the upkeep Submit names); with several, the
// error names the one whose member sorts first. With
// a store, the batch goes to the store first (in one call when it is a
// BatchAppender), stamped with the board's clock; a store that takes
// submissions one at a time and fails part way has those it took
// retracted (a Retractor), and when they cannot be the call returns
// ErrPending (they reach Redis at the next Rebuild; the rest were not
// stored).
//
// Being atomic, a call holds Redis (or, on a Cluster, each node it
// writes) for its whole length while other clients wait: 1,000 members of
// one window took 0.7 ms (KeepBest) to 3.3 ms (Accumulate) on an unsharded
// board and 4.6 to 14.4 ms on a sharded board on one node, on the machine
// BENCHMARKS.md describes. Load a large board in calls of about a
// thousand members, not in one.
func (lb *Leaderboard) SubmitMany(ctx context.Context, scores map[string]float64) (err error) {
	defer endedWith(ctx, &err)
	scores, err = lb.takeScores(scores)
	if err != nil {
		return err
	}
	if len(scores) == 0 {
		return nil
	}
	now := lb.now()
	live, err := lb.targetsAt(now)
	if err != nil {
		return err
	}
	var slot int64
	if lb.tb != nil {
		if slot, err = lb.tb.slot(now); err != nil {
			return err // the clock outside the tie-break's time: bad input, ended ctx or not
		}
	}
	if err := notStarted(ctx, "submit many"); err != nil {
		return err
	}
	if lb.store == nil {
		return lb.be.submitMany(ctx, scores, live, slot)
	}
	appended, err := lb.appendMany(ctx, scores, now, live)
	if err != nil {
		return err
	}
	err = lb.be.submitMany(ctx, scores, live, slot)
	return lb.afterStore(ctx, "submit many", err, refusedOnly(err, appended))
}

// takeScores checks a SubmitMany's entries and returns them as the batch
// is written, every score as takeScore takes it: scores itself when none
// changes (most batches), else a copy, as the caller's map is not ours.
// One bad entry refuses the batch: the error is that of the bad entry
// whose member sorts first, so that a batch with several is refused the
// same way whatever order Go's map gives them in.
func (lb *Leaderboard) takeScores(scores map[string]float64) (map[string]float64, error) {
	var first string
	var bad error
	var out map[string]float64 // the copy, made at the first score taken otherwise
	for m, s := range scores {
		taken, err := lb.checkEntry(m, s)
		if err != nil {
			if bad == nil || m < first {
				first, bad = m, err
			}
			continue
		}
		if out == nil && math.Float64bits(taken) != math.Float64bits(s) {
			out = maps.Clone(scores) // the entries before were taken as they are
		}
		if out != nil {
			out[m] = taken
		}
	}
	switch {
	case bad != nil:
		return nil, bad
	case out == nil:
		return scores, nil
	}
	return out, nil
}

// checkEntry checks one member and score of a SubmitMany, and returns the
// score as takeScore takes it.
func (lb *Leaderboard) checkEntry(m string, s float64) (float64, error) {
	if err := checkMember(m); err != nil {
		return 0, err
	}
	s, err := takeScore(s)
	if err == nil && lb.tb != nil {
		_, err = lb.tb.scaled(s) // a Submit's storedOf checks it
	}
	if err != nil {
		return 0, fmt.Errorf("%w (member %q)", err, m)
	}
	return s, lb.storeRefuses("submit many", &submission{member: m, score: s})
}

// Remove deletes members from every readable period of every window: the
// current one and the closed ones within their retention (a cheater also
// leaves last week's board), and one that starts within the clock skew
// (WithClockSkew) after now, which a process whose clock runs ahead writes
// into already, atomically, in one round trip (two on a
// sharded board on a Cluster: see WithShards; there the second step sweeps
// every shard for each member, members x shards x periods script ops, sent
// in round trips of at most 100,000 of them: a Remove of 1,000 members
// from a board of 101 shards and three readable periods takes five); a
// Remove of no members makes no call.
// A member that is not ranked loses only its data (see SetData), if any,
// and a member named twice is removed once. With a store that records
// removals (a Remover, as pgstore is), the removal goes to the
// store first, so that a Rebuild does not bring the members back: a store
// failure returns an error and leaves Redis untouched, a Redis failure
// after it returns an error matching ErrPending (run Remove again: a
// Rebuild drops the members' scores but not their data, which lives in
// Redis alone). A member the store cannot hold (its SubmissionChecker refuses
// it as a member: pgstore's text that is not UTF-8 or holds a NUL byte)
// never reached it: Redis removes it (its data, or scores written before
// the board had a store) and the store records the others. A Submit of the
// member that runs at the same time may land in
// the store and in Redis in different orders: one that reaches the store
// after the removal and Redis before it is then in the store alone
// (Verify names it under Missing, a Rebuild brings it back); one that
// reaches the store before the removal and Redis after it is in Redis
// alone (Verify counts it under Extra, a Rebuild drops it, as the removal
// asked). Remove a member whose writes have stopped, or Verify after. With a
// store that does not, Remove touches Redis only and a
// Rebuild brings removed members back.
func (lb *Leaderboard) Remove(ctx context.Context, members ...string) (err error) {
	defer endedWith(ctx, &err)
	for _, m := range members {
		if err := checkMember(m); err != nil {
			return err
		}
	}
	if len(members) == 0 {
		return nil
	}
	if err := notStarted(ctx, "remove"); err != nil {
		return err
	}
	members = distinct(members)
	now := lb.now()
	live, err := lb.livePeriods(now)
	if err != nil {
		return err
	}
	r, ok := lb.store.(Remover)
	if !ok {
		return lb.be.remove(ctx, live, members)
	}
	held := lb.storeHeld(members, now)
	if len(held) == 0 {
		return lb.be.remove(ctx, live, members)
	}
	if err := r.Remove(ctx, Removal{Board: lb.name, Members: held, At: now, Periods: submissionPeriods(live)}); err != nil {
		return storeErr("remove", err)
	}
	return lb.afterStore(ctx, "remove", lb.be.remove(ctx, live, members), nil)
}
