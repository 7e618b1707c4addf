package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
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
	ids    map[string]bool
	fail   error // Append fails with it when set
	sealed map[string][]lb.Entry
}

func newMemStore() *memStore {
	return &memStore{ids: map[string]bool{}, sealed: map[string][]lb.Entry{}}
}

func (s *memStore) Append(_ context.Context, sub lb.Submission) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return false, s.fail
	}
	if sub.ID != "" {
		if s.ids[sub.Board+"\x00"+sub.ID] {
			return true, nil
		}
		s.ids[sub.Board+"\x00"+sub.ID] = true
	}
	s.subs = append(s.subs, sub)
	return false, nil
}

func (s *memStore) Standings(_ context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	s.mu.Lock()
	agg := map[string]*lb.StoredStanding{}
	var order []string
	for _, sub := range s.subs {
		if sub.Board != q.Board || (!q.From.IsZero() && sub.At.Before(q.From)) || (!q.To.IsZero() && !sub.At.Before(q.To)) {
			continue
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
			opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily())}
			if withStore {
				opts = append(opts, lb.WithStore(store))
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

// TestStoreFirst: a store failure leaves Redis untouched; a Redis failure
// after the store wrote reports ErrPending.
func TestStoreFirst(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Accumulate} {
			store := newMemStore()
			board, name := newBoard(t, b, lb.WithPolicy(policy), lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Weekly()))
			_, err := board.Submit(ctx, "p", 3)
			require.NoError(t, err)
			before := b.Snapshot(t, name)

			store.fail = errors.New("connection refused")
			_, err = board.Submit(ctx, "p", 7)
			require.ErrorContains(t, err, "store: connection refused")
			require.NotErrorIs(t, err, lb.ErrPending)
			require.Equal(t, before, b.Snapshot(t, name), "Redis must be untouched")
			store.fail = nil

			// Break Redis for this board: its all-time key holds a string.
			c := b.Client.Client
			require.NoError(t, c.Do(ctx, c.B().Set().Key("lb:{"+name+"}:alltime").Value("x").Build()).Error())
			_, err = board.Submit(ctx, "p", 9, lb.WithID("late"))
			require.ErrorIs(t, err, lb.ErrPending)
			require.ErrorContains(t, err, "WRONGTYPE")
			require.Equal(t, 2, store.count(), "the submission is durable")
			require.Equal(t, fmt.Sprint(9.0), fmt.Sprint(store.subs[1].Score))
		}
	})
}
