package leaderboard_test

// Fault injection against the durability and error contracts.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"net"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// errFault is the injected Redis failure.
var errFault = errors.New("injected: injected redis failure")

// faultClient fails calls while down is set: mode "drop" fails without
// sending; mode "lost" sends the call and then loses its reply.
type faultClient struct {
	rueidis.Client
	down  atomic.Bool
	lost  atomic.Bool
	nth   atomic.Int64 // >0: fail the nth call from now (then stop)
	calls atomic.Int64
	// permille > 0: each call fails with that chance, half of them after
	// being sent (the reply lost).
	permille atomic.Int64
	rmu      sync.Mutex
	r        *rand.Rand
	// failing, when set, fails without sending each command of a DoMulti
	// naming a key that starts with it, and sends the others.
	failing atomic.Pointer[string]
}

func (c *faultClient) trip() (fail, lost bool) {
	c.calls.Add(1)
	if p := c.permille.Load(); p > 0 {
		c.rmu.Lock()
		if c.r == nil {
			c.r = rand.New(rand.NewSource(42))
		}
		f, l := c.r.Int63n(1000) < p, c.r.Intn(2) == 0
		c.rmu.Unlock()
		if f {
			return true, l
		}
	}
	for {
		n := c.nth.Load()
		if n <= 0 {
			break
		}
		if c.nth.CompareAndSwap(n, n-1) {
			if n == 1 {
				return true, c.lost.Load()
			}
			break
		}
	}
	return c.down.Load(), c.lost.Load()
}

func (c *faultClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	fail, lost := c.trip()
	if !fail {
		return c.Client.Do(ctx, cmd)
	}
	if lost {
		_ = c.Client.Do(ctx, cmd)
	}
	return rueidis.NewErrorResult(errFault)
}

func (c *faultClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if p := c.failing.Load(); p != nil {
		return c.doMultiFailing(ctx, *p, multi)
	}
	fail, lost := c.trip()
	if !fail {
		return c.Client.DoMulti(ctx, multi...)
	}
	if lost {
		_ = c.Client.DoMulti(ctx, multi...)
	}
	out := make([]rueidis.RedisResult, len(multi))
	for i := range out {
		out[i] = rueidis.NewErrorResult(errFault)
	}
	return out
}

// doMultiFailing sends the commands of multi that name no key starting
// with prefix, and fails the others.
func (c *faultClient) doMultiFailing(ctx context.Context, prefix string, multi []rueidis.Completed) []rueidis.RedisResult {
	out := make([]rueidis.RedisResult, len(multi))
	var send []rueidis.Completed
	var at []int
	for i, cmd := range multi {
		if slices.ContainsFunc(cmd.Commands(), func(a string) bool { return strings.HasPrefix(a, prefix) }) {
			out[i] = rueidis.NewErrorResult(errFault)
			continue
		}
		send, at = append(send, cmd), append(at, i)
	}
	for k, r := range c.Client.DoMulti(ctx, send...) {
		out[at[k]] = r
	}
	return out
}

// plainOnlyStore is a Store and nothing more: no Corrector, Remover,
// PeriodDeleter, BoardDeleter, Retractor, IDKeeper or BatchAppender.
type plainOnlyStore struct{ lb.Store }

// faultStandings reads a store's standings of one period.
func faultStandings(t *testing.T, s lb.Store, q lb.StandingsQuery) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	require.NoError(t, s.Standings(context.Background(), q, func(st lb.StoredStanding) error {
		out[st.Member] = st.Score
		return nil
	}))
	return out
}

// faultRedis reads every entry of a board's default window.
func faultRedis(t *testing.T, board *lb.Leaderboard, q ...lb.Query) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for e, err := range board.All(context.Background(), q...) {
		require.NoError(t, err)
		out[e.Member] = e.Score
	}
	return out
}

func faultAllTimeQuery(name string, policy lb.Policy) lb.StandingsQuery {
	return lb.StandingsQuery{Board: name, Policy: policy, Order: lb.HighestFirst, Window: "alltime", Period: "alltime"}
}

// TestFaultSetPendingWithoutCorrector: with a store that does not
// record corrections, a Set that fails in Redis was recorded nowhere; it
// must not report ErrPending ("reached the store ... reaches Redis at the
// next Rebuild"), which a Rebuild would then contradict.
func TestFaultSetPendingWithoutCorrector(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		store := newMemStore()
		fc := &faultClient{Client: b.Client}
		name := b.BoardName(t)
		board, err := lb.New(fc, name, lb.WithStore(plainOnlyStore{store}), lb.WithClock(fixed(future)))
		require.NoError(t, err)
		_, err = board.Submit(ctx, "p", 10)
		require.NoError(t, err)
		fc.down.Store(true)
		err = board.Set(ctx, "p", 99)
		fc.down.Store(false)
		require.Error(t, err)
		// What the docs promise for ErrPending: the correction is durable and
		// reaches Redis at the next Rebuild. Check that promise.
		if errors.Is(err, lb.ErrPending) {
			_, rerr := board.Rebuild(ctx)
			require.NoError(t, rerr)
			st, rerr := board.Rank(ctx, "p")
			require.NoError(t, rerr)
			require.Equal(t, 99.0, st.Score,
				"Set returned ErrPending (%v), yet the store never recorded it and Rebuild restored %v", err, st.Score)
		}
	})
}

// TestFaultStoreFailureLeavesRedis: every write with a failing store
// returns an error wrapping the store's, not ErrPending, naming the
// operation, and leaves Redis untouched; the Batcher's callers too.
func TestFaultStoreFailureLeavesRedis(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			t.Run(fmt.Sprint("sharded=", sharded), func(t *testing.T) {
				ctx := context.Background()
				store := newMemStore()
				opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate), lb.WithClock(fixed(future)),
					lb.WithWindows(lb.AllTime(), lb.Daily())}
				if sharded {
					opts = append(opts, lb.WithShards(50))
				}
				board, name := newBoard(t, b, opts...)
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 10, "b": 60, "c": 30}))
				before := b.Snapshot(t, name)
				nStored := store.count()
				storeFail := errors.New("injected: store down")
				store.mu.Lock()
				store.fail = storeFail
				store.mu.Unlock()

				check := func(op string, err error) {
					t.Helper()
					require.Error(t, err, op)
					require.ErrorIs(t, err, storeFail, op)
					require.NotErrorIs(t, err, lb.ErrPending, op)
					require.Contains(t, err.Error(), op, "the error names the operation")
				}
				_, err := board.Submit(ctx, "a", 5)
				check("submit", err)
				_, err = board.Submit(ctx, "a", 5, lb.WithID("x1"))
				check("submit", err)
				check("submit many", board.SubmitMany(ctx, map[string]float64{"a": 1, "d": 2}))
				check("set", board.Set(ctx, "a", 1))
				check("remove", board.Remove(ctx, "a"))
				_, err = board.RemoveBetween(ctx, 0, 100)
				check("remove between", err)
				check("reset", board.Reset(ctx))
				check("delete", board.Delete(ctx))

				bt, err := board.NewBatcher(lb.WithBatchWindow(20 * time.Millisecond))
				require.NoError(t, err)
				var wg sync.WaitGroup
				errs := make([]error, 20)
				for i := range errs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, errs[i] = bt.Submit(ctx, fmt.Sprintf("m%d", i%5), float64(i+1))
					}()
				}
				wg.Wait()
				require.NoError(t, bt.Close(ctx))
				for _, err := range errs {
					check("batch", err)
				}
				require.Equal(t, before, b.Snapshot(t, name), "Redis untouched")
				require.Equal(t, nStored, store.count(), "nothing stored")
			})
		}
	})
}

// TestFaultRedisDownPendingThenRebuild: every write whose Redis step
// fails after the store took it returns ErrPending, and a Rebuild then
// gives Redis exactly what the store holds.
func TestFaultRedisDownPendingThenRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			for _, lost := range []bool{false, true} {
				t.Run(fmt.Sprint("sharded=", sharded, ",lost=", lost), func(t *testing.T) {
					ctx := context.Background()
					store := newMemStore()
					fc := &faultClient{Client: b.Client}
					name := b.BoardName(t)
					opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate), lb.WithClock(fixed(future))}
					if sharded {
						opts = append(opts, lb.WithShards(50))
					}
					board, err := lb.New(fc, name, opts...)
					require.NoError(t, err)
					_, err = board.Rebuild(ctx)
					require.NoError(t, err)
					require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 10, "b": 60, "c": 30, "d": 70}))

					fc.lost.Store(lost)
					fc.down.Store(true)
					pending := func(op string, err error) {
						t.Helper()
						require.ErrorIs(t, err, lb.ErrPending, op)
						require.ErrorIs(t, err, errFault, op)
						require.Equal(t, 1, strings.Count(err.Error(), "leaderboard: "), "%s: the package named once: %v", op, err)
					}
					_, err = board.Submit(ctx, "a", 5)
					pending("submit", err)
					_, err = board.Submit(ctx, "e", 7, lb.WithID("id-e"))
					pending("submit id", err)
					pending("submit many", board.SubmitMany(ctx, map[string]float64{"b": 1, "f": 2}))
					pending("set", board.Set(ctx, "c", 3))
					pending("remove", board.Remove(ctx, "d"))

					bt, err := board.NewBatcher(lb.WithBatchWindow(10 * time.Millisecond))
					require.NoError(t, err)
					var wg sync.WaitGroup
					errs := make([]error, 30)
					for i := range errs {
						wg.Add(1)
						go func() {
							defer wg.Done()
							_, errs[i] = bt.Submit(ctx, fmt.Sprintf("g%d", i%4), float64(i+1))
						}()
					}
					wg.Wait()
					for _, err := range errs {
						pending("batch", err)
					}
					require.NoError(t, bt.Close(ctx))
					fc.down.Store(false)

					// The WithID retry applies once (IDKeeper store).
					res, err := board.Submit(ctx, "e", 7, lb.WithID("id-e"))
					require.NoError(t, err)
					if !lost {
						require.False(t, res.Duplicate, "retry of a submission Redis never applied")
					}
					require.Equal(t, 7.0, res.Score)
					res, err = board.Submit(ctx, "e", 7, lb.WithID("id-e"))
					require.NoError(t, err)
					require.True(t, res.Duplicate)
					require.Equal(t, 7.0, res.Score)

					_, err = board.Rebuild(ctx)
					require.NoError(t, err)
					want := faultStandings(t, store, faultAllTimeQuery(name, lb.Accumulate))
					require.Equal(t, want, faultRedis(t, board))
					require.Equal(t, 15.0, want["a"])
					require.NotContains(t, want, "d")
					require.Equal(t, 3.0, want["c"])
					reps, err := board.Verify(ctx)
					require.NoError(t, err)
					for _, r := range reps {
						require.True(t, r.Clean(), "%+v", r)
					}
				})
			}
		}
	})
}

// faultServer is a throwaway, memory-only redis-server of the test's own.
type faultServer struct {
	t     *testing.T
	port  int
	dir   string
	extra []string // more redis-server arguments (a Cluster node's)
	cmd   *exec.Cmd
}

func faultFreePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// faultStartServer starts a redis-server on a free port, with extra
// arguments after the test's own, stopped when the test ends.
func faultStartServer(t *testing.T, extra ...string) *faultServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if testredis.InCI() {
			t.Fatalf("redis-server is required under CI=true: %v", err)
		}
		t.Skip("no redis-server (run the test command)")
	}
	s := &faultServer{t: t, port: faultFreePort(t), dir: t.TempDir(), extra: extra}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *faultServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

func (s *faultServer) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir}, s.extra...)...)
	testredis.DieWithTest(s.cmd)
	require.NoError(s.t, s.cmd.Start())
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.Dial("tcp", s.addr())
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("redis-server on %s did not start", s.addr())
}

// stop kills the server (as a crash would) and waits for it.
func (s *faultServer) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_, _ = s.cmd.Process.Wait()
	s.cmd = nil
}

// client is a rueidis client to the server.
func (s *faultServer) client() rueidis.Client {
	s.t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.addr()}, DisableCache: true,
		ForceSingleClient: true})
	require.NoError(s.t, err)
	s.t.Cleanup(c.Close)
	return c
}

// oneConn is a client to the server with one connection, which Redial
// dials again after a restart (see testredis.OneConn).
func (s *faultServer) oneConn() testredis.OneConn {
	s.t.Helper()
	return testredis.NewOneConn(s.t, rueidis.ClientOption{InitAddress: []string{s.addr()}, DisableCache: true,
		ForceSingleClient: true})
}

// admin runs one command on the server over a connection of its own.
func (s *faultServer) admin(args ...string) error {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.addr()}, DisableCache: true,
		ForceSingleClient: true, DisableRetry: true})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return c.Do(ctx, c.B().Arbitrary(args...).Build()).Error()
}

// TestFaultOOM: a Redis out of memory refuses the write: with a store
// every write is ErrPending (and Rebuild restores exactly the store), without
// one a plain error that wrote nothing.
func TestFaultOOM(t *testing.T) {
	srv := faultStartServer(t)
	c := srv.client()
	ctx := context.Background()
	for _, sharded := range []bool{false, true} {
		for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			t.Run(fmt.Sprint("sharded=", sharded, ",ranking=", ranking), func(t *testing.T) {
				store := newMemStore()
				name := fmt.Sprintf("oom%v%v", sharded, ranking)
				opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithRanking(ranking), lb.WithClock(fixed(future)),
					lb.WithWindows(lb.AllTime(), lb.Daily())}
				if sharded {
					opts = append(opts, lb.WithShards(50))
				}
				withStore, err := lb.New(c, name, append(opts, lb.WithStore(store))...)
				require.NoError(t, err)
				plain, err := lb.New(c, name+"plain", opts...)
				require.NoError(t, err)
				_, err = withStore.Rebuild(ctx)
				require.NoError(t, err)
				for _, board := range []*lb.Leaderboard{withStore, plain} {
					require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 10, "b": 60, "c": 30}))
				}
				before := faultRedis(t, plain)
				require.NoError(t, srv.admin("CONFIG", "SET", "maxmemory", "1"))
				defer func() { require.NoError(t, srv.admin("CONFIG", "SET", "maxmemory", "0")) }()

				type op struct {
					name string
					run  func(board *lb.Leaderboard) error
				}
				ops := []op{
					{"submit", func(board *lb.Leaderboard) error { _, err := board.Submit(ctx, "a", 1); return err }},
					{"submit new", func(board *lb.Leaderboard) error { _, err := board.Submit(ctx, "z", 1); return err }},
					{"submit many", func(board *lb.Leaderboard) error {
						return board.SubmitMany(ctx, map[string]float64{"b": 3, "y": 4})
					}},
					{"set", func(board *lb.Leaderboard) error { return board.Set(ctx, "c", 5) }},
					{"batch", func(board *lb.Leaderboard) error {
						bt, err := board.NewBatcher(lb.WithBatchWindow(5 * time.Millisecond))
						require.NoError(t, err)
						defer bt.Close(ctx)
						var wg sync.WaitGroup
						errs := make([]error, 10)
						for i := range errs {
							wg.Add(1)
							go func() {
								defer wg.Done()
								_, errs[i] = bt.Submit(ctx, fmt.Sprintf("q%d", i%3), 1)
							}()
						}
						wg.Wait()
						for _, e := range errs[1:] {
							if (e == nil) != (errs[0] == nil) || (errors.Is(e, lb.ErrPending) != errors.Is(errs[0], lb.ErrPending)) {
								return fmt.Errorf("callers disagree: %v vs %v", errs[0], e)
							}
						}
						return errs[0]
					}},
				}
				for _, o := range ops {
					err := o.run(withStore)
					require.Error(t, err, o.name)
					require.ErrorIs(t, err, lb.ErrPending, "%s with a store: %v", o.name, err)
					err = o.run(plain)
					require.Error(t, err, o.name)
					require.NotErrorIs(t, err, lb.ErrPending, o.name)
					require.Contains(t, err.Error(), "OOM", o.name)
				}
				require.NoError(t, srv.admin("CONFIG", "SET", "maxmemory", "0"))
				require.Equal(t, before, faultRedis(t, plain), "OOM refusals wrote nothing")
				_, err = withStore.Rebuild(ctx)
				require.NoError(t, err)
				for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
					p := w.Period(future)
					q := lb.StandingsQuery{Board: name, Policy: lb.Accumulate, Order: lb.HighestFirst,
						From: p.Start, To: p.End, Window: w.Name(), Period: p.ID}
					require.Equal(t, faultStandings(t, store, q), faultRedis(t, withStore, lb.In(w)), w.Name())
				}
			})
		}
	}
}

// TestFaultChaos runs Accumulate writers against a server whose
// script cache is flushed and whose clients are killed at random moments,
// with random deadlines: every WithID submission retried until it returns
// nil counts exactly once; every answer is nil, or ErrPending with a store;
// Batcher callers (no id) acknowledged are all in Redis; with a store,
// Redis after a Rebuild equals the store.
func TestFaultChaos(t *testing.T) {
	srv := faultStartServer(t)
	for _, withStore := range []bool{false, true} {
		for _, sharded := range []bool{false, true} {
			t.Run(fmt.Sprint("store=", withStore, ",sharded=", sharded), func(t *testing.T) {
				c := srv.client()
				ctx := context.Background()
				store := newMemStore()
				name := fmt.Sprintf("chaos%v%v", withStore, sharded)
				opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithRanking(lb.Competition)}
				if withStore {
					opts = append(opts, lb.WithStore(store))
				}
				if sharded {
					opts = append(opts, lb.WithShards(100, 300))
				}
				board, err := lb.New(c, name, opts...)
				require.NoError(t, err)
				bt, err := board.NewBatcher(lb.WithBatchWindow(2 * time.Millisecond))
				require.NoError(t, err)

				stop := make(chan struct{})
				var chaos sync.WaitGroup
				chaos.Add(1)
				go func() {
					defer chaos.Done()
					r := rand.New(rand.NewSource(1))
					for {
						select {
						case <-stop:
							return
						case <-time.After(time.Duration(r.Intn(4000)) * time.Microsecond):
						}
						if r.Intn(2) == 0 {
							_ = srv.admin("SCRIPT", "FLUSH")
						} else {
							_ = srv.admin("CLIENT", "KILL", "TYPE", "normal")
						}
					}
				}()

				const workers, perWorker = 8, 150
				var mu sync.Mutex
				want := map[string]float64{}    // WithID members: exact totals
				acked := map[string]float64{}   // batcher members: acknowledged
				unknown := map[string]float64{} // batcher members: errored
				var problems []string
				var wg sync.WaitGroup
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewSource(int64(w) + 7))
						for i := range perWorker {
							inc := float64(r.Intn(9) + 1)
							if w%2 == 0 {
								member := fmt.Sprintf("id%d", w)
								id := fmt.Sprintf("w%d-%d", w, i)
								attempt := 0
								for {
									actx, cancel := context.WithTimeout(ctx, time.Duration(r.Intn(3000))*time.Microsecond+200*time.Microsecond)
									if attempt > 3 {
										actx, cancel = context.WithTimeout(ctx, 5*time.Second)
									}
									_, err := board.Submit(actx, member, inc, lb.WithID(id))
									cancel()
									attempt++
									if err == nil {
										break
									}
									// A deadline passed before the write
									// started writes nothing, store or not.
									if withStore && !errors.Is(err, lb.ErrPending) && !errors.Is(err, context.DeadlineExceeded) {
										mu.Lock()
										problems = append(problems, fmt.Sprintf("submit with a store: not ErrPending: %v", err))
										mu.Unlock()
									}
									if !withStore && errors.Is(err, lb.ErrPending) {
										mu.Lock()
										problems = append(problems, fmt.Sprintf("submit without a store: ErrPending: %v", err))
										mu.Unlock()
									}
									if attempt > 200 {
										mu.Lock()
										problems = append(problems, fmt.Sprintf("%s never applied: %v", id, err))
										mu.Unlock()
										return
									}
								}
								mu.Lock()
								want[member] += inc
								mu.Unlock()
								continue
							}
							member := fmt.Sprintf("bt%d", w%3)
							bctx, cancel := context.WithTimeout(ctx, time.Duration(r.Intn(20))*time.Millisecond+time.Millisecond)
							_, err := bt.Submit(bctx, member, inc)
							cancel()
							mu.Lock()
							if err == nil {
								acked[member] += inc
							} else {
								unknown[member] += inc
								if withStore && !errors.Is(err, lb.ErrPending) && !errors.Is(err, context.DeadlineExceeded) {
									problems = append(problems, fmt.Sprintf("batch with a store: %v", err))
								}
							}
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				require.NoError(t, bt.Close(ctx))
				close(stop)
				chaos.Wait()
				require.Empty(t, problems)
				// The checks run through a fresh client, dialled after the
				// chaos's last CLIENT KILL, which the old one's connections
				// may not have seen yet: a write on such a connection fails.
				board, err = lb.New(srv.client(), name, opts...)
				require.NoError(t, err)

				got := map[string]float64{}
				for e, err := range board.All(ctx) {
					require.NoError(t, err)
					got[e.Member] = e.Score
				}
				for m, v := range want {
					require.Equal(t, v, got[m], "WithID member %s: every submission applied exactly once", m)
				}
				for m, v := range acked {
					require.GreaterOrEqual(t, got[m], v, "batcher member %s: acknowledged submissions in Redis", m)
					require.LessOrEqual(t, got[m], v+unknown[m], "batcher member %s: no more than was sent", m)
				}
				t.Logf("acked %v unknown %v got %v", acked, unknown, got)
				if withStore {
					q := faultAllTimeQuery(name, lb.Accumulate)
					st := faultStandings(t, store, q)
					for m, v := range want {
						require.Equal(t, v, st[m], "store: %s", m)
					}
					for m, v := range acked {
						require.GreaterOrEqual(t, st[m], v, "store: acknowledged batcher member %s", m)
					}
					_, err = board.Rebuild(ctx)
					require.NoError(t, err)
					require.Equal(t, st, faultRedis(t, board))
					reps, err := board.Verify(ctx)
					require.NoError(t, err)
					for _, r := range reps {
						require.True(t, r.Clean(), "%+v", r)
					}
				}
			})
		}
	}
}

// TestFaultRandomFaults: every kind of board on every backend, with a
// client that fails 1 call in 10 (half of them after sending it): WithID
// submissions retried until nil count exactly once, in Redis and the
// store, and SubmitMany/Batcher answers keep their promises.
func TestFaultRandomFaults(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, withStore := range []bool{false, true} {
			for _, sharded := range []bool{false, true} {
				t.Run(fmt.Sprint("store=", withStore, ",sharded=", sharded), func(t *testing.T) {
					ctx := context.Background()
					store := newMemStore()
					fc := &faultClient{Client: b.Client}
					name := b.BoardName(t)
					opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily())}
					if withStore {
						opts = append(opts, lb.WithStore(store))
					}
					if sharded {
						opts = append(opts, lb.WithShards(100, 300))
					}
					board, err := lb.New(fc, name, opts...)
					require.NoError(t, err)
					fc.permille.Store(100)
					var mu sync.Mutex
					want := map[string]float64{}
					var problems []string
					var wg sync.WaitGroup
					for w := range 6 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							r := rand.New(rand.NewSource(int64(w)))
							for i := range 40 {
								member := fmt.Sprintf("m%d", r.Intn(8))
								inc := float64(r.Intn(200) + 1)
								id := fmt.Sprintf("w%d-%d", w, i)
								for attempt := 0; ; attempt++ {
									_, err := board.Submit(ctx, member, inc, lb.WithID(id))
									if err == nil {
										break
									}
									if withStore != errors.Is(err, lb.ErrPending) {
										mu.Lock()
										problems = append(problems, fmt.Sprintf("store=%v: %v", withStore, err))
										mu.Unlock()
									}
									if attempt > 100 {
										mu.Lock()
										problems = append(problems, "never applied: "+id)
										mu.Unlock()
										return
									}
								}
								mu.Lock()
								want[member] += inc
								mu.Unlock()
							}
						}()
					}
					wg.Wait()
					fc.permille.Store(0)
					require.Empty(t, problems)
					for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
						require.Equal(t, want, faultRedis(t, board, lb.In(w)), w.Name())
					}
					if sharded {
						reps, err := board.Check(ctx, false)
						require.NoError(t, err)
						for _, r := range reps {
							require.True(t, r.Clean(), "%+v", r)
						}
					}
					if withStore {
						require.Equal(t, want, faultStandings(t, store, faultAllTimeQuery(name, lb.Accumulate)))
						_, err := board.Rebuild(ctx)
						require.NoError(t, err)
						require.Equal(t, want, faultRedis(t, board))
					}
				})
			}
		}
	})
}

// TestFaultShardedRetryAfterSecondStep: on a Cluster a sharded
// board's Submit is two round trips. When the second (the shards) fails,
// Submit returns an error (ErrPending with a store); the retry with the same
// WithID then returns nil, and per the README the submission has then
// reached Redis: reads must show it.
//
// During a move to new bounds (WithShadowShards) the retry, or a Batcher's
// write that changes nothing, also repairs the shadow, which the first
// try's second step left behind as it left the shards: their shadow share
// was only a changed value's puts and deletes, nothing for a write that
// changed nothing, so the member read as before the write once reads
// moved to the new bounds, and Check reported the shadow behind.
func TestFaultShardedRetryAfterSecondStep(t *testing.T) {
	b := testredis.Cluster(t)
	for _, withStore := range []bool{false, true} {
		for _, lost := range []bool{false, true} {
			for by, retry := range faultRetries {
				t.Run(fmt.Sprint("store=", withStore, ",lost=", lost, ",retry=", by), func(t *testing.T) {
					ctx := context.Background()
					fc := &faultClient{Client: b.Client}
					name := b.BoardName(t)
					opts := []lb.Option{lb.WithPolicy(lb.Accumulate)}
					store := newMemStore()
					if withStore {
						opts = append(opts, lb.WithStore(store))
					}
					// p crosses the shadow's bound 12, not the board's.
					board, err := lb.New(fc, name, append(opts, lb.WithShards(100, 300), lb.WithShadowShards(12))...)
					require.NoError(t, err)
					moved, err := lb.New(b.Client, name, append(opts, lb.WithShards(12))...)
					require.NoError(t, err)
					_, err = board.Submit(ctx, "warm", 1) // scripts loaded
					require.NoError(t, err)
					_, err = board.Submit(ctx, "p", 10, lb.WithID("first"))
					require.NoError(t, err)

					fc.lost.Store(lost)
					fc.nth.Store(2) // the second round trip of the next Submit
					_, err = board.Submit(ctx, "p", 5, lb.WithID("x"))
					require.Error(t, err)
					require.Equal(t, withStore, errors.Is(err, lb.ErrPending), "%v", err)
					t.Logf("first try: %v", err)

					res, want, err := retry(ctx, board)
					require.NoError(t, err)
					t.Logf("retry: dup=%v score=%v", res.Duplicate, res.Score)
					st, err := board.Rank(ctx, "p")
					require.NoError(t, err)
					require.Equal(t, want, st.Score, "the retried submission, acknowledged, is in Redis")
					require.Equal(t, want, res.Score, "the retry reports the standing with it")
					st, err = moved.Rank(ctx, "p")
					require.NoError(t, err)
					require.Equal(t, want, st.Score, "the retry brought the shadow up to the partition")
					n, err := moved.Count(ctx)
					require.NoError(t, err)
					require.Equal(t, int64(2), n, "the new layout holds warm and p once each")
					reps, err := board.Check(ctx, false)
					require.NoError(t, err)
					for _, r := range reps {
						require.True(t, r.Clean(), "Check of %s, shadow=%v: %+v", r.Window, r.Shadow, r)
					}
				})
			}
		}
	}
}

// faultRetries are the writes after a failed one that
// TestFaultShardedRetryAfterSecondStep makes, and the total each leaves:
// its Submit again, with its id; a Batcher's write that changes nothing
// (an Accumulate of 0), which checks the shards as the retry does; and a
// Submit and a Batcher's write that change the total, which sweep the
// other shards of copies a write left behind.
var faultRetries = map[string]func(context.Context, *lb.Leaderboard) (lb.Result, float64, error){
	"submit": func(ctx context.Context, board *lb.Leaderboard) (lb.Result, float64, error) {
		res, err := board.Submit(ctx, "p", 5, lb.WithID("x"))
		return res, 15, err
	},
	"batcher": func(ctx context.Context, board *lb.Leaderboard) (lb.Result, float64, error) {
		bt, err := board.NewBatcher()
		if err != nil {
			return lb.Result{}, 0, err
		}
		defer bt.Close(ctx)
		res, err := bt.Submit(ctx, "p", 0)
		return res, 15, err
	},
	"next": func(ctx context.Context, board *lb.Leaderboard) (lb.Result, float64, error) {
		res, err := board.Submit(ctx, "p", 1)
		return res, 16, err
	},
	"next batcher": func(ctx context.Context, board *lb.Leaderboard) (lb.Result, float64, error) {
		bt, err := board.NewBatcher()
		if err != nil {
			return lb.Result{}, 0, err
		}
		defer bt.Close(ctx)
		res, err := bt.Submit(ctx, "p", 1)
		return res, 16, err
	},
}

// TestFaultRestartRebuild: a Redis restart without persistence loses
// the board; writes while it is down are ErrPending; after the restart
// Present reports false, and Rebuild (cancelled at random moments first,
// then whole) gives Redis exactly the store's standings, Verify clean,
// no goroutine left behind. The client's connection is dialled again
// after the restart, before the board's calls (testredis.OneConn).
func TestFaultRestartRebuild(t *testing.T) {
	srv := faultStartServer(t)
	ctx := context.Background()
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprint("sharded=", sharded), func(t *testing.T) {
			c := srv.oneConn()
			store := newMemStore()
			name := fmt.Sprintf("restart%v", sharded)
			opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.KeepBest), lb.WithWindows(lb.AllTime(), lb.Daily())}
			if sharded {
				opts = append(opts, lb.WithShards(1000, 3000))
			}
			board, err := lb.New(c, name, opts...)
			require.NoError(t, err)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			scores := map[string]float64{}
			for i := range 2500 {
				scores[fmt.Sprintf("m%04d", i)] = float64((i * 7919) % 5000)
			}
			require.NoError(t, board.SubmitMany(ctx, scores))

			srv.stop()
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err = board.Submit(dctx, "down", 4000)
			cancel()
			require.ErrorIs(t, err, lb.ErrPending)
			bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
			require.NoError(t, err)
			dctx, cancel = context.WithTimeout(ctx, 2*time.Second)
			_, err = bt.Submit(dctx, "down2", 4500)
			cancel()
			require.Error(t, err)
			require.True(t, errors.Is(err, lb.ErrPending) || errors.Is(err, context.DeadlineExceeded), "%v", err)
			srv.start()
			c.Redial(t)

			present, err := board.Present(ctx)
			require.NoError(t, err)
			require.False(t, present)

			r := rand.New(rand.NewSource(3))
			for range 8 {
				cctx, cancel := context.WithTimeout(ctx, time.Duration(r.Intn(30000))*time.Microsecond)
				_, _ = board.Rebuild(cctx)
				cancel()
			}
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			present, err = board.Present(ctx)
			require.NoError(t, err)
			require.True(t, present)
			require.NoError(t, bt.Close(ctx))
			st := faultStandings(t, store, faultAllTimeQuery(name, lb.KeepBest))
			require.Contains(t, st, "down")
			require.Equal(t, st, faultRedis(t, board))
			reps, err := board.Verify(ctx)
			require.NoError(t, err)
			for _, rep := range reps {
				require.True(t, rep.Clean(), "%+v", rep)
			}
			faultNoLeak(t)
		})
	}
}

// TestFaultRemoveBetweenCancelled: a RemoveBetween cut short by its
// deadline between chunks (with a Remover store) leaves a board that a
// Rebuild makes equal to the store; every error wraps the deadline and
// names the operation.
func TestFaultRemoveBetweenCancelled(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, withStore := range []bool{false, true} {
			t.Run(fmt.Sprint("store=", withStore), func(t *testing.T) {
				store := newMemStore()
				opts := []lb.Option{lb.WithClock(fixed(future))}
				if withStore {
					opts = append(opts, lb.WithStore(store))
				}
				board, name := newBoard(t, b, opts...)
				r := rand.New(rand.NewSource(5))
				for round := range 4 {
					scores := map[string]float64{}
					for i := range 3000 {
						scores[fmt.Sprintf("r%d-%04d", round, i)] = float64(i)
					}
					require.NoError(t, board.SubmitMany(ctx, scores))
					before, err := board.Count(ctx)
					require.NoError(t, err)
					cctx, cancel := context.WithTimeout(ctx, time.Duration(r.Intn(4000)+200)*time.Microsecond)
					n, err := board.RemoveBetween(cctx, 100, 2900)
					cancel()
					after, cerr := board.Count(ctx)
					require.NoError(t, cerr)
					if err != nil {
						require.ErrorIs(t, err, context.DeadlineExceeded)
						require.Contains(t, err.Error(), "remove between")
						require.LessOrEqual(t, n, before-after)
					} else {
						require.Equal(t, before-after, n)
					}
				}
				if withStore {
					_, err := board.Rebuild(ctx)
					require.NoError(t, err)
					require.Equal(t, faultStandings(t, store, faultAllTimeQuery(name, lb.KeepBest)), faultRedis(t, board))
				}
			})
		}
	})
}

// faultNoLeak fails when a goroutine of the library (not the tests, not
// rueidis) is still running.
func faultNoLeak(t *testing.T) {
	t.Helper()
	var stacks string
	require.Eventually(t, func() bool {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "skiprank/leaderboard.") && !strings.Contains(g, "testing.tRunner") {
				return false
			}
		}
		return true
	}, 3*time.Second, 20*time.Millisecond, "library goroutines left:\n%s", stacks)
}

// TestFaultBatcherCloseNoLeak: a Batcher used under faults and
// deadlines, then closed, leaves no goroutine; every caller got one answer.
func TestFaultBatcherCloseNoLeak(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sharded := range []bool{false, true} {
			fc := &faultClient{Client: b.Client}
			opts := []lb.Option{lb.WithStore(newMemStore()), lb.WithPolicy(lb.Accumulate)}
			if sharded {
				opts = append(opts, lb.WithShards(10))
			}
			board, err := lb.New(fc, b.BoardName(t), opts...)
			require.NoError(t, err)
			bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond), lb.WithBatchSize(4))
			require.NoError(t, err)
			fc.permille.Store(200)
			var answered atomic.Int64
			var wg sync.WaitGroup
			for i := range 200 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cctx, cancel := context.WithTimeout(ctx, time.Duration(i%7)*time.Millisecond+100*time.Microsecond)
					defer cancel()
					var opts []lb.SubmitOption
					if i%5 == 0 {
						opts = append(opts, lb.WithID(fmt.Sprint("id", i)))
					}
					_, _ = bt.Submit(cctx, fmt.Sprint("m", i%6), float64(i%3+1), opts...)
					answered.Add(1)
				}()
			}
			wg.Wait()
			require.Equal(t, int64(200), answered.Load())
			require.NoError(t, bt.Close(ctx))
			_, err = bt.Submit(ctx, "late", 1)
			require.ErrorIs(t, err, lb.ErrClosed)
			fc.permille.Store(0)
		}
		faultNoLeak(t)
	})
}

// newGroupFault is an Accumulate board of two shards on the Cluster
// through a faultClient, the hash tag of member "m00"'s partition group
// (for fc.failing) and whether a member shares that group.
func newGroupFault(t *testing.T) (*lb.Leaderboard, *faultClient, string, func(string) bool) {
	b := testredis.Cluster(t)
	fc := &faultClient{Client: b.Client}
	name := b.BoardName(t)
	board, err := lb.New(fc, name, lb.WithPolicy(lb.Accumulate), lb.WithShards(1000))
	require.NoError(t, err)
	group := keys.GroupOf(keys.PartitionOf("m00"))
	tag := strings.TrimSuffix(keys.NewBoard("lb", name).Partitions().GroupClock(group), ":clock")
	return board, fc, tag, func(m string) bool { return keys.GroupOf(keys.PartitionOf(m)) == group }
}

// TestFaultBatchGroupFails: on a sharded board on a Cluster, a batch
// whose call to one partition group fails (a timeout, the network) fails
// that group's callers alone: the other groups' calls applied, so their
// callers get their standings and their shards are written, not an error
// for a write that applied and shards left behind their partitions.
func TestFaultBatchGroupFails(t *testing.T) {
	ctx := context.Background()
	board, fc, tag, inGroup := newGroupFault(t)
	members := make([]string, 24)
	for i := range members {
		members[i] = fmt.Sprintf("m%02d", i)
		_, err := board.Submit(ctx, members[i], 1)
		require.NoError(t, err)
	}
	bt, err := board.NewBatcher(lb.WithBatchWindow(50 * time.Millisecond))
	require.NoError(t, err)
	fc.failing.Store(&tag)
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { _, errs[i] = bt.Submit(ctx, m, 1) })
	}
	wg.Wait()
	fc.failing.Store(nil)
	require.NoError(t, bt.Close(ctx))
	for i, m := range members {
		want := 2.0
		if inGroup(m) {
			require.ErrorIs(t, errs[i], errFault, m)
			want = 1
		} else {
			require.NoError(t, errs[i], m)
		}
		st, err := board.Rank(ctx, m)
		require.NoError(t, err)
		require.Equal(t, want, st.Score, "%s: the shard read by Rank", m)
	}
	reps, err := board.Check(ctx, false)
	require.NoError(t, err)
	for _, r := range reps {
		require.Empty(t, slices.Concat(r.Misplaced, r.Duplicated, r.Missing, r.Stray, r.Stale), "shards behind their partitions: %+v", r)
	}
}

// TestFaultManyGroupFails: on a sharded board on a Cluster, a SubmitMany,
// a Remove or a RemoveBetween whose call to one partition group fails
// returns the error, but the other groups' calls applied: their shards
// follow their partitions (they trailed them until a Check with repair).
func TestFaultManyGroupFails(t *testing.T) {
	ctx := context.Background()
	board, fc, tag, inGroup := newGroupFault(t)
	scores := map[string]float64{}
	for i := range 24 {
		scores[fmt.Sprintf("m%02d", i)] = 1
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	check := func(what string, want func(m string) float64) {
		t.Helper()
		for m := range scores {
			st, err := board.Rank(ctx, m)
			if w := want(m); w == 0 {
				require.ErrorIs(t, err, lb.ErrNotRanked, "%s: %s", what, m)
			} else {
				require.NoError(t, err, "%s: %s", what, m)
				require.Equal(t, w, st.Score, "%s: %s, the shard read by Rank", what, m)
			}
		}
		reps, err := board.Check(ctx, false)
		require.NoError(t, err)
		for _, r := range reps {
			require.Empty(t, slices.Concat(r.Misplaced, r.Duplicated, r.Missing, r.Stray, r.Stale), "%s: shards behind their partitions: %+v", what, r)
		}
	}

	fc.failing.Store(&tag)
	require.ErrorIs(t, board.SubmitMany(ctx, scores), errFault)
	fc.failing.Store(nil)
	check("submit many", func(m string) float64 {
		if inGroup(m) {
			return 1
		}
		return 2
	})

	members := slices.Sorted(maps.Keys(scores))
	fc.failing.Store(&tag)
	require.ErrorIs(t, board.Remove(ctx, members...), errFault)
	fc.failing.Store(nil)
	check("remove", func(m string) float64 {
		if inGroup(m) {
			return 1
		}
		return 0
	})

	require.NoError(t, board.SubmitMany(ctx, scores))
	fc.failing.Store(&tag)
	_, err := board.RemoveBetween(ctx, 0, 10)
	require.ErrorIs(t, err, errFault)
	fc.failing.Store(nil)
	check("remove between", func(m string) float64 {
		if inGroup(m) {
			return 2
		}
		return 0
	})
}

// TestFaultShardedRemoveBetweenTornCopies: on a Cluster, copies that
// writes which died between their steps left in a shard, in the range of
// a RemoveBetween, while the members' partitions hold values out of it
// (more of them than a chunk reads), neither keep RemoveBetween reading
// them chunk after chunk nor stay: it removes none of those members, as
// their scores lie outside the range, and leaves each once, at its score.
func TestFaultShardedRemoveBetweenTornCopies(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	fc := &faultClient{Client: b.Client}
	name := b.BoardName(t)
	opts := []lb.Option{lb.WithPolicy(lb.Replace), lb.WithShards(100)}
	torn, err := lb.New(fc, name, opts...)
	require.NoError(t, err)
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	const n = 130 // more than a chunk of the removal (100)
	scores := map[string]float64{}
	for i := range n {
		scores[fmt.Sprintf("m%03d", i)] = 50
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	for m := range scores {
		fc.nth.Store(2) // the shards' step of a Cluster Submit
		_, err := torn.Submit(ctx, m, 500)
		require.ErrorIs(t, err, errFault)
	}
	deadline, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	removed, err := board.RemoveBetween(deadline, 0, 99)
	require.NoError(t, err, "RemoveBetween read the torn copies chunk after chunk")
	require.Zero(t, removed)
	es, err := board.Between(ctx, 0, 99, lb.MaxN)
	require.NoError(t, err)
	require.Empty(t, es, "copies left in the range")
	total, err := board.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(n), total)
	for m := range scores {
		st, err := board.Rank(ctx, m)
		require.NoError(t, err)
		require.Equal(t, 500.0, st.Score, m)
	}
	reps, err := board.Check(ctx, false)
	require.NoError(t, err)
	for _, r := range reps {
		require.True(t, r.Clean(), "%+v", r)
	}
}

// TestFaultShardedUnchangedSweepsStrayCopy: a write whose second step
// put a member into its new shard but failed to delete it from its old
// one leaves a copy behind (the member counted twice); a later write of
// the member that changes nothing, a Submit or a Batcher's, sweeps that
// copy out, as one that changes the member does: in the board's shards,
// and in a shadow layout's while bounds move (WithShadowShards).
func TestFaultShardedUnchangedSweepsStrayCopy(t *testing.T) {
	b := testredis.Cluster(t)
	for _, shadow := range []bool{false, true} {
		for _, via := range []string{"submit", "batcher"} {
			t.Run(fmt.Sprint(via, ",shadow=", shadow), func(t *testing.T) {
				ctx := context.Background()
				fc := &faultClient{Client: b.Client}
				name := b.BoardName(t)
				opts := []lb.Option{lb.WithPolicy(lb.KeepBest), lb.WithShards(100)}
				layout, old := []lb.Option{lb.WithShards(100)}, shardKey(name, []float64{100}, 0, "alltime", "alltime")
				if shadow {
					opts = append(opts, lb.WithShadowShards(12))
					layout, old = []lb.Option{lb.WithShards(12)}, shardKey(name, []float64{12}, 0, "alltime", "alltime")
				}
				torn, err := lb.New(fc, name, opts...)
				require.NoError(t, err)
				board, err := lb.New(b.Client, name, opts...)
				require.NoError(t, err)
				seen, err := lb.New(b.Client, name, append([]lb.Option{lb.WithPolicy(lb.KeepBest)}, layout...)...)
				require.NoError(t, err)
				_, err = board.Submit(ctx, "p", 10)
				require.NoError(t, err)
				fc.failing.Store(&old) // the delete from p's old shard fails
				_, err = torn.Submit(ctx, "p", 500)
				require.ErrorIs(t, err, errFault)
				fc.failing.Store(nil)
				n, err := seen.Count(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(2), n, "the torn write left p in two shards")

				if via == "submit" {
					_, err = board.Submit(ctx, "p", 7) // changes nothing
				} else {
					bt, berr := board.NewBatcher()
					require.NoError(t, berr)
					_, err = bt.Submit(ctx, "p", 7)
					require.NoError(t, bt.Close(ctx))
				}
				require.NoError(t, err)
				n, err = seen.Count(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(1), n, "the copy left behind is swept")
				es, err := seen.Top(ctx, 10)
				require.NoError(t, err)
				require.Len(t, es, 1)
				require.Equal(t, 500.0, es[0].Score)
				reps, err := board.Check(ctx, false)
				require.NoError(t, err)
				for _, r := range reps {
					require.True(t, r.Clean(), "%+v", r)
				}
			})
		}
	}
}
