package leaderboard_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// memStore is a Store in memory, for the ordering rules; pgstore is tested
// in its own module against PostgreSQL.
type memStore struct {
	mu    sync.Mutex
	subs  []lb.Submission
	ids   map[string]time.Time // board + "\x00" + id -> received
	idFor map[string]string    // board + "\x00" + id -> member
	fail  error                // Append and Remove fail with it when set
	// afterAppend, when set, runs after each Append that records: a ctx
	// that ends between the store and Redis.
	afterAppend func()
	sealed      map[string][]lb.Entry
	// removed holds, by board, window, period and member, how many
	// submissions there were at the member's last removal from the period.
	removed map[string]int
	// corrected holds, by board, window, period and member, the member's
	// last correction in the period (Set).
	corrected map[string]memCorrection
}

// The optional interfaces the root tests count on memStore having.
var (
	_ lb.Remover       = (*memStore)(nil)
	_ lb.PeriodDeleter = (*memStore)(nil)
	_ lb.Corrector     = (*memStore)(nil)
	_ lb.IDReplayer    = (*memStore)(nil)
)

// memCorrection is a correction, with how many submissions there were when
// it was made: it stands for the member's submissions before that.
type memCorrection struct {
	lb.StoredStanding
	pos int
}

func newMemStore() *memStore {
	return &memStore{ids: map[string]time.Time{}, idFor: map[string]string{}, sealed: map[string][]lb.Entry{},
		removed: map[string]int{}, corrected: map[string]memCorrection{}}
}

func removalKey(board, window, period, member string) string {
	return board + "\x00" + window + "\x00" + period + "\x00" + member
}

func (s *memStore) Remove(_ context.Context, r lb.Removal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	for _, p := range r.Periods {
		for _, m := range r.Members {
			s.removed[removalKey(r.Board, p.Window, p.Period, m)] = len(s.subs)
			delete(s.corrected, removalKey(r.Board, p.Window, p.Period, m)) // removed with the rest
		}
	}
	return nil
}

// Correct records c as of the submissions so far: Standings of its period
// counts it in place of the member's earlier submissions. A newer
// correction replaces it; a removal or reset deletes it.
func (s *memStore) Correct(_ context.Context, c lb.Correction) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.corrected[removalKey(c.Board, c.Period.Window, c.Period.Period, c.Member)] = memCorrection{
		StoredStanding: lb.StoredStanding{Member: c.Member, Score: c.Score, At: c.At}, pos: len(s.subs)}
	return nil
}

// deleteCorrections deletes the corrections whose key starts with prefix.
func (s *memStore) deleteCorrections(prefix string) {
	for k := range s.corrected {
		if strings.HasPrefix(k, prefix) {
			delete(s.corrected, k)
		}
	}
}

// DeletePeriod records a reset as the removal of member "" (no member is
// empty), which Standings reads for every member.
func (s *memStore) DeletePeriod(_ context.Context, board string, p lb.SubmissionPeriod, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.removed[removalKey(board, p.Window, p.Period, "")] = len(s.subs)
	s.deleteCorrections(removalKey(board, p.Window, p.Period, "")) // reset with the rest
	return nil
}

func (s *memStore) DeleteBoard(_ context.Context, board string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	// The removal marks are positions in subs, so the board's submissions
	// stay there, behind a mark of the whole board (window and period "").
	s.removed[removalKey(board, "", "", "")] = len(s.subs)
	for k := range s.removed {
		if strings.HasPrefix(k, board+"\x00") && k != removalKey(board, "", "", "") {
			delete(s.removed, k)
		}
	}
	s.deleteCorrections(board + "\x00")
	for k := range s.ids {
		if strings.HasPrefix(k, board+"\x00") {
			delete(s.ids, k)
			delete(s.idFor, k)
		}
	}
	for k := range s.sealed {
		if strings.HasPrefix(k, board+"/") {
			delete(s.sealed, k)
		}
	}
	return nil
}

func (s *memStore) Append(_ context.Context, sub lb.Submission) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return false, s.fail
	}
	if sub.ID != "" {
		if _, ok := s.ids[sub.Board+"\x00"+sub.ID]; ok {
			return true, nil
		}
		s.ids[sub.Board+"\x00"+sub.ID] = sub.Received
		s.idFor[sub.Board+"\x00"+sub.ID] = sub.Member
	}
	s.subs = append(s.subs, sub)
	if s.afterAppend != nil {
		s.afterAppend()
	}
	return false, nil
}

func (s *memStore) Standings(_ context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	s.mu.Lock()
	agg := map[string]*lb.StoredStanding{}
	var order []string
	add := func(st lb.StoredStanding) {
		if (!q.From.IsZero() && st.At.Before(q.From)) || (!q.To.IsZero() && !st.At.Before(q.To)) {
			return
		}
		if cur, ok := agg[st.Member]; ok {
			*cur = memFold(q, *cur, st)
			return
		}
		agg[st.Member] = &st
		order = append(order, st.Member)
	}
	corrections := s.corrections(q)
	for i := 0; i <= len(s.subs); i++ {
		// A correction made when there were i submissions comes after
		// them, before the next.
		for _, c := range corrections[i] {
			add(c)
		}
		if i < len(s.subs) && s.counts(q, i) {
			sub := s.subs[i]
			add(lb.StoredStanding{Member: sub.Member, Score: sub.Score, At: sub.At})
		}
	}
	out := make([]lb.StoredStanding, 0, len(order))
	for _, m := range order {
		out = append(out, *agg[m])
	}
	s.mu.Unlock()
	for _, st := range out {
		if err := fn(st); err != nil {
			return err
		}
	}
	return nil
}

// corrections returns the corrections of the period q names, by how many
// submissions there were when each was made.
func (s *memStore) corrections(q lb.StandingsQuery) map[int][]lb.StoredStanding {
	out := map[int][]lb.StoredStanding{}
	if q.Window == "" {
		return out
	}
	for k, c := range s.corrected {
		if strings.HasPrefix(k, removalKey(q.Board, q.Window, q.Period, "")) {
			out[c.pos] = append(out[c.pos], c.StoredStanding)
		}
	}
	return out
}

// counts reports whether submission i counts in q, time bounds aside.
func (s *memStore) counts(q lb.StandingsQuery, i int) bool {
	sub := s.subs[i]
	if sub.Board != q.Board {
		return false
	}
	if n, ok := s.removed[removalKey(q.Board, "", "", "")]; ok && i < n {
		return false // appended before the board was deleted
	}
	if q.Window == "" {
		return true
	}
	if n, ok := s.removed[removalKey(q.Board, q.Window, q.Period, sub.Member)]; ok && i < n {
		return false // appended before the member's removal from the period
	}
	if n, ok := s.removed[removalKey(q.Board, q.Window, q.Period, "")]; ok && i < n {
		return false // appended before the period's reset
	}
	if c, ok := s.corrected[removalKey(q.Board, q.Window, q.Period, sub.Member)]; ok && i < c.pos {
		return false // appended before the member's correction, which stands for it
	}
	return true
}

// memFold combines a member's standing with its next submission (or
// correction) by q's policy.
func memFold(q lb.StandingsQuery, cur, next lb.StoredStanding) lb.StoredStanding {
	switch q.Policy {
	case lb.Replace:
		return next
	case lb.Accumulate:
		cur.Score += next.Score
		if next.Score != 0 {
			cur.At = next.At
		}
		return cur
	}
	better := (q.Order == lb.HighestFirst && next.Score > cur.Score) || (q.Order == lb.LowestFirst && next.Score < cur.Score)
	if better || (next.Score == cur.Score && next.At.Before(cur.At)) {
		return next
	}
	return cur
}

func (s *memStore) Seal(_ context.Context, board, window, period string, entries []lb.Entry) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := board + "/" + window + "/" + period
	if _, ok := s.sealed[k]; ok {
		return false, nil
	}
	s.sealed[k] = append([]lb.Entry(nil), entries...)
	return true, nil
}

func (s *memStore) Sealed(_ context.Context, board, window, period string) ([]lb.Entry, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.sealed[board+"/"+window+"/"+period]
	return e, ok, nil
}

func (s *memStore) AppendBatch(ctx context.Context, subs []lb.Submission) ([]bool, error) {
	dup := make([]bool, len(subs))
	for i, sub := range subs {
		var err error
		if dup[i], err = s.Append(ctx, sub); err != nil {
			return nil, err
		}
	}
	return dup, nil
}

// Retract takes back submissions just appended: by board and id, or the
// latest equal one without an id.
func (s *memStore) Retract(_ context.Context, subs []lb.Submission) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range subs {
		for i := len(s.subs) - 1; i >= 0; i-- {
			sub := s.subs[i]
			same := sub.Board == r.Board && sub.ID == r.ID
			if r.ID == "" {
				same = same && sub.Member == r.Member && sub.Score == r.Score && sub.At.Equal(r.At) && sub.Received.Equal(r.Received)
			}
			if same {
				s.subs = append(s.subs[:i], s.subs[i+1:]...)
				delete(s.ids, r.Board+"\x00"+r.ID)
				delete(s.idFor, r.Board+"\x00"+r.ID)
				break
			}
		}
	}
	return nil
}

func (s *memStore) IDReceived(_ context.Context, board, id string) (time.Time, string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.ids[board+"\x00"+id]
	return at, s.idFor[board+"\x00"+id], ok, nil
}

func (s *memStore) IDSubmission(_ context.Context, board, id string) (lb.Submission, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range s.subs {
		if sub.ID != "" && sub.Board == board && sub.ID == id {
			return sub, true, nil
		}
	}
	return lb.Submission{}, false, nil
}

func (s *memStore) IDsSince(_ context.Context, board string, since time.Time, fn func(id, member string, received time.Time) error) error {
	s.mu.Lock()
	var ids, members []string
	var at []time.Time
	for k, t := range s.ids {
		if b, id, _ := strings.Cut(k, "\x00"); b == board && !t.Before(since) {
			ids, members, at = append(ids, id), append(members, s.idFor[k]), append(at, t)
		}
	}
	s.mu.Unlock()
	for i := range ids {
		if err := fn(ids[i], members[i], at[i]); err != nil {
			return err
		}
	}
	return nil
}

func (s *memStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

// TestSubmitWithIDAppliesOnce retries one id five times at once under
// Accumulate: it adds once, on every backend, with and without a store.
func TestSubmitWithIDAppliesOnce(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, withStore := range []bool{false, true} {
			store := newMemStore()
			for _, sharded := range []bool{false, true} {
				opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily())}
				if withStore {
					opts = append(opts, lb.WithStore(store))
				}
				if sharded {
					opts = append(opts, lb.WithShards(12, 17))
				}
				board, _ := newBoard(t, b, opts...)
				_, err := board.Submit(ctx, "p", 10)
				require.NoError(t, err)

				var wg sync.WaitGroup
				results := make([]lb.Result, 5)
				errs := make([]error, 5)
				for i := range results {
					wg.Add(1)
					go func() {
						defer wg.Done()
						results[i], errs[i] = board.Submit(ctx, "p", 5, lb.WithID("match-42"))
					}()
				}
				wg.Wait()
				applied := 0
				for i, r := range results {
					require.NoError(t, errs[i])
					if !r.Duplicate {
						applied++
						require.True(t, r.Changed)
					} else {
						require.False(t, r.Changed)
						require.Equal(t, 15.0, r.Score, "a duplicate reports the current standing")
					}
				}
				require.Equal(t, 1, applied)
				for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
					st, err := board.Rank(ctx, "p", lb.In(w))
					require.NoError(t, err)
					require.Equal(t, 15.0, st.Score, w.Name())
				}
				if withStore {
					require.Equal(t, 2, store.count(), "the store keeps the id once")
				}
				// Another id is another submission.
				res, err := board.Submit(ctx, "p", 5, lb.WithID("match-43"))
				require.NoError(t, err)
				require.False(t, res.Duplicate)
				require.Equal(t, 20.0, res.Score)
				if withStore {
					store = newMemStore()
				}
			}
		}
	})
}

// TestDedupeWindow lets miniredis's clock pass the window: the id is
// forgotten by Redis and applies again (the store would still refuse it).
func TestDedupeWindow(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	clock := time.Now().Truncate(time.Millisecond)
	b.Mini.SetTime(clock)
	board, _ := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithDedupeWindow(time.Hour),
		lb.WithClock(func() time.Time { return clock }))
	_, err := board.Submit(ctx, "p", 1, lb.WithID("x"))
	require.NoError(t, err)
	clock = clock.Add(59 * time.Minute)
	b.Mini.FastForward(59 * time.Minute)
	res, err := board.Submit(ctx, "p", 1, lb.WithID("x"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	clock = clock.Add(2 * time.Minute)
	b.Mini.FastForward(2 * time.Minute)
	res, err = board.Submit(ctx, "p", 1, lb.WithID("x"))
	require.NoError(t, err)
	require.False(t, res.Duplicate)
	require.Equal(t, 2.0, res.Score)

	_, err = lb.New(b.Client, "x", lb.WithDedupeWindow(0))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
	_, err = lb.New(b.Client, "x", lb.WithStore(nil))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
	// A nil pointer in the interface panicked at the first Submit.
	_, err = lb.New(b.Client, "x", lb.WithStore((*memStore)(nil)))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
}

// TestMemStoreCorrect: the in-memory store counts a correction as pgstore
// does, in place of the member's earlier submissions in its period alone,
// until a removal or reset drops it.
func TestMemStoreCorrect(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(minute int) time.Time { return t0.Add(time.Duration(minute) * time.Minute) }
	p := lb.SubmissionPeriod{Window: "alltime", Period: "alltime"}
	q := lb.StandingsQuery{Board: "b", Policy: lb.Accumulate, Window: p.Window, Period: p.Period}
	s := newMemStore()
	scores := func(q lb.StandingsQuery) map[string]float64 {
		got := map[string]float64{}
		require.NoError(t, s.Standings(ctx, q, func(st lb.StoredStanding) error {
			got[st.Member] = st.Score
			return nil
		}))
		return got
	}
	add := func(member string, score float64, minute int) {
		_, err := s.Append(ctx, lb.Submission{Board: "b", Member: member, Score: score, At: at(minute)})
		require.NoError(t, err)
	}
	add("x", 5, 1)
	add("y", 1, 2)
	require.NoError(t, s.Correct(ctx, lb.Correction{Board: "b", Member: "x", Score: 2, At: at(3), Period: p}))
	add("x", 4, 4)
	require.Equal(t, map[string]float64{"x": 6, "y": 1}, scores(q))
	plain := q
	plain.Window, plain.Period = "", ""
	require.Equal(t, map[string]float64{"x": 9, "y": 1}, scores(plain), "a plain range counts every submission")
	keepBest := q
	keepBest.Policy = lb.KeepBest
	require.Equal(t, map[string]float64{"x": 4, "y": 1}, scores(keepBest))

	require.NoError(t, s.Correct(ctx, lb.Correction{Board: "b", Member: "x", Score: 1, At: at(5), Period: p}))
	require.Equal(t, map[string]float64{"x": 1, "y": 1}, scores(q), "a newer correction replaces the older")
	require.NoError(t, s.Remove(ctx, lb.Removal{Board: "b", Members: []string{"x"}, Periods: []lb.SubmissionPeriod{p}}))
	require.Equal(t, map[string]float64{"y": 1}, scores(q), "a removal drops the correction")
	require.NoError(t, s.Correct(ctx, lb.Correction{Board: "b", Member: "y", Score: 8, At: at(6), Period: p}))
	require.Equal(t, map[string]float64{"y": 8}, scores(q))
	require.NoError(t, s.DeletePeriod(ctx, "b", p, at(7)))
	add("y", 3, 8)
	require.Equal(t, map[string]float64{"y": 3}, scores(q), "a reset drops the correction")
	require.NoError(t, s.Correct(ctx, lb.Correction{Board: "b", Member: "y", Score: 8, At: at(9), Period: p}))
	require.NoError(t, s.DeleteBoard(ctx, "b"))
	require.Empty(t, scores(q), "DeleteBoard deletes the corrections")
}
