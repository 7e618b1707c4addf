package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// errStoreFault is flakyStore's failure.
var errStoreFault = errors.New("injected: store fault")

// flakyStore is a memStore whose writes fail one in six while on: half
// before anything is recorded, half after it was (the answer lost, as a
// store call past its deadline reports it).
type flakyStore struct {
	*memStore
	mu sync.Mutex
	r  *rand.Rand
	on bool
}

func (s *flakyStore) enable(on bool) {
	s.mu.Lock()
	s.on = on
	s.mu.Unlock()
}

func (s *flakyStore) trip() (fail, after bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.on && s.r.Intn(6) == 0, s.r.Intn(2) == 0
}

func (s *flakyStore) wrap(do func() error) error {
	fail, after := s.trip()
	switch {
	case !fail:
		return do()
	case !after:
		return errStoreFault
	}
	if err := do(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %w", errStoreFault, context.DeadlineExceeded)
}

func (s *flakyStore) Append(ctx context.Context, sub lb.Submission) (dup bool, err error) {
	err = s.wrap(func() (e error) { dup, e = s.memStore.Append(ctx, sub); return e })
	return dup, err
}

func (s *flakyStore) AppendBatch(ctx context.Context, subs []lb.Submission) (dup []bool, err error) {
	err = s.wrap(func() (e error) { dup, e = s.memStore.AppendBatch(ctx, subs); return e })
	return dup, err
}

func (s *flakyStore) Correct(ctx context.Context, c lb.Correction) error {
	return s.wrap(func() error { return s.memStore.Correct(ctx, c) })
}

func (s *flakyStore) Remove(ctx context.Context, r lb.Removal) error {
	return s.wrap(func() error { return s.memStore.Remove(ctx, r) })
}

func (s *flakyStore) DeletePeriod(ctx context.Context, board string, p lb.SubmissionPeriod, at time.Time) error {
	return s.wrap(func() error { return s.memStore.DeletePeriod(ctx, board, p, at) })
}

// TestFaultStoreAndRedisSteps runs Submits, Sets, RemoveBetweens, Removes,
// SubmitManys, a Batcher's batches and Resets one at a time, with the store
// and Redis both failing now and then (each before or after its write),
// and checks each step's answer against what it left: a store failure
// leaves Redis as it was; nil leaves Redis and the store in agreement
// (Verify clean, no Rebuild); ErrPending, or a store answer lost, is
// settled by a Rebuild. No path leaves Redis ahead of the store, or a
// store record behind an answer that is neither ErrPending nor the
// store's own.
func TestFaultStoreAndRedisSteps(t *testing.T) {
	b := testredis.Mini(t)
	now := time.Now().UTC().Truncate(24 * time.Hour).Add(12 * time.Hour)
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: now.Add(-time.Hour), Resolution: time.Millisecond, MaxScore: 1e5})
	require.NoError(t, err)
	kinds := map[lb.Policy][]lb.Option{lb.Accumulate: nil, lb.Replace: {lb.WithShards(30, 60)}, lb.KeepBest: {lb.WithTieBreak(tb)}}
	for policy, extra := range kinds {
		t.Run(policy.String(), func(t *testing.T) {
			faultStepsRun(t, b, policy, now, extra)
		})
	}
}

// faultStep is one step's writes on a board, drawn from r.
type faultStep struct {
	board *lb.Leaderboard
	r     *rand.Rand
	i     int
}

// run runs one write (several, for a batch) and returns its name and
// answers.
func (s faultStep) run(ctx context.Context, t *testing.T) (string, []error) {
	member, score := fmt.Sprintf("m%d", s.r.Intn(8)), float64(s.r.Intn(100))
	var q []lb.Query
	if s.r.Intn(2) == 0 {
		q = append(q, lb.In(lb.Daily()))
	}
	switch k := s.r.Intn(10); {
	case k < 3:
		_, err := s.board.Submit(ctx, member, score)
		return "submit", []error{err}
	case k == 3:
		return "set", []error{s.board.Set(ctx, member, score, q...)}
	case k == 4:
		_, err := s.board.RemoveBetween(ctx, score, score+30, q...)
		return "remove between", []error{err}
	case k == 5:
		return "remove", []error{s.board.Remove(ctx, member)}
	case k == 6:
		return "submit many", []error{s.board.SubmitMany(ctx, map[string]float64{member: score, "x" + member: score + 1})}
	case k < 9:
		return "batch", s.batch(ctx, t)
	}
	return "reset", []error{s.board.Reset(ctx, lb.In(lb.Daily()))}
}

// batch submits six scores of four members at once through a Batcher.
func (s faultStep) batch(ctx context.Context, t *testing.T) []error {
	bt, err := s.board.NewBatcher(lb.WithBatchWindow(5 * time.Millisecond))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for j := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[j] = bt.Submit(ctx, fmt.Sprintf("m%d", (j+s.i)%4), float64(j*7%50))
		}()
	}
	wg.Wait()
	require.NoError(t, bt.Close(ctx))
	return errs
}

func faultStepsRun(t *testing.T, b *testredis.Backend, policy lb.Policy, now time.Time, extra []lb.Option) {
	ctx := context.Background()
	clock := &testClock{now: now}
	store := &flakyStore{memStore: newMemStore(), r: rand.New(rand.NewSource(int64(policy) + 3))}
	fc := &faultClient{Client: b.Client}
	name := b.BoardName(t)
	opts := append([]lb.Option{lb.WithPolicy(policy), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithStore(store), lb.WithClock(clock.Now)}, extra...)
	board, err := lb.New(fc, name, opts...)
	require.NoError(t, err)
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	r := rand.New(rand.NewSource(int64(policy)))
	for i := range 50 {
		before := faultSnapshot(t, b, name)
		fc.permille.Store(120)
		store.enable(true)
		what, errs := faultStep{board: board, r: r, i: i}.run(ctx, t)
		fc.permille.Store(0)
		store.enable(false)
		rebuild := false
		for _, err := range errs {
			switch {
			case err == nil:
			case errors.Is(err, lb.ErrPending), errors.Is(err, context.DeadlineExceeded):
				rebuild = true
			case errors.Is(err, errStoreFault):
				if len(errs) == 1 {
					require.Equal(t, before, faultSnapshot(t, b, name), "%d %s: %v: Redis written after a store failure", i, what, err)
				}
			case what == "remove between" && errors.Is(err, errFault):
				// Its read of a chunk's members failed, before the store.
			default:
				t.Fatalf("%d %s: %v: neither ErrPending nor the store's failure", i, what, err)
			}
		}
		if rebuild {
			_, err := board.Rebuild(ctx)
			require.NoError(t, err)
		}
		reps, err := board.Verify(ctx)
		require.NoError(t, err)
		for _, rep := range reps {
			require.True(t, rep.Clean(), "%d %s %v: %+v", i, what, errs, rep)
		}
		clock.Set(clock.Now().Add(time.Millisecond))
	}
}

// faultSnapshot is every sorted set and hash of a board with its content,
// without the recent versions a sharded board keeps on a Cluster, which
// expire on their own.
func faultSnapshot(t *testing.T, b *testredis.Backend, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	c := b.Client.Client
	ctx := context.Background()
	for _, pattern := range []string{"*{" + name + "}*", "*{" + name + "#*"} {
		for _, k := range b.Keys(t, pattern) {
			if _, ok := recentBase(k); ok {
				continue
			}
			typ, err := c.Do(ctx, c.B().Type().Key(k).Build()).ToString()
			require.NoError(t, err)
			switch typ {
			case "zset":
				v, err := c.Do(ctx, c.B().Zrange().Key(k).Min("0").Max("-1").Withscores().Build()).AsZScores()
				require.NoError(t, err)
				out[k] = fmt.Sprint(v)
			case "hash":
				v, err := c.Do(ctx, c.B().Hgetall().Key(k).Build()).AsStrMap()
				require.NoError(t, err)
				out[k] = fmt.Sprint(v)
			case "none":
			default:
				out[k] = typ
			}
		}
	}
	return out
}
