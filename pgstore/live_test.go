package pgstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// verifyDirty returns the reports that are not clean.
func verifyDirty(t *testing.T, board *leaderboard.Leaderboard) []leaderboard.VerifyReport {
	t.Helper()
	reports, err := board.Verify(context.Background())
	require.NoError(t, err)
	var out []leaderboard.VerifyReport
	for _, r := range reports {
		if !r.Clean() {
			out = append(out, r)
		}
	}
	return out
}

type liveModel struct {
	mu     sync.Mutex
	policy leaderboard.Policy
	tenths bool // totals kept exactly to one decimal (a tie-break of Decimals 1)
	v      map[string]map[string]float64
}

func (m *liveModel) apply(window, member string, score float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.v[window] == nil {
		m.v[window] = map[string]float64{}
	}
	old, ok := m.v[window][member]
	switch {
	case !ok:
		m.v[window][member] = score
	case m.policy == leaderboard.Accumulate:
		m.v[window][member] = old + score
		if m.tenths {
			m.v[window][member] = math.Round((old+score)*10) / 10
		}
	case m.policy == leaderboard.Replace:
		m.v[window][member] = score
	case score > old:
		m.v[window][member] = score
	}
}

type shiftWindow struct{}

func (shiftWindow) Name() string { return "shift" }
func (shiftWindow) Period(t time.Time) leaderboard.Period {
	start := t.UTC().Truncate(6 * time.Hour)
	return leaderboard.Period{ID: start.Format("2006-01-02T15"), Start: start, End: start.Add(6 * time.Hour)}
}

// liveOpts is a board's options with store s, more, and shards at those
// bounds when there are any (nil: unsharded).
func liveOpts(s leaderboard.Store, shards []float64, more ...leaderboard.Option) []leaderboard.Option {
	opts := append([]leaderboard.Option{leaderboard.WithStore(s)}, more...)
	if shards != nil {
		opts = append(opts, leaderboard.WithShards(shards...))
	}
	return opts
}

// TestLiveRetentionRebuild: windows with WithRetention(72h) (daily,
// weekly, monthly, a custom 6-hour window, all-time) while the board's clock
// moves across a month's end for six days, with late submissions WithTime
// into closed periods. Every period Periods lists holds exactly what was
// acknowledged there; after a wipe, a Rebuild gives back every one of them
// with the same expiry (its end plus the retention).
func TestLiveRetentionRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		type rcombo struct {
			policy    leaderboard.Policy
			retention time.Duration // 0: the default, one period
			shards    []float64
		}
		for _, c := range []rcombo{{leaderboard.Accumulate, 72 * time.Hour, nil}, {leaderboard.KeepBest, 72 * time.Hour, nil},
			{leaderboard.Accumulate, 0, nil}, {leaderboard.Replace, 72 * time.Hour, []float64{2, 5}}, {leaderboard.Accumulate, 0, []float64{2, 5}}} {
			policy := c.policy
			t.Run(fmt.Sprintf("%v/ret%v/shards%d", policy, c.retention.Hours(), len(c.shards)), func(t *testing.T) {
				ctx := context.Background()
				s := newStore(t)
				name := b.BoardName(t)
				// Two days before a month's end, two months ahead.
				y, mo, _ := time.Now().UTC().AddDate(0, 2, 0).Date()
				start := time.Date(y, mo+1, 1, 0, 0, 0, 0, time.UTC).Add(-50 * time.Hour)
				clock := &smClock{now: start}
				windows := []leaderboard.Window{leaderboard.Daily(), leaderboard.Weekly(), leaderboard.Monthly(), shiftWindow{}, leaderboard.AllTime()}
				opts := liveOpts(s, c.shards, leaderboard.WithPolicy(policy),
					leaderboard.WithWindows(windows...), leaderboard.WithClock(clock.Now))
				if c.retention != 0 {
					opts = append(opts, leaderboard.WithRetention(c.retention))
				}
				keep := func(p leaderboard.Period) time.Duration {
					if c.retention != 0 {
						return c.retention
					}
					return p.End.Sub(p.Start)
				}
				board, err := leaderboard.New(b.Client, name, opts...)
				require.NoError(t, err)
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				model := map[string]*liveModel{} // window/period
				ends := map[string]time.Time{}
				rng := rand.New(rand.NewPCG(1, 2))
				for step := 0; step < 22; step++ {
					clock.Set(start.Add(time.Duration(step) * 7 * time.Hour))
					for i := 0; i < 6; i++ {
						mem := fmt.Sprintf("m%d", rng.IntN(8))
						score := float64(rng.IntN(100)) / 10
						var opts []leaderboard.SubmitOption
						at := clock.Now()
						if rng.IntN(3) == 0 {
							at = at.Add(-time.Duration(rng.IntN(100)) * time.Hour)
							opts = append(opts, leaderboard.WithTime(at))
						}
						res, err := board.Submit(ctx, mem, score, opts...)
						require.NoError(t, err)
						for j, wr := range res.Windows {
							if wr.Closed {
								continue
							}
							k := wr.Window + "/" + wr.Period
							if model[k] == nil {
								model[k] = &liveModel{policy: policy, v: map[string]map[string]float64{}}
							}
							model[k].apply("x", mem, score)
							ends[k] = windows[j].Period(at).End.Add(keep(windows[j].Period(at)))
						}
					}
				}
				now := clock.Now()
				check := func(when string) {
					for _, w := range windows {
						ps, err := board.Periods(ctx, leaderboard.In(w))
						require.NoError(t, err)
						listed := map[string]bool{}
						for _, p := range ps {
							k := w.Name() + "/" + p.ID
							listed[k] = true
							q := []leaderboard.Query{leaderboard.In(w)}
							if !p.Start.IsZero() {
								q = append(q, leaderboard.At(p.Start))
							}
							got := map[string]float64{}
							for e, err := range board.All(ctx, q...) {
								require.NoError(t, err)
								got[e.Member] = e.Score
							}
							var want map[string]float64
							if model[k] != nil {
								want = model[k].v["x"]
							}
							if want == nil {
								want = map[string]float64{}
							}
							if policy == leaderboard.Accumulate {
								for m, v := range want {
									if g, ok := got[m]; ok && math.Abs(g-v) < 1e-9 {
										got[m] = v
									}
								}
							}
							require.Equal(t, want, got, "%s: period %s", when, k)
							if !p.End.IsZero() && len(want) > 0 && c.shards == nil {
								key := "lb:{" + name + "}:" + w.Name() + ":" + p.ID
								exp, err := b.Client.Do(ctx, b.Client.B().Pexpiretime().Key(key).Build()).AsInt64()
								require.NoError(t, err)
								require.Equal(t, p.End.Add(keep(p.Period)).UnixMilli(), exp, "%s: expiry of %s", when, key)
							}
						}
						for k, end := range ends {
							if k[:len(w.Name())+1] == w.Name()+"/" && !listed[k] {
								require.False(t, end.After(now), "%s: live period %s not listed", when, k)
							}
						}
					}
				}
				check("before the wipe")
				requireVerify(t, board, true)
				b.Wipe(t, name)
				ok, err := board.Present(ctx)
				require.NoError(t, err)
				require.False(t, ok)
				rep, err := board.Rebuild(ctx)
				require.NoError(t, err)
				require.Empty(t, rep.Refused)
				check("after the rebuild")
				requireVerify(t, board, true)
			})
		}
	})
}

// TestLiveSealConcurrent: six processes (boards on one store and
// Redis) call Seal at once right at a day's end: the hook runs exactly
// once for each closed period, and what is sealed is what Redis holds.
func TestLiveSealConcurrent(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		day := smDay1.Truncate(24 * time.Hour)
		clock := &smClock{now: day.Add(23 * time.Hour)}
		mk := func() *leaderboard.Leaderboard {
			board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s),
				leaderboard.WithWindows(leaderboard.Daily(), leaderboard.Named("shift", shiftWindow{}), leaderboard.AllTime()),
				leaderboard.WithRetention(72*time.Hour), leaderboard.WithClock(clock.Now), leaderboard.WithRanking(leaderboard.Competition))
			require.NoError(t, err)
			return board
		}
		board := mk()
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		for i := 0; i < 30; i++ {
			_, err := board.Submit(ctx, fmt.Sprintf("m%02d", i), float64(i%7))
			require.NoError(t, err)
		}
		clock.Set(day.Add(24*time.Hour + time.Second)) // exactly when sealing starts: the day's end plus the clock skew
		var mu sync.Mutex
		hooks := map[string]int{}
		var wg sync.WaitGroup
		for p := 0; p < 6; p++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := mk().Seal(ctx, func(_ context.Context, sp leaderboard.SealedPeriod) error {
					mu.Lock()
					hooks[sp.Window+"/"+sp.Period]++
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Errorf("seal: %v", err)
				}
			}()
		}
		wg.Wait()
		t.Logf("hooks: %v", hooks)
		require.Equal(t, map[string]int{"daily/" + day.Format("2006-01-02"): 1, "shift/" + day.Add(18*time.Hour).Format("2006-01-02T15"): 1}, hooks)
		sealed, ok, err := board.Sealed(ctx, leaderboard.At(day))
		require.NoError(t, err)
		require.True(t, ok)
		var all []leaderboard.Entry
		for e, err := range board.All(ctx, leaderboard.At(day)) {
			require.NoError(t, err)
			all = append(all, e)
		}
		require.Equal(t, all, sealed)
	})
}

type pageHookClient struct {
	rueidis.Client
	mu   sync.Mutex
	hook func()
}

func (c *pageHookClient) take(cmds []rueidis.Completed) func() {
	ranged := false
	for _, cmd := range cmds {
		if cs := cmd.Commands(); len(cs) > 0 && cs[0] == "ZRANGE" {
			ranged = true
		}
	}
	if !ranged {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.hook
	c.hook = nil
	return f
}

func (c *pageHookClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	f := c.take([]rueidis.Completed{cmd})
	r := c.Client.Do(ctx, cmd)
	if f != nil {
		f()
	}
	return r
}

func (c *pageHookClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	f := c.take(cmds)
	r := c.Client.DoMulti(ctx, cmds...)
	if f != nil {
		f()
	}
	return r
}

// TestLiveSealPagesTorn: on an unsharded board of 1,500 members one late
// replay (WithTime into the closed day, which Submit accepts while the day
// is retained) lands between Seal's first page and its second. It pushes
// everyone down a place, so the member at position 1,000 was sealed twice
// (at 1,000 and 1,001) with two ranks, the replayed member not at all:
// Seal now finds the pages torn and reads the period again.
func TestLiveSealPagesTorn(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		day := smDay1.Truncate(24 * time.Hour)
		clock := &smClock{now: day.Add(12 * time.Hour)}
		hc := &pageHookClient{Client: b.Client.Client}
		opts := []leaderboard.Option{leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Replace),
			leaderboard.WithWindows(leaderboard.Daily()), leaderboard.WithClock(clock.Now)}
		board, err := leaderboard.New(hc, name, opts...)
		require.NoError(t, err)
		other, err := leaderboard.New(b.Client, name, opts...) // another server
		require.NoError(t, err)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		const n = 1500
		batch := map[string]float64{}
		for i := 0; i < n; i++ {
			batch[fmt.Sprintf("m%04d", i)] = float64(i)
		}
		require.NoError(t, board.SubmitMany(ctx, batch))
		clock.Set(day.Add(24*time.Hour + time.Minute))
		hc.mu.Lock()
		hc.hook = func() {
			_, err := other.Submit(ctx, "m0000", 1e6, leaderboard.WithTime(day.Add(23*time.Hour)))
			require.NoError(t, err)
		}
		hc.mu.Unlock()
		sealed, err := board.Seal(ctx, nil)
		require.NoError(t, err)
		require.Len(t, sealed, 1)
		es := sealed[0].Entries
		seen := map[string]bool{}
		for _, e := range es {
			require.False(t, seen[e.Member], "member %s sealed twice (%d entries for %d members): %v", e.Member, len(es), n, es[998:1002])
			seen[e.Member] = true
		}
		require.Len(t, es, n)
	})
}

// TestLivePresentEachMarker: on a rebuilt sharded board (and an
// unsharded one) Present reports false when any single one of its markers
// is gone (a node that lost its part), true when it is back; and false
// after Delete.
func TestLivePresentEachMarker(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {10, 100, 1000}} {
			t.Run(fmt.Sprintf("shards%d", len(shards)), func(t *testing.T) {
				ctx := context.Background()
				s := newStore(t)
				name := b.BoardName(t)
				opts := liveOpts(s, shards, leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()))
				board, err := leaderboard.New(b.Client, name, opts...)
				require.NoError(t, err)
				for i := 0; i < 50; i++ {
					_, err := board.Submit(ctx, fmt.Sprintf("m%d", i), float64(i*37%2000))
					require.NoError(t, err)
				}
				ok, err := board.Present(ctx)
				require.NoError(t, err)
				require.False(t, ok, "never rebuilt")
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				ok, err = board.Present(ctx)
				require.NoError(t, err)
				require.True(t, ok)
				var markers []string
				for _, k := range append(b.Keys(t, "*{"+name+"}*"), b.Keys(t, "*{"+name+"#*")...) {
					if len(k) > 7 && k[len(k)-7:] == ":marker" {
						markers = append(markers, k)
					}
				}
				want := 1
				if shards != nil {
					want = 1 + len(shards) + 1 + 128
				}
				require.Len(t, markers, want)
				c := b.Client.Client
				for _, k := range markers {
					v, err := c.Do(ctx, c.B().Get().Key(k).Build()).ToString()
					require.NoError(t, err)
					require.NoError(t, c.Do(ctx, c.B().Del().Key(k).Build()).Error())
					ok, err := board.Present(ctx)
					require.NoError(t, err)
					require.False(t, ok, "Present with %s gone", k)
					require.NoError(t, c.Do(ctx, c.B().Set().Key(k).Value(v).Build()).Error())
				}
				ok, err = board.Present(ctx)
				require.NoError(t, err)
				require.True(t, ok)
				require.NoError(t, board.Reset(ctx, leaderboard.In(leaderboard.Daily())))
				ok, err = board.Present(ctx)
				require.NoError(t, err)
				require.True(t, ok, "a Reset loses nothing")
				require.NoError(t, board.Delete(ctx))
				ok, err = board.Present(ctx)
				require.NoError(t, err)
				require.False(t, ok, "after Delete")
			})
		}
	})
}

// TestLiveVerifyWhileWriting: Verify while writers Submit. Its store
// half (pgstore's CheckStandings, "in one snapshot") must never report
// drift that is not there; its Redis half is logged (no doc promises it
// clean under writes). Once writes stop, Verify is clean.
func TestLiveVerifyWhileWriting(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s), leaderboard.WithPolicy(leaderboard.Accumulate),
			leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()))
		require.NoError(t, err)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 6; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(g), 3))
				for {
					select {
					case <-stop:
						return
					default:
					}
					// Each member from one goroutine: concurrent submissions of one
					// member may add fractions in another order than the store.
					if _, err := board.Submit(ctx, fmt.Sprintf("m%d_%d", g, rng.IntN(40)), float64(rng.IntN(50))/10); err != nil {
						t.Errorf("submit: %v", err)
						return
					}
				}
			}(g)
		}
		redisDirty := 0
		for i := 0; i < 15; i++ {
			reps, err := board.Verify(ctx)
			require.NoError(t, err)
			for _, r := range reps {
				require.Zero(t, r.Store.DifferCount, "the store's check of itself under writes: %+v", r.Store)
				if !r.Clean() {
					redisDirty++
				}
			}
		}
		close(stop)
		wg.Wait()
		t.Logf("Verify under writes: %d of 30 reports not clean (Redis against the store)", redisDirty)
		requireVerify(t, board, true)
	})
}

// TestLiveSealCompetitionTies: Seal pages a closed period of 1,503
// members under Competition ranks with ties straddling position 1,000, on
// sharded and unsharded boards: the sealed standings equal All's.
func TestLiveSealCompetitionTies(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {20, 60, 120}} {
			t.Run(fmt.Sprintf("shards%d", len(shards)), func(t *testing.T) {
				ctx := context.Background()
				s := newStore(t)
				name := b.BoardName(t)
				day := smDay1.Truncate(24 * time.Hour)
				clock := &smClock{now: day.Add(12 * time.Hour)}
				opts := liveOpts(s, shards, leaderboard.WithRanking(leaderboard.Competition),
					leaderboard.WithWindows(leaderboard.Daily()), leaderboard.WithClock(clock.Now))
				board, err := leaderboard.New(b.Client, name, opts...)
				require.NoError(t, err)
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				batch := map[string]float64{}
				for i := 0; i < 1503; i++ {
					batch[fmt.Sprintf("m%04d", i)] = float64(i / 7)
				}
				require.NoError(t, board.SubmitMany(ctx, batch))
				clock.Set(day.Add(25 * time.Hour))
				var all []leaderboard.Entry
				for e, err := range board.All(ctx, leaderboard.At(day)) {
					require.NoError(t, err)
					all = append(all, e)
				}
				sealed, err := board.Seal(ctx, nil)
				require.NoError(t, err)
				require.Len(t, sealed, 1)
				require.Equal(t, all, sealed[0].Entries)
				got, ok, err := board.Sealed(ctx, leaderboard.At(day))
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, all, got)
			})
		}
	})
}

// afterRemoveStore runs a hook after the store recorded a removal, before
// Remove goes on to Redis.
type afterRemoveStore struct {
	*Store
	after func()
}

func (h *afterRemoveStore) Remove(ctx context.Context, r leaderboard.Removal) error {
	err := h.Store.Remove(ctx, r)
	if f := h.after; f != nil && err == nil {
		h.after = nil
		f()
	}
	return err
}

// TestLiveSubmitInsideRemove: the documented order (a Submit that
// reaches the store after the removal and Redis before it): Verify names
// the member, and a Rebuild brings it back.
func TestLiveSubmitInsideRemove(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {10, 100}} {
			t.Run(fmt.Sprintf("shards%d", len(shards)), func(t *testing.T) {
				ctx := context.Background()
				s := &afterRemoveStore{Store: newStore(t)}
				name := b.BoardName(t)
				opts := liveOpts(s, shards)
				board, err := leaderboard.New(b.Client, name, opts...)
				require.NoError(t, err)
				_, err = board.Submit(ctx, "cheat", 50)
				require.NoError(t, err)
				s.after = func() {
					_, err := board.Submit(ctx, "cheat", 70)
					require.NoError(t, err)
				}
				require.NoError(t, board.Remove(ctx, "cheat"))
				dirty := verifyDirty(t, board)
				require.Len(t, dirty, 1)
				require.Equal(t, []string{"cheat"}, dirty[0].Missing)
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				st, err := board.Rank(ctx, "cheat")
				require.NoError(t, err)
				require.Equal(t, 70.0, st.Score)
				requireVerify(t, board, true)
			})
		}
	})
}

// TestLiveConcurrentRebuilds: after a wipe, three servers of one
// service each see Present report false and call Rebuild, as Present's
// doc tells a service to ("calls Rebuild when it reports false"), at
// once. No writes run. Afterwards Redis must hold the whole board.
func TestLiveConcurrentRebuilds(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {1000, 3000}} {
			t.Run(fmt.Sprintf("shards%d", len(shards)), func(t *testing.T) {
				ctx := context.Background()
				s := newStore(t)
				name := b.BoardName(t)
				opts := liveOpts(s, shards, leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()))
				board, err := leaderboard.New(b.Client, name, opts...)
				require.NoError(t, err)
				const n = 6000
				for c := 0; c < n/1000; c++ {
					batch := map[string]float64{}
					for i := c * 1000; i < (c+1)*1000; i++ {
						batch[fmt.Sprintf("m%05d", i)] = float64(i)
					}
					require.NoError(t, board.SubmitMany(ctx, batch))
				}
				b.Wipe(t, name)
				var wg sync.WaitGroup
				for p := 0; p < 3; p++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						srv, err := leaderboard.New(b.Client, name, opts...)
						if err != nil {
							t.Error(err)
							return
						}
						if ok, err := srv.Present(ctx); err != nil || ok {
							t.Errorf("present %v %v", ok, err)
							return
						}
						if _, err := srv.Rebuild(ctx); err != nil {
							t.Errorf("rebuild: %v", err)
						}
					}()
				}
				wg.Wait()
				ok, err := board.Present(ctx)
				require.NoError(t, err)
				counts := map[string]int64{}
				for _, w := range []leaderboard.Window{leaderboard.AllTime(), leaderboard.Daily()} {
					counts[w.Name()], err = board.Count(ctx, leaderboard.In(w))
					require.NoError(t, err)
				}
				t.Logf("after three concurrent Rebuilds: Present %v, counts %v (want %d each)", ok, counts, n)
				for _, w := range []leaderboard.Window{leaderboard.AllTime(), leaderboard.Daily()} {
					cnt, err := board.Count(ctx, leaderboard.In(w))
					require.NoError(t, err)
					require.Equal(t, int64(n), cnt, "members in %s after concurrent Rebuilds", w.Name())
				}
				requireVerify(t, board, true)
			})
		}
	})
}
