package leaderboard

import (
	"context"
	"time"
)

// Store is a durable record of every submission, the source of truth a
// board is rebuilt from when Redis loses it. With WithStore, Submit appends
// to the store first and writes Redis second. The pgstore module implements
// it on PostgreSQL; a Store must be safe for concurrent use.
type Store interface {
	// Append records a submission durably before it reaches Redis. When
	// s.ID is not empty and the store already holds a submission with that
	// ID for s.Board, it records nothing and returns duplicate = true.
	//
	// s.Policy, s.Order and s.Periods let a store keep each period's
	// standings up to date as submissions arrive, so that Standings (and
	// with it Rebuild) need not aggregate every submission again. Such
	// standings are a cache: whatever a store keeps, Standings must answer
	// exactly as its aggregation rules say, and a store that cannot vouch
	// for a period's kept standings (a submission that came without
	// Periods, or with another policy) must aggregate instead.
	Append(ctx context.Context, s Submission) (duplicate bool, err error)

	// Standings calls fn once for every member with a submission in
	// q.Board whose time lies in [q.From, q.To) (zero From or To: no bound),
	// with the member's standing aggregated as the board's policy makes it:
	//
	//	KeepBest    the best score (max on HighestFirst, min on LowestFirst),
	//	            and the earliest time that best was reached
	//	Replace     the score and time of the last submission appended
	//	Accumulate  the sum of the scores, added in the order they were
	//	            appended (floating-point sums depend on the order), and
	//	            the time of the last submission appended whose score is
	//	            not 0 (the first's when every one is 0): adding 0
	//	            reaches no new total
	//
	// Members may come in any order. An error from fn stops the stream and
	// is returned.
	//
	// q.Window and q.Period name the period [q.From, q.To) is, so that a
	// store that keeps standings per period (see Append) can stream them
	// instead of aggregating; From and To still define what is counted.
	Standings(ctx context.Context, q StandingsQuery, fn func(StoredStanding) error) error

	// Seal records the final standings of a closed period, best first,
	// exactly once: when the period was sealed before it records nothing
	// and returns first = false.
	Seal(ctx context.Context, board, window, period string, entries []Entry) (first bool, err error)

	// Sealed returns a sealed period's standings, best first; ok is false
	// when the period was never sealed.
	Sealed(ctx context.Context, board, window, period string) (entries []Entry, ok bool, err error)
}

// Submission is one Submit as a Store records it.
type Submission struct {
	// Board is the board's name.
	Board string
	// ID is the idempotency key from WithID; empty for none.
	ID string
	// Member is the member submitted for.
	Member string
	// Score is the score as submitted (never a tie-break composite).
	Score float64
	// At is when the score was reached: WithTime, or the board's clock,
	// in whole microseconds, as PostgreSQL keeps a time: the board picks
	// the periods and the tie-break slot from this very time, so a
	// Rebuild from the store picks the same (a nanosecond time a store
	// cut would have landed in another slot or period).
	At time.Time
	// Received is the board's clock when Submit was called (At may be
	// earlier, with WithTime): what a WithID id's dedupe window counts
	// from. A store that is an IDKeeper reports it back; zero from a
	// caller that does not say, when a store uses its own clock.
	Received time.Time
	// Policy is the board's policy: how the submission combines with the
	// member's earlier ones in every period it is written to.
	Policy Policy
	// Order is the board's order, which says what KeepBest keeps.
	Order Order
	// Periods lists every live window period the submission is written to
	// in Redis (a window whose period holding At has expired is not
	// listed), so a store can keep their standings up to date. Empty when
	// the caller does not say; a store must then treat every period
	// holding At as changed in ways it did not follow.
	Periods []SubmissionPeriod
}

// SubmissionPeriod is one window period a Submission is written to.
type SubmissionPeriod struct {
	// Window is the window's name.
	Window string
	// Period is the period's ID.
	Period string
	// Start is the period's first instant; zero for a window that never
	// resets.
	Start time.Time
	// End is the first instant after the period; zero for a window that
	// never resets.
	End time.Time
}

// StandingsQuery selects what Store.Standings aggregates.
type StandingsQuery struct {
	// Board is the board's name.
	Board string
	// Policy is how a member's submissions combine.
	Policy Policy
	// Order says which score is best under KeepBest.
	Order Order
	// From and To bound the submissions' times, [From, To); zero for none.
	// They define what Standings counts, whatever Window and Period say.
	From, To time.Time
	// Window and Period name the window period that [From, To) is, for a
	// store that keeps standings per period; empty when the query is not
	// one period's.
	Window, Period string
}

// StoredStanding is one member's aggregated standing from a Store.
type StoredStanding struct {
	// Member is the member's name.
	Member string
	// Score is the aggregated score.
	Score float64
	// At is when that score was reached (see Store.Standings).
	At time.Time
}

// SubmissionChecker is a Store that refuses some submissions for what they
// hold alone, before any I/O: text its storage cannot keep, say (pgstore
// refuses a member or an id that is not valid UTF-8 without NUL bytes).
// Every write of a score asks it first: Submit, SubmitMany, a Batcher's
// Submit, and Set (even when the store is not a Corrector, which Set does
// not reach); so does SetData, which does not reach the store, for its
// member: a score or data of a member that can never score through Submit
// is refused as Submit refuses it. Such input is then refused at once with the store's error,
// writes nothing anywhere, and never joins a Batcher's batch, where the
// store would refuse the batch's one append, and so every caller in it.
// Remove and RemoveBetween ask it of each member they remove, and leave out
// of the store's removal a member it refuses as a member (ErrInvalidMember):
// the store never held it, and Redis alone removes it. The Submission it is
// given has no Periods (and from SubmitMany, which checks every entry before
// it takes the time, no At or Received); a store that refuses a submission
// for its content without being a SubmissionChecker fails every caller of a
// Batcher's batch that holds it.
type SubmissionChecker interface {
	CheckSubmission(sub Submission) error
}

// BatchAppender is a Store that records many submissions in one call;
// SubmitMany uses it when the store has it. duplicates[i] reports that
// subs[i] carried an ID the store already held.
type BatchAppender interface {
	AppendBatch(ctx context.Context, subs []Submission) (duplicates []bool, err error)
}

// Remover is a Store that records removals, so that a Rebuild does not
// bring removed members back; Remove uses it when the store has it.
type Remover interface {
	// Remove records that r.Members were removed from every period
	// r.Periods lists: from then on, Standings of such a period (a query
	// naming it with Window and Period) counts only the submissions of
	// those members appended after the removal.
	Remove(ctx context.Context, r Removal) error
}

// Removal is one Remove as a Store records it.
type Removal struct {
	// Board is the board's name.
	Board string
	// Members are the members removed.
	Members []string
	// At is when they were removed: the board's clock.
	At time.Time
	// Periods lists the window periods they were removed from: every
	// window's readable ones (the current period, and the closed ones
	// within their retention), and one starting within the board's clock
	// skew after At (see WithClockSkew).
	Periods []SubmissionPeriod
}

// Corrector is a Store that records an operator's corrections (Set), so
// that a Rebuild keeps them; Set uses it, first, when the store has it.
type Corrector interface {
	// Correct records that c.Member's standing in the window period
	// c.Period became exactly c.Score at c.At: from then on, Standings of
	// that period (a query naming it with Window and Period) counts the
	// member as if its submissions appended before the correction were one
	// submission of c.Score at c.At, combined with those appended after it
	// by the board's policy (an Accumulate total after a correction is the
	// corrected score plus the later increments; KeepBest keeps the better
	// of the correction and a later submission). A later Remove or Reset of
	// the period drops the correction with the rest.
	Correct(ctx context.Context, c Correction) error
}

// Correction is one Set as a Store records it.
type Correction struct {
	// Board is the board's name.
	Board string
	// Member is the member corrected.
	Member string
	// Score is the corrected score (never a tie-break composite).
	Score float64
	// At is when the correction was made: the board's clock.
	At time.Time
	// Policy and Order are the board's, as in Submission.
	Policy Policy
	Order  Order
	// Period is the window period corrected: the window's current one.
	Period SubmissionPeriod
}

// Retractor is a Store that can take back submissions it has just
// appended. Redis alone can refuse some submissions (an Accumulate total
// that would overflow, or pass a tie-break's MaxScore, shows only when
// Redis adds it), and those reach the store first; Submit and SubmitMany
// then retract them, so that bad input writes nothing: no row, no kept
// standing, no id that would make the corrected retry a duplicate. With a
// store that is not a Retractor the refused submission stays in the store:
// its id stays taken, and Rebuild lists it in RebuildReport.Refused.
type Retractor interface {
	// Retract removes each of subs, as passed to Append or AppendBatch
	// moments before (a submission with an ID is named by Board and ID
	// alone; one without by Board, Member, Score, At and Received), and
	// whatever the store derived from it (kept standings), as if it had
	// never been appended. A submission the store does not hold is
	// ignored.
	Retract(ctx context.Context, subs []Submission) error
}

// IDKeeper is a Store that can tell when it received a WithID id. Redis
// remembers ids for the board's dedupe window only; the store for good.
// With an IDKeeper, Submit tells a retry of a submission that reached the
// store but perhaps not Redis (ErrPending, a timeout) from the retry of one
// applied long ago, and Rebuild gives Redis back its memory of the ids
// received within the dedupe window. See WithID.
type IDKeeper interface {
	// IDReceived reports when the submission with id reached the store
	// (its Submission.Received) and the member it was for; ok is false
	// when the store holds no submission with that id for board.
	IDReceived(ctx context.Context, board, id string) (received time.Time, member string, ok bool, err error)
	// IDsSince calls fn for every id of board received at or after since,
	// with the member its submission was for, in any order. An error from
	// fn stops the walk and is returned.
	IDsSince(ctx context.Context, board string, since time.Time, fn func(id, member string, received time.Time) error) error
}

// IDReplayer is an IDKeeper that can return the submission it holds under
// a WithID id. With one, a retry that Redis is to apply (of a submission
// that reached the store but not Redis: ErrPending, a timeout) applies the
// submission the store holds, its score and time, not the retry's: the
// store keeps the first submission with an id, and Redis then holds what a
// Rebuild from the store gives, whatever score or time the retry carried.
type IDReplayer interface {
	// IDSubmission returns the submission with id that the store holds for
	// board: its Board, ID, Member, Score, At and Received as Append
	// stored them (Policy, Order and Periods may be left zero); ok is
	// false when it holds none.
	IDSubmission(ctx context.Context, board, id string) (sub Submission, ok bool, err error)
}

// BoardDeleter is a Store that can delete everything it holds of a board:
// every submission, removal, kept standing and sealed period. Delete uses
// it, first, when the store has it, so that a Rebuild does not bring a
// deleted board back.
type BoardDeleter interface {
	// DeleteBoard deletes every record of board. Deleting a board the
	// store holds nothing of is not an error.
	DeleteBoard(ctx context.Context, board string) error
}

// PeriodDeleter is a Store that can forget one window period's
// submissions: Reset uses it, first, when the store has it, so that a
// Rebuild does not bring a reset period back.
type PeriodDeleter interface {
	// DeletePeriod forgets board's submissions in window period p as of at
	// (the board's clock): from then on Standings of that period (a query
	// naming it with Window and Period) counts only the submissions
	// appended after the call. Other periods, and ranges that are not that
	// period, are not affected.
	DeletePeriod(ctx context.Context, board string, p SubmissionPeriod, at time.Time) error
}

// StandingsChecker is a Store that keeps standings derived from its log
// (see Store.Append) and can check them against that log: Verify uses it,
// so that standings that drifted from the log (a log edited by hand, a
// bug) show instead of being compared with Redis as if they were the
// truth.
type StandingsChecker interface {
	// CheckStandings compares the standings the store keeps for the period
	// q names (q.Window and q.Period) with the aggregation of its log over
	// [q.From, q.To) under the rules of Store.Standings. With repair, it
	// makes the kept standings equal to the aggregation.
	CheckStandings(ctx context.Context, q StandingsQuery, repair bool) (StandingsCheck, error)
}

// StandingsCheck is what a StandingsChecker found in one period.
type StandingsCheck struct {
	// Kept reports whether the store keeps standings for the period; when
	// it does not, Standings aggregates the log and nothing can drift.
	Kept bool
	// Members counts the members of the log's aggregation.
	Members int64
	// Differ names members whose kept standing differs from the log's
	// aggregation, is missing, or has no submission behind it, up to
	// VerifySample of them; DifferCount counts them all.
	Differ      []string
	DifferCount int64
	// Repaired reports that the kept standings were rewritten to match.
	Repaired bool
}
