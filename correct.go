package leaderboard

import (
	"context"
)

// Set is an operator's correction: member's stored score in the current
// period of one window (the default, or In(w)) becomes exactly score,
// whatever the board's policy (a member without a score there is added);
// its data and the other windows stay. Under a tie-break the corrected
// score is stamped with the board's clock. With a store that records
// corrections (a Corrector, as pgstore is), the store records it first, so
// that a Rebuild keeps it (later Accumulate submissions add to it): a store
// failure returns an error and leaves Redis untouched, a Redis failure
// after it returns an error matching ErrPending. With a store that does
// not, a Rebuild undoes it, and a Redis failure is a plain error (nothing
// durable is pending). A bad member is ErrInvalidMember (one the store
// cannot hold too, as Submit, whether or not the store records
// corrections: see SubmissionChecker), a NaN or ±Inf
// score ErrInvalidScore, a score a tie-break cannot hold ErrPrecision (one
// beyond MaxScore ErrInvalidScore too), At
// ErrInvalidArgument; nothing is written then. A period Redis's own clock
// has passed (a board clock behind the server's, see WithClock) returns
// ErrExpired, with a store too (not ErrPending: no Rebuild brings that
// period back): Redis deleted its key as the write set its expiry. A Set
// sent while the member's submissions go on can reach the store and Redis
// in different orders, as two Submits can (README, "Durability"): Verify
// names it, a Rebuild settles it in the store's order. One round trip, as
// Submit (two on a sharded board on a Cluster); with WithHotTop it keeps the
// top mirror as a Submit does (rewritten only when the Set reaches the top
// k).
func (lb *Leaderboard) Set(ctx context.Context, member string, score float64, q ...Query) (err error) {
	defer endedWith(ctx, &err)
	sub, err := lb.newSubmission(member, score, nil)
	if err != nil {
		return err
	}
	sub.set = true
	w, err := lb.currentWindow(q, "Set")
	if err != nil {
		return err
	}
	tg, err := lb.target(w, sub.at)
	if err != nil {
		return err
	}
	// What the store cannot hold is refused as Submit refuses it, even
	// by a store that records no corrections: the member could never
	// score through Submit, and a Rebuild would drop it (as SetData
	// refuses its data).
	if err := lb.storeRefuses("set", &sub); err != nil {
		return err
	}
	if err := notStarted(ctx, "set"); err != nil {
		return err
	}
	c, ok := lb.store.(Corrector)
	if !ok {
		// Nothing recorded: a Redis failure is not ErrPending, which
		// promises a write the next Rebuild brings back.
		return wrap("set", lb.be.set(ctx, tg, sub))
	}
	corr := Correction{Board: lb.name, Member: member, Score: sub.score, At: sub.at, Policy: lb.policy, Order: lb.order,
		Period: submissionPeriods([]target{tg})[0]}
	if err := c.Correct(ctx, corr); err != nil {
		return storeErr("set", err)
	}
	return lb.afterStore(ctx, "set", wrap("set", lb.be.set(ctx, tg, sub)), nil)
}

// setBySubmit writes a Set through be's submit, as a Submit of policy
// Replace (sub.set) to tg alone, and makes a period Redis's own clock has
// passed (the window reported Closed) ErrExpired.
func setBySubmit(ctx context.Context, be backend, tg target, sub submission) error {
	out := make([]WindowResult, 1)
	if _, err := be.submit(ctx, sub, []target{tg}, []int{0}, out); err != nil {
		return err
	}
	if out[0].Closed {
		return expiredByRedis(tg)
	}
	return nil
}
