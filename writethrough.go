package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// appendSubmission records sub in the store before it reaches Redis: once
// the store holds it, nothing that goes wrong in Redis can lose it. When the
// store reports its id a duplicate, it decides with the store whether Redis
// may still apply it (see storeKnowsApplied).
func (lb *Leaderboard) appendSubmission(ctx context.Context, sub *submission, live []target) ([]Submission, error) {
	record := lb.storeSubmission(sub.member, sub.score, sub.id, sub.reached, sub.at, live)
	dup, err := lb.store.Append(ctx, record)
	if err != nil {
		return nil, err
	}
	if dup && sub.id != "" {
		if sub.storeSeen, err = lb.storeKnowsApplied(ctx, sub); err != nil {
			return nil, err
		}
	}
	return []Submission{record}, nil
}

// storeKnowsApplied reports whether a submission whose id the store already
// holds is to be taken as applied whatever Redis remembers. Redis's id set
// is a cache of the store's ids over the dedupe window (Rebuild restores
// it): for an id the store received within the window, Redis knows whether
// it applied it, and a retry of one that reached the store but not Redis
// (ErrPending, a timeout) is applied there once. An id received before the
// window, or by a store that cannot say when (not an IDKeeper), was applied
// as far as anyone can know: the store wins. So does an id the store holds
// for another member, which a sharded board's Redis, keeping ids per
// partition of members, may not know. A retry Redis may apply takes the
// score and time of the submission the store holds, when the store can
// say (IDReplayer; sub.replayed): what Redis applies is then what a
// Rebuild from the store gives, whatever the retry carried.
func (lb *Leaderboard) storeKnowsApplied(ctx context.Context, sub *submission) (bool, error) {
	if r, ok := lb.store.(IDReplayer); ok {
		held, found, err := r.IDSubmission(ctx, lb.name, sub.id)
		if err != nil || !found || held.Member != sub.member || !lb.idRemembered(held.Received, sub.at) {
			return true, err
		}
		return false, lb.replay(sub, held)
	}
	k, ok := lb.store.(IDKeeper)
	if !ok {
		return true, nil
	}
	received, member, found, err := k.IDReceived(ctx, lb.name, sub.id)
	if err != nil {
		return false, err
	}
	return !found || member != sub.member || !lb.idRemembered(received, sub.at), nil
}

// forgetMs is when Redis forgets a WithID id received at received, in
// unix milliseconds, as a write records it (writeHeader) and Rebuild
// restores it.
func (lb *Leaderboard) forgetMs(received time.Time) int64 {
	return received.UnixMilli() + lb.dedupe.Milliseconds()
}

// idRemembered reports whether Redis may still remember, at now, an id
// received at received: by Redis's own arithmetic, in milliseconds, so
// that the store and Redis agree on where the dedupe window ends (a retry
// in its last millisecond that Redis counts in the next would be applied
// again by Redis, forgotten, with the store taking it for one Redis knew).
func (lb *Leaderboard) idRemembered(received, now time.Time) bool {
	return lb.forgetMs(received) > now.UnixMilli()
}

// replay makes sub, a retry Redis may apply, the submission the store
// holds under its id: that score, reached at that time (the periods and
// the tie-break slot follow from it).
func (lb *Leaderboard) replay(sub *submission, held Submission) error {
	if held.Score == sub.score && held.At.Equal(sub.reached) {
		return nil
	}
	var err error
	sub.score, sub.reached, sub.replayed = held.Score, held.At, true
	sub.stored, sub.s, sub.t, err = lb.storedOf(sub.score, sub.reached)
	return err
}

// Every write with a store takes the same order: the store first, so that
// once it holds the write nothing that goes wrong in Redis can lose it (a
// store failure, storeErr, leaves Redis untouched); then Redis, whose
// error afterStore turns into the write's answer.

// storeErr is a write's error when its store step failed. A store call
// its ctx cut short (cancelled, past its deadline) may have committed
// before its answer was lost, so the error says the store may hold the
// write: only a retry with the same WithID is sure to count it once.
func storeErr(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("leaderboard: %s: store: %w (Redis was not written; the store may hold it: retry with the same WithID)", op, err)
	}
	return fmt.Errorf("leaderboard: %s: store: %w (Redis was not written)", op, err)
}

// afterStore answers a Redis step that ran after the store took the write
// (appended: what it appended, nil for a removal). A refusal from Redis
// (ErrInvalidScore, ErrPrecision: a total out of range, found only as Redis
// adds it) retracts what was appended, so that bad input leaves nothing
// behind (and when, beside the refused partition groups of a sharded
// Cluster SubmitMany, another group's call failed, the error is ErrPending
// too: the store keeps that group's submissions); a period Redis has
// already expired (ErrExpired: Set) is no
// pending write, as no Rebuild brings that period back; any other error
// means the store holds what Redis may not: ErrPending. Without a store,
// or with a nil err, err is the answer.
func (lb *Leaderboard) afterStore(ctx context.Context, op string, err error, appended []Submission) error {
	switch {
	case err == nil || lb.store == nil || errors.Is(err, ErrExpired):
		return err
	case !errors.Is(err, ErrInvalidScore) && !errors.Is(err, ErrPrecision):
		return pendingError{err}
	}
	err = lb.retract(ctx, op, err, appended)
	if partlyFailed(err) {
		// Beside the refused groups, a group whose call failed: its
		// submissions stay in the store for the next Rebuild.
		return pendingError{err}
	}
	return err
}

// retract takes the refused submissions appended back from the store, when
// it is a Retractor, and returns err, the refusal, with what went wrong
// doing it.
func (lb *Leaderboard) retract(ctx context.Context, op string, err error, appended []Submission) error {
	r, ok := lb.store.(Retractor)
	if !ok || len(appended) == 0 {
		return err
	}
	if rerr := r.Retract(ctx, appended); rerr != nil {
		return fmt.Errorf("%w (%s: store: retracting the refused submission: %v; it stays in the store)", err, op, rerr)
	}
	return err
}

// pendingError is ErrPending with the Redis step's error, cause: both
// match errors.Is, and the text names the package once (cause's own
// text opens with it too).
type pendingError struct{ cause error }

func (e pendingError) Error() string {
	return ErrPending.Error() + ": " + unprefixed(e.cause)
}

func (e pendingError) Unwrap() []error { return []error{ErrPending, e.cause} }

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
// slice: stores only read it. A failure part way that leaves some of them
// stored (see appendEach) is ErrPending.
func (lb *Leaderboard) appendMany(ctx context.Context, scores map[string]float64, at time.Time, live []target) ([]Submission, error) {
	subs := make([]Submission, 0, len(scores))
	periods := submissionPeriods(live)
	for m, s := range scores {
		subs = append(subs, Submission{Board: lb.name, Member: m, Score: s, At: at, Received: at,
			Policy: lb.policy, Order: lb.order, Periods: periods})
	}
	kept, err := lb.appendRecords(ctx, subs)
	if err != nil {
		if kept > 0 {
			return nil, partlyStored("submit many", kept, len(subs), err)
		}
		return nil, storeErr("submit many", err)
	}
	return subs, nil
}

// appendRecords records submissions in the store, in one call when it
// takes batches, else one at a time (appendEach); kept is how many a
// failure leaves stored.
func (lb *Leaderboard) appendRecords(ctx context.Context, subs []Submission) (kept int, err error) {
	if ba, ok := lb.store.(BatchAppender); ok {
		_, err := ba.AppendBatch(ctx, subs)
		return 0, err
	}
	return lb.appendEach(ctx, subs)
}

// appendEach appends subs one at a time to a store that takes no batches.
// A failure part way takes back what it appended when the store is a
// Retractor, so that the store holds none of them, as a store error says
// (Redis was not written either); kept is how many stay stored when it
// cannot (no Retractor, or the retraction failed).
func (lb *Leaderboard) appendEach(ctx context.Context, subs []Submission) (kept int, err error) {
	for i, sub := range subs {
		_, err := lb.store.Append(ctx, sub)
		if err == nil {
			continue
		}
		r, ok := lb.store.(Retractor)
		switch {
		case i == 0:
			return 0, err
		case !ok:
			return i, err
		}
		if rerr := r.Retract(ctx, subs[:i]); rerr != nil {
			return i, fmt.Errorf("%w (retracting the %d stored before it: %v)", err, i, rerr)
		}
		return 0, err
	}
	return 0, nil
}

// partlyStored is the error of a store failure after the first kept of n
// submissions were stored and could not be taken back: they are durable,
// and reach Redis at the next Rebuild (ErrPending).
func partlyStored(op string, kept, n int, err error) error {
	return fmt.Errorf("%w: %s: store: %d of %d submissions stored before it failed: %w (Redis was not written)",
		ErrPending, op, kept, n, err)
}
