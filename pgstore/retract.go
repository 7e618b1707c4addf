package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skiprank/leaderboard"
)

// Retract takes back submissions that Append or AppendBatch recorded
// moments before and Redis then refused (see leaderboard.Retractor), in one
// transaction that holds the exclusive lock of every board named (no Append
// of those boards runs meanwhile). A submission with an ID is named by
// Board and ID; its row goes, and the ID is free again, so a corrected
// retry is appended as new. One without is named by Board, Member, Score,
// At and Received (At and Received truncated to the microsecond, as Append
// stored them): of the rows without an ID that match, the last appended
// goes, one row for each time the submission is listed. A submission the
// store does not hold is ignored. Bad input (text a text column cannot
// hold, an empty board or member, a NaN or infinite score) returns a typed
// error and deletes nothing.
//
// Kept standings stay exact by recomputing, not by distrust: in every
// period of the board whose standings are kept completely and that holds a
// retracted row's time, the standings of the retracted rows' members are
// aggregated again from the log (one index range per member) and written
// back, so Standings keeps streaming the period as before. Marking the
// period incomplete instead would be as exact, but would make every later
// Standings of the period (a rebuild) aggregate it for good, because of one
// refused submission. A period the refused submission itself made
// incomplete (an Accumulate total of 2^1022 or more, which is how most
// totals that overflow in Redis arrive) stays incomplete: the store cannot
// tell whether anything else it did not follow came since, so Standings
// aggregates it, exactly, as for any incomplete period.
func (s *Store) Retract(ctx context.Context, subs []leaderboard.Submission) error {
	prepared := make([]leaderboard.Submission, len(subs))
	for i, sub := range subs {
		p, err := prepareSub(sub)
		if err != nil {
			return fmt.Errorf("pgstore: retract: submission %d: %w", i, err)
		}
		prepared[i] = p
	}
	if len(prepared) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := s.lockBoards(ctx, tx, prepared, true); err != nil {
				return err
			}
			gone, err := s.deleteSubmissions(ctx, tx, prepared)
			if err != nil {
				return err
			}
			return s.restand(ctx, tx, gone)
		})
		if err != nil && retryable(err) && attempt < 3 {
			continue
		}
		if err != nil {
			return fmt.Errorf("pgstore: retract: %w", err)
		}
		return nil
	}
}

// deletedRow is what a deleted submission changed: a member's standing in
// the periods holding at.
type deletedRow struct {
	board, member string
	at            time.Time
}

// deleteSubmissions deletes the rows subs name (see Retract) and returns
// them.
func (s *Store) deleteSubmissions(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission) ([]deletedRow, error) {
	var idBoards, ids, boards, members []string
	var scores []float64
	var ats []time.Time
	var received []pgtype.Timestamptz
	for _, sub := range subs {
		if sub.ID != "" {
			idBoards, ids = append(idBoards, sub.Board), append(ids, sub.ID)
			continue
		}
		boards, members, scores = append(boards, sub.Board), append(members, sub.Member), append(scores, sub.Score)
		ats, received = append(ats, sub.At), append(received, nullTime(sub.Received))
	}
	var gone []deletedRow
	collect := func(rows pgx.Rows, err error) error {
		if err != nil {
			return err
		}
		var d deletedRow
		_, err = pgx.ForEachRow(rows, []any{&d.board, &d.member, &d.at}, func() error {
			gone = append(gone, d)
			return nil
		})
		return err
	}
	if len(ids) > 0 {
		if err := collect(tx.Query(ctx, `DELETE FROM `+s.tSubs+` t USING unnest($1::text[], $2::text[]) AS u (b, i)
WHERE t.board = u.b AND t.id = u.i
RETURNING t.board, t.member, t.at`, idBoards, ids)); err != nil {
			return nil, err
		}
	}
	if len(boards) > 0 {
		// The last n rows that match, n the times the submission is
		// listed: the (board, member, seq) index read backwards.
		if err := collect(tx.Query(ctx, `WITH want AS (
	SELECT b, m, s, a, r, count(*) AS n
	FROM unnest($1::text[], $2::text[], $3::float8[], $4::timestamptz[], $5::timestamptz[]) AS u (b, m, s, a, r)
	GROUP BY b, m, s, a, r
)
DELETE FROM `+s.tSubs+` t WHERE t.seq IN (
	SELECT x.seq FROM want w CROSS JOIN LATERAL (
		SELECT seq FROM `+s.tSubs+` c
		WHERE c.board = w.b AND c.member = w.m AND c.id IS NULL AND c.score = w.s AND c.at = w.a
			AND c.received IS NOT DISTINCT FROM w.r
		ORDER BY c.seq DESC LIMIT w.n
	) x
)
RETURNING t.board, t.member, t.at`, boards, members, scores, ats, received)); err != nil {
			return nil, err
		}
	}
	return gone, nil
}

// keptPeriodRow is a row of standing_periods.
type keptPeriodRow struct {
	keptPeriod
	policy leaderboard.Policy
	order  leaderboard.Order
}

// query is the StandingsQuery of the period.
func (p keptPeriodRow) query(board string) leaderboard.StandingsQuery {
	q := leaderboard.StandingsQuery{Board: board, Policy: p.policy, Order: p.order, Window: p.window, Period: p.period}
	if p.start.InfinityModifier == pgtype.Finite {
		q.From = p.start.Time
	}
	if p.end.InfinityModifier == pgtype.Finite {
		q.To = p.end.Time
	}
	return q
}

// restand recomputes, from the log, the standings of the members of gone in
// every complete period of their boards holding one of their times.
func (s *Store) restand(ctx context.Context, tx pgx.Tx, gone []deletedRow) error {
	byBoard := map[string][]deletedRow{}
	var boards []string
	for _, d := range gone {
		if byBoard[d.board] == nil {
			boards = append(boards, d.board)
		}
		byBoard[d.board] = append(byBoard[d.board], d)
	}
	for _, board := range boards {
		rows := byBoard[board]
		ats := make([]time.Time, len(rows))
		for i, d := range rows {
			ats[i] = d.at
		}
		periods, err := s.completePeriods(ctx, tx, board, ats)
		if err != nil {
			return err
		}
		for _, p := range periods {
			var members []string
			seen := map[string]bool{}
			for _, d := range rows {
				if p.holds(d.at) && !seen[d.member] {
					seen[d.member] = true
					members = append(members, d.member)
				}
			}
			if err := s.recompute(ctx, tx, p.query(board), members); err != nil {
				return err
			}
		}
	}
	return nil
}

// completePeriods returns the complete periods of board holding one of ats.
func (s *Store) completePeriods(ctx context.Context, tx pgx.Tx, board string, ats []time.Time) ([]keptPeriodRow, error) {
	rows, err := tx.Query(ctx, `SELECT "window", period, policy, score_order, period_start, period_end FROM `+s.tKeptPeriods+` sp
WHERE sp.board = $1 AND sp.complete
	AND EXISTS (SELECT 1 FROM unnest($2::timestamptz[]) AS a WHERE a >= sp.period_start AND a < sp.period_end)
ORDER BY "window", period`, board, ats)
	if err != nil {
		return nil, err
	}
	var out []keptPeriodRow
	var p keptPeriodRow
	var policy, order int16
	_, err = pgx.ForEachRow(rows, []any{&p.window, &p.period, &policy, &order, &p.start, &p.end}, func() error {
		p.policy, p.order = leaderboard.Policy(policy), leaderboard.Order(order)
		out = append(out, p)
		return nil
	})
	return out, err
}

// recompute rewrites the kept standings of members (nil: every member) in
// the period q names with the log's aggregation, the one Standings makes.
// An Accumulate total the aggregation cannot hold (it overflows float64)
// cannot be kept: the period is then marked incomplete, and Standings
// aggregates it from then on (handling the overflow).
func (s *Store) recompute(ctx context.Context, tx pgx.Tx, q leaderboard.StandingsQuery, members []string) error {
	from, args, err := s.standingsFrom(q)
	if err != nil {
		return err
	}
	del := `DELETE FROM ` + s.tKept + ` WHERE board = $1 AND "window" = $2 AND period = $3`
	delArgs := []any{q.Board, q.Window, q.Period}
	if members != nil {
		args = append(args, members)
		from += fmt.Sprintf(" AND member = ANY($%d)", len(args))
		del += " AND member = ANY($4)"
		delArgs = append(delArgs, members)
	}
	agg, err := standingsSQL(q, from)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, del, delArgs...); err != nil {
		return err
	}
	args = append(args, q.Window, q.Period)
	insert := fmt.Sprintf(`INSERT INTO %s (board, "window", period, member, score, at)
SELECT $1::text, $%d::text, $%d::text, a.member, a.score, a.at FROM (%s) a`, s.tKept, len(args)-1, len(args), agg)
	// A savepoint: an overflow must not abort the transaction.
	err = pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
		_, err := sp.Exec(ctx, insert, args...)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == codeOutOfRange {
		_, err = tx.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = false WHERE board = $1 AND "window" = $2 AND period = $3`,
			q.Board, q.Window, q.Period)
	}
	return err
}
