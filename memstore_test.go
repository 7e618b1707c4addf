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
	mu     sync.Mutex
	subs   []lb.Submission
	ids    map[string]time.Time // board + "\x00" + id -> received
	idFor  map[string]string    // board + "\x00" + id -> member
	fail   error                // Append and Remove fail with it when set
	sealed map[string][]lb.Entry
	// removed holds, by board, window, period and member, how many
	// submissions there were at the member's last removal from the period.
	removed map[string]int
}

func newMemStore() *memStore {
	return &memStore{ids: map[string]time.Time{}, idFor: map[string]string{}, sealed: map[string][]lb.Entry{}, removed: map[string]int{}}
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
		}
	}
	return nil
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
	return false, nil
}

func (s *memStore) Standings(_ context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	s.mu.Lock()
	agg := map[string]*lb.StoredStanding{}
	var order []string
	for i, sub := range s.subs {
		if sub.Board != q.Board || (!q.From.IsZero() && sub.At.Before(q.From)) || (!q.To.IsZero() && !sub.At.Before(q.To)) {
			continue
		}
		if n, ok := s.removed[removalKey(q.Board, q.Window, q.Period, sub.Member)]; ok && q.Window != "" && i < n {
			continue // appended before the member's removal from the period
		}
		if n, ok := s.removed[removalKey(q.Board, q.Window, q.Period, "")]; ok && q.Window != "" && i < n {
			continue // appended before the period's reset
		}
		if n, ok := s.removed[removalKey(q.Board, "", "", "")]; ok && i < n {
			continue // appended before the board was deleted
		}
		cur, ok := agg[sub.Member]
		if !ok {
			agg[sub.Member] = &lb.StoredStanding{Member: sub.Member, Score: sub.Score, At: sub.At}
			order = append(order, sub.Member)
			continue
		}
		switch q.Policy {
		case lb.Replace:
			cur.Score, cur.At = sub.Score, sub.At
		case lb.Accumulate:
			cur.Score += sub.Score
			cur.At = sub.At
		default:
			better := (q.Order == lb.HighestFirst && sub.Score > cur.Score) || (q.Order == lb.LowestFirst && sub.Score < cur.Score)
			if better || (sub.Score == cur.Score && sub.At.Before(cur.At)) {
				cur.Score, cur.At = sub.Score, sub.At
			}
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
				break
			}
		}
	}
	return nil
}

func (s *memStore) IDReceived(_ context.Context, board, id string) (time.Time, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.ids[board+"\x00"+id]
	return at, ok, nil
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
}
