package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisnode"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// BenchmarkRebuild measures issue 5's rebuild figures in one run: it loads
// LB_BENCH_MEMBERS members (default 1,000,000) into a fresh store with
// AppendBatch (COPY, one submission per member, random whole scores, with
// the all-time period listed, so the store keeps its standings as a
// board's SubmitMany would make it), then measures, each as members/s:
//
//	standings               Store.Standings alone, no Redis: what Rebuild
//	                        reads, the kept standings of the period, best
//	                        first from an index-only scan
//	standings-aggregate     the same query without the period's name: the
//	                        aggregation over the submissions (KeepBest
//	                        aggregated, ORDER BY score), the way Rebuild read
//	                        before the standings were kept
//	standings-member-order  that aggregation without the final sort
//	table-scan              the plain rows: no aggregation, no sort
//	rebuild                 board.Rebuild of an all-time board into a real
//	                        Redis (REDIS_URL), its keys deleted before each run
//	rebuild-present         the same over the board as rebuilt before (the
//	                        swap unlinks the old sorted set); both report
//	                        max-stall-ms, the longest a PING from another
//	                        connection waited meanwhile
//	rebuild-aggregate       rebuild with the period's kept standings marked
//	                        incomplete, so Standings aggregates (the
//	                        fallback); they are marked complete again after
//	ceiling                 the ceiling: the same members, read into memory
//	                        beforehand (not timed), written with plain ZADDs
//	                        of 1,000 members, 16 per DoMulti, one DoMulti
//	                        after the other, best first (the order Rebuild
//	                        writes in)
//	ceiling-2-in-flight     best first, two DoMultis on their way at once
//
// Beside members/s it reports the CPU seconds per op of this process
// (client-cpu-s), of the Redis server (INFO cpu; redis-cpu-s) and of the
// rest of the machine (host-other-cpu-s: PostgreSQL, when nothing else
// runs), read from /proc where there is one, and for the reads how long
// the first row took (first-row-s). With LB_BENCH_CPUPROFILE=dir it writes
// one CPU profile of this process per sub-benchmark there, covering the
// timed part only (not the load).
//
//	go test -run '^$' -bench Rebuild -benchtime 3x -timeout 30m .
//	LB_BENCH_MEMBERS=10000000 go test -run '^$' -bench Rebuild -benchtime 1x -timeout 60m .
//
// -bench 'Rebuild/^(standings|rebuild|ceiling)$' picks sub-benchmarks.
//
// It needs PostgreSQL and a real Redis (skips without them), works on
// tables and a board of its own, and drops them after. It is a benchmark
// only: the test command does not run it.
func BenchmarkRebuild(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("LB_BENCH_MEMBERS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err, "LB_BENCH_MEMBERS")
	}
	ctx := context.Background()
	testPool(b) // skips without PostgreSQL

	// A pool of its own with one connection, so one backend serves every
	// query.
	cfg, err := pgxpool.ParseConfig(poolDSN)
	require.NoError(b, err)
	cfg.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(b, err)
	b.Cleanup(pool.Close)
	s, err := New(pool, WithTablePrefix(randomPrefix()))
	require.NoError(b, err)
	require.NoError(b, s.Migrate(ctx))
	b.Cleanup(func() { dropTables(b, s) })

	testredis.Real(b) // skips without a real Redis
	// A client of its own whose timeout outlasts deleting a board of
	// millions of members: DEL frees them before it answers.
	opt, err := redisurl.Parse(testredis.URL())
	require.NoError(b, err)
	opt.DisableCache = true
	opt.ConnWriteTimeout = 5 * time.Minute
	client, err := rueidis.NewClient(opt)
	require.NoError(b, err)
	b.Cleanup(client.Close)
	name := fmt.Sprintf("bench-rebuild-%08x", rand.Uint32())
	wipe := func() { deleteBoardKeys(b, client, name) }
	b.Cleanup(wipe)

	loadMembers(b, s, name, n)

	board, err := leaderboard.New(client, name, leaderboard.WithStore(s)) // KeepBest, all-time
	require.NoError(b, err)
	q := leaderboard.StandingsQuery{Board: name, Policy: leaderboard.KeepBest, Order: leaderboard.HighestFirst,
		Window: "alltime", Period: "alltime"}
	aggregate := q
	aggregate.Window, aggregate.Period = "", ""
	from, args, err := s.standingsFrom(q)
	require.NoError(b, err)
	memberOrder := "SELECT DISTINCT ON (member) member, score, at " + from + " ORDER BY member, score DESC, at"
	tableScan := "SELECT member, score, at " + from
	nothing := func() {}
	kept := func() bool {
		var complete bool
		require.NoError(b, pool.QueryRow(ctx, `SELECT complete FROM `+s.tKeptPeriods+` WHERE board = $1 AND "window" = 'alltime'`, name).Scan(&complete))
		return complete
	}
	require.True(b, kept(), "the load keeps the all-time standings")

	// The reads report too how long PostgreSQL took to send the first row:
	// a sort holds every row back until it is done.
	read := func(b *testing.B, q *leaderboard.StandingsQuery, query string) {
		var first time.Duration
		measure(b, client, int64(n), nothing, func() int64 {
			start, got := time.Now(), int64(0)
			fn := func(leaderboard.StoredStanding) error {
				if got == 0 {
					first += time.Since(start)
				}
				got++
				return nil
			}
			if q != nil {
				require.NoError(b, s.Standings(ctx, *q, fn))
			} else {
				_, err := s.stream(ctx, s.pool, query, args, fn)
				require.NoError(b, err)
			}
			return got
		})
		b.ReportMetric(first.Seconds()/float64(b.N), "first-row-s/op")
	}
	b.Run("standings", func(b *testing.B) { read(b, &q, "") })
	b.Run("standings-aggregate", func(b *testing.B) { read(b, &aggregate, "") })
	b.Run("standings-member-order", func(b *testing.B) { read(b, nil, memberOrder) })
	b.Run("table-scan", func(b *testing.B) { read(b, nil, tableScan) })
	// Rebuild, and the longest a PING from another connection waited
	// meanwhile: how long Redis was blocked at worst.
	rebuild := func(b *testing.B, setup func()) {
		var stall time.Duration
		measure(b, client, int64(n), setup, func() int64 {
			stop := pinger(b, &stall)
			defer stop()
			rep, err := board.Rebuild(ctx)
			require.NoError(b, err)
			return rep.Members
		})
		b.ReportMetric(float64(stall.Milliseconds()), "max-stall-ms")
		key := "lb:{" + name + "}:alltime"
		card, err := client.Do(ctx, client.B().Zcard().Key(key).Build()).AsInt64()
		require.NoError(b, err)
		require.Equal(b, int64(n), card)
	}
	// Into empty keys, as after a loss.
	b.Run("rebuild", func(b *testing.B) { rebuild(b, wipe) })
	// Over the board as rebuilt before (after Verify found a difference):
	// the swap unlinks the old sorted set.
	b.Run("rebuild-present", func(b *testing.B) {
		rebuild(b, func() {
			if ok, err := board.Present(ctx); err != nil || !ok {
				_, err := board.Rebuild(ctx)
				require.NoError(b, err)
			}
		})
	})
	// The fallback: the period's kept standings not trusted. Nothing is
	// appended meanwhile, so they are as complete after as before.
	b.Run("rebuild-aggregate", func(b *testing.B) {
		setComplete := func(v bool) {
			_, err := pool.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = $2 WHERE board = $1`, name, v)
			require.NoError(b, err)
		}
		setComplete(false)
		defer setComplete(true)
		rebuild(b, wipe)
	})

	// The ceilings: the members in memory, as ZADD arguments, read before
	// the timer starts.
	bestFirst := "SELECT member, score, at FROM (" + memberOrder + ") t ORDER BY score DESC"
	ceiling := func(b *testing.B, query string, inFlight int) {
		pairs := readPairs(ctx, b, s, query, args, n)
		key := "lb:{" + name + "}:ceiling"
		measure(b, client, int64(n), wipe, func() int64 {
			if inFlight > 1 {
				return zaddInFlight(ctx, b, client, key, pairs, inFlight)
			}
			return zaddAll(ctx, b, client, key, pairs)
		})
	}
	b.Run("ceiling", func(b *testing.B) { ceiling(b, bestFirst, 1) })
	b.Run("ceiling-2-in-flight", func(b *testing.B) { ceiling(b, bestFirst, 2) })
}

// pinger PINGs the real Redis from a connection of its own, one PING after
// the other, until stop is called, and keeps the longest wait in *stall.
func pinger(b *testing.B, stall *time.Duration) (stop func()) {
	opt, err := redisurl.Parse(testredis.URL())
	require.NoError(b, err)
	opt.DisableCache = true
	opt.ConnWriteTimeout = 5 * time.Minute
	c, err := rueidis.NewClient(opt)
	require.NoError(b, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			start := time.Now()
			if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
				return
			}
			*stall = max(*stall, time.Since(start))
			time.Sleep(time.Millisecond)
		}
	}()
	return func() {
		cancel()
		<-done
		c.Close()
	}
}

// readPairs reads a query's rows into memory as ZADD arguments: score,
// member, ...
func readPairs(ctx context.Context, b *testing.B, s *Store, query string, args []any, n int) []string {
	pairs := make([]string, 0, 2*n)
	_, err := s.stream(ctx, s.pool, query, args, func(st leaderboard.StoredStanding) error {
		pairs = append(pairs, formatScore(st.Score), st.Member)
		return nil
	})
	require.NoError(b, err)
	require.Len(b, pairs, 2*n)
	return pairs
}

// zaddInFlight is zaddAll with up to inFlight DoMultis of rebuildPipeline
// ZADDs on their way at once, so Redis need not wait while the next one is
// built.
func zaddInFlight(ctx context.Context, b *testing.B, client rueidis.Client, key string, pairs []string, inFlight int) int64 {
	pipelines := make(chan rueidis.Commands, inFlight)
	errs := make(chan error, inFlight)
	for range inFlight {
		go func() {
			var err error
			for cmds := range pipelines {
				for _, r := range client.DoMulti(ctx, cmds...) {
					if e := r.Error(); e != nil && err == nil {
						err = e
					}
				}
			}
			errs <- err
		}()
	}
	cmds := make(rueidis.Commands, 0, rebuildPipeline)
	for start := 0; start < len(pairs); start += 2 * rebuildBatch {
		end := min(start+2*rebuildBatch, len(pairs))
		cmds = append(cmds, client.B().Arbitrary("ZADD").Keys(key).Args(pairs[start:end]...).Build())
		if len(cmds) == rebuildPipeline {
			pipelines <- cmds
			cmds = make(rueidis.Commands, 0, rebuildPipeline)
		}
	}
	if len(cmds) > 0 {
		pipelines <- cmds
	}
	close(pipelines)
	for range inFlight {
		require.NoError(b, <-errs)
	}
	return int64(len(pairs) / 2)
}

// rebuildBatch and rebuildPipeline are the root package's sizes: members per
// ZADD, and ZADDs per DoMulti.
const (
	rebuildBatch    = 1000
	rebuildPipeline = 16
)

// formatScore is the root package's: the shortest text Redis parses back to
// the same float64.
func formatScore(f float64) string {
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// zaddAll writes pairs (score, member, ...) to key with ZADDs of
// rebuildBatch members, rebuildPipeline commands per DoMulti, one DoMulti
// after the other.
func zaddAll(ctx context.Context, b *testing.B, client rueidis.Client, key string, pairs []string) int64 {
	cmds := make(rueidis.Commands, 0, rebuildPipeline)
	flush := func() {
		for _, r := range client.DoMulti(ctx, cmds...) {
			require.NoError(b, r.Error())
		}
		cmds = cmds[:0]
	}
	for start := 0; start < len(pairs); start += 2 * rebuildBatch {
		end := min(start+2*rebuildBatch, len(pairs))
		cmds = append(cmds, client.B().Arbitrary("ZADD").Keys(key).Args(pairs[start:end]...).Build())
		if len(cmds) == rebuildPipeline {
			flush()
		}
	}
	if len(cmds) > 0 {
		flush()
	}
	return int64(len(pairs) / 2)
}

// measure runs op b.N times, each after setup (not timed), checks that every
// run handled want members, and reports members/s and the CPU seconds per
// op spent by this process, by Redis, and by the rest of the machine.
func measure(b *testing.B, client rueidis.Client, want int64, setup func(), op func() int64) {
	b.Helper()
	if dir := os.Getenv("LB_BENCH_CPUPROFILE"); dir != "" {
		name := strings.NewReplacer("/", "_").Replace(b.Name()) + ".pprof"
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(b, err)
		defer f.Close()
		require.NoError(b, pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	var used cpuUse
	b.ResetTimer()
	b.StopTimer()
	for range b.N {
		setup()
		before := sampleCPU(b, client)
		b.StartTimer()
		got := op()
		b.StopTimer()
		used = used.add(sampleCPU(b, client).sub(before))
		require.Equal(b, want, got, "members handled")
	}
	b.ReportMetric(float64(want)*float64(b.N)/b.Elapsed().Seconds(), "members/s")
	if used.ok {
		per := func(d float64) float64 { return d / float64(b.N) }
		b.ReportMetric(per(used.client), "client-cpu-s/op")
		b.ReportMetric(per(used.redis), "redis-cpu-s/op")
		b.ReportMetric(per(max(used.host-used.client-used.redis, 0)), "host-other-cpu-s/op")
	}
}

// cpuUse is CPU time in seconds: of this process, of the Redis server, and
// of the whole machine (every core's non-idle time).
type cpuUse struct {
	client, redis, host float64
	ok                  bool
}

func (a cpuUse) sub(c cpuUse) cpuUse {
	return cpuUse{a.client - c.client, a.redis - c.redis, a.host - c.host, a.ok && c.ok}
}

func (a cpuUse) add(c cpuUse) cpuUse {
	return cpuUse{a.client + c.client, a.redis + c.redis, a.host + c.host, c.ok}
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times.
const clockTicks = 100

// sampleCPU reads the CPU counters; ok is false where /proc or INFO cpu
// cannot be read.
func sampleCPU(b *testing.B, client rueidis.Client) cpuUse {
	var u cpuUse
	self, err1 := os.ReadFile("/proc/self/stat")
	host, err2 := os.ReadFile("/proc/stat")
	info, err3 := client.Do(context.Background(), client.B().Info().Section("cpu").Build()).ToString()
	if err1 != nil || err2 != nil || err3 != nil {
		return u
	}
	// /proc/self/stat: utime and stime are fields 14 and 15, counted after
	// the command name, which is in parentheses and may hold spaces.
	f := strings.Fields(string(self[strings.LastIndexByte(string(self), ')')+1:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	u.client = (ut + st) / clockTicks
	// /proc/stat's first line: cpu user nice system idle iowait irq softirq steal ...
	line, _, _ := strings.Cut(string(host), "\n")
	for i, v := range strings.Fields(line)[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is in user already
			continue
		}
		x, _ := strconv.ParseFloat(v, 64)
		u.host += x / clockTicks
	}
	for _, l := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			x, _ := strconv.ParseFloat(v, 64)
			u.redis += x
		}
	}
	u.ok = true
	return u
}

// loadMembers appends n submissions without ids to board, one per member
// ("player:<i>"), with random whole scores below 10^9, KeepBest on a
// HighestFirst board's all-time period, with AppendBatch (COPY, and the
// standings kept), then vacuums and analyzes the tables so that every
// measured read finds them as old tables would be, not freshly written
// (an index-only scan reads the table for every page a vacuum has not
// marked all-visible yet). It logs the plan of the kept standings' read.
func loadMembers(b *testing.B, s *Store, board string, n int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(n), 5))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	const chunk = 200_000
	subs := make([]leaderboard.Submission, 0, chunk)
	for i := 0; i < n; i += chunk {
		subs = subs[:0]
		for j := i; j < min(i+chunk, n); j++ {
			subs = append(subs, leaderboard.Submission{
				Board:   board,
				Member:  "player:" + strconv.Itoa(j),
				Score:   float64(rng.IntN(1_000_000_000)),
				At:      at.Add(time.Duration(j) * time.Microsecond),
				Periods: []leaderboard.SubmissionPeriod{{Window: "alltime", Period: "alltime"}},
			})
		}
		_, err := s.AppendBatch(ctx, subs)
		require.NoError(b, err)
	}
	loaded := time.Since(start)
	_, err := s.pool.Exec(ctx, "VACUUM (ANALYZE) "+s.tSubs+", "+s.tKept)
	require.NoError(b, err)
	b.Logf("loaded %d members with AppendBatch in %v (%.0f rows/s), vacuumed in %v",
		n, loaded.Round(time.Millisecond), float64(n)/loaded.Seconds(), (time.Since(start) - loaded).Round(time.Millisecond))
	rows, err := s.pool.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS) SELECT member, score, at FROM `+s.tKept+`
WHERE board = $1 AND "window" = 'alltime' AND period = 'alltime' ORDER BY score DESC, at DESC`, board)
	require.NoError(b, err)
	var plan []string
	var line string
	_, err = pgxForEach(rows, &line, func() { plan = append(plan, line) })
	require.NoError(b, err)
	b.Logf("kept standings read:\n%s", strings.Join(plan, "\n"))
}

// deleteBoardKeys deletes every key of the board on the real Redis, with
// DEL, which frees a key's members before it answers (UNLINK would free
// them in the background, during the next measurement). It logs the DELs
// that block Redis for more than a second.
func deleteBoardKeys(b *testing.B, client rueidis.Client, board string) {
	ctx := context.Background()
	err := redisnode.Scan(ctx, client, "lb:{"+redisnode.GlobEscape(board)+"}:*", func(keys []string) error {
		for _, k := range keys {
			card, _ := client.Do(ctx, client.B().Zcard().Key(k).Build()).AsInt64() // 0 for other types
			start := time.Now()
			if err := client.Do(ctx, client.B().Del().Key(k).Build()).Error(); err != nil {
				return err
			}
			if d := time.Since(start); d > time.Second {
				b.Logf("DEL %s (%d members) blocked Redis for %v", k, card, d.Round(time.Millisecond))
			}
		}
		return nil
	})
	require.NoError(b, err)
}
