package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisnode"
	"github.com/skiprank/leaderboard/pgstore"
)

// demo is one run of the demonstration, step by step, printed to out.
type demo struct {
	cfg    config
	out    io.Writer
	store  *pgstore.Store
	client rueidis.Client
	board  *leaderboard.Leaderboard

	top    []leaderboard.Entry // before the loss
	counts [2]int64            // members of the alltime and weekly periods, before the loss
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }

// run is the whole demonstration.
func run(ctx context.Context, out io.Writer, cfg config) error {
	d := &demo{cfg: cfg, out: out}
	// The pool connects at its first use (Migrate); pgstore.New checks the
	// table prefix without a call.
	pool, err := pgxpool.NewWithConfig(ctx, cfg.Postgres.cfg)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()
	if d.store, err = pgstore.New(pool, pgstore.WithTablePrefix(cfg.TablePrefix)); err != nil {
		return err
	}
	client, stopRedis, err := cfg.Redis.connect()
	if err != nil {
		return err
	}
	defer stopRedis()
	d.client = client
	d.board, err = leaderboard.New(client, cfg.Board,
		leaderboard.WithPolicy(leaderboard.Accumulate), // a player's points add up
		leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Weekly()),
		leaderboard.WithStore(d.store), // PostgreSQL first, Redis second
	)
	if err != nil {
		return err
	}
	for _, step := range []func(context.Context) error{d.afresh, d.start, d.load, d.lose, d.rebuild, d.verify, d.compare} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// afresh deletes what an earlier run left of the board with the board's
// Delete: in PostgreSQL first (the store's DeleteBoard: its submissions,
// kept standings, removals, resets and seals; deleting the submissions
// alone would leave kept standings that the next rebuild reads), then every
// key of its live periods in Redis.
func (d *demo) afresh(ctx context.Context) error {
	d.say("1. PostgreSQL at %s", d.cfg.Postgres.shown)
	if err := d.store.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate (is PostgreSQL running? set DATABASE_URL): %w", err)
	}
	d.say("   pgstore tables %q are migrated (Migrate is idempotent: run it at every start).", d.cfg.TablePrefix+"*")

	d.say("\n2. Redis: %s", d.cfg.Redis.shown)
	if err := d.board.Delete(ctx); err != nil {
		return err
	}
	d.say("   Delete: whatever an earlier run left of board %q is gone, from PostgreSQL first, then from Redis.", d.cfg.Board)
	return nil
}

// start is a service's start-up: rebuild the board when Redis does not
// hold it as last rebuilt (here: it never was).
func (d *demo) start(ctx context.Context) error {
	d.say("\n3. Board %q: Accumulate, windows alltime and weekly, WithStore(pgstore).", d.cfg.Board)
	present, err := d.board.Present(ctx)
	if err != nil {
		return err
	}
	d.say("   Present() = %v", present)
	if present {
		return nil
	}
	rep, err := d.board.Rebuild(ctx)
	if err != nil {
		return err
	}
	d.say("   so Rebuild() once from the store: %d periods, %d members. Present() is true from now on.", rep.Periods, rep.Members)
	return nil
}

// match is one live match: a Submit with WithID(id).
type match struct {
	id, member string
	score      float64
}

// workload is the run's scores: the same every run.
func (d *demo) workload() (rounds []map[string]float64, live []match) {
	rng := rand.New(rand.NewPCG(5, 2026))
	player := func(i int) string { return fmt.Sprintf("player:%04d", i) }
	score := func() float64 { return float64(1 + rng.IntN(100)) }
	rounds = make([]map[string]float64, d.cfg.Rounds)
	for r := range rounds {
		rounds[r] = make(map[string]float64, d.cfg.RoundSize)
		for _, p := range rng.Perm(d.cfg.Players)[:d.cfg.RoundSize] {
			rounds[r][player(p)] = score()
		}
	}
	live = make([]match, d.cfg.Live)
	for i := range live {
		live[i] = match{id: fmt.Sprintf("match-%06d", i), member: player(rng.IntN(d.cfg.Players)), score: score()}
	}
	return rounds, live
}

// load submits the workload: rounds of matches in bulk, then live matches
// one by one, and retries one of them.
func (d *demo) load(ctx context.Context) error {
	rounds, live := d.workload()
	total := d.cfg.Rounds*d.cfg.RoundSize + d.cfg.Live
	d.say("\n4. Submitting %d scores for %d players.", total, d.cfg.Players)
	d.say("   a) %d rounds of %d players with SubmitMany: each round one COPY into PostgreSQL, then one Redis call.",
		d.cfg.Rounds, d.cfg.RoundSize)
	d.say("   b) %d matches with Submit(..., WithID(match id)) from %d goroutines: an INSERT, then Redis.", d.cfg.Live, d.cfg.Workers)
	bar := newMeter(d.out, d.cfg.Progress, int64(total), "   submitting", "scores")
	start := time.Now()
	for _, round := range rounds {
		if err := d.board.SubmitMany(ctx, round); err != nil {
			return err
		}
		bar.add(int64(len(round)))
	}
	if err := d.submitLive(ctx, live, bar); err != nil {
		return err
	}
	bar.finish()
	d.say("   %d scores in %v, each in PostgreSQL before Redis.", total, time.Since(start).Round(time.Millisecond))
	if err := d.retry(ctx, live[0]); err != nil {
		return err
	}
	var err error
	if d.top, err = d.board.Top(ctx, 5); err != nil {
		return err
	}
	d.say("\n   Top 5, all time:")
	table(d.out, d.top)
	if d.counts, err = countAll(ctx, d.board); err != nil {
		return err
	}
	d.say("   Count: alltime %d, weekly %d", d.counts[0], d.counts[1])
	return nil
}

// submitLive sends the live matches from the workers; the first error
// stops them all. Each player's matches go to one worker, in order: two
// submissions of one player sent at once can reach the store and Redis in
// different orders (each goes to the store first, then to Redis), and
// Verify would then name the player.
func (d *demo) submitLive(ctx context.Context, live []match, bar *meter) error {
	queues := make([][]match, d.cfg.Workers)
	worker := map[string]int{}
	for _, m := range live {
		w, ok := worker[m.member]
		if !ok {
			w = len(worker) % d.cfg.Workers
			worker[m.member] = w
		}
		queues[w] = append(queues[w], m)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, d.cfg.Workers)
	for _, queue := range queues {
		wg.Go(func() {
			for _, m := range queue {
				if stop.Load() {
					return
				}
				if _, err := d.board.Submit(ctx, m.member, m.score, leaderboard.WithID(m.id)); err != nil {
					errs <- fmt.Errorf("submit %s: %w", m.id, err)
					stop.Store(true) // stop the others
					return
				}
				bar.add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	var failed []error
	for err := range errs {
		failed = append(failed, err)
	}
	return errors.Join(failed...)
}

// retry sends m again, as a client does after a timeout: counted once.
func (d *demo) retry(ctx context.Context, m match) error {
	before, err := d.board.Rank(ctx, m.member)
	if err != nil {
		return err
	}
	res, err := d.board.Submit(ctx, m.member, m.score, leaderboard.WithID(m.id))
	if err != nil {
		return err
	}
	if !res.Duplicate || res.Score != before.Score {
		return fmt.Errorf("retry of %s: Duplicate = %v, score %v -> %v: want a duplicate that changes nothing",
			m.id, res.Duplicate, before.Score, res.Score)
	}
	d.say("   Retrying %s (%s, %+.0f): Duplicate = true, score still %.0f: counted once.", m.id, m.member, m.score, res.Score)
	return nil
}

// lose deletes the board's keys from Redis, as a restart without
// persistence would, and shows that Present notices.
func (d *demo) lose(ctx context.Context) error {
	d.say("\n5. Simulated loss: deleting every Redis key of the board (SCAN MATCH %s, then UNLINK).", pattern(d.cfg.Board))
	n, err := wipe(ctx, d.client, d.cfg.Board)
	if err != nil {
		return err
	}
	present, err := d.board.Present(ctx)
	if err != nil {
		return err
	}
	lost, err := countAll(ctx, d.board)
	if err != nil {
		return err
	}
	d.say("   Deleted %d keys. Present() = %v, Count: alltime %d, weekly %d.", n, present, lost[0], lost[1])
	if present || lost != [2]int64{} {
		return fmt.Errorf("after the wipe: Present() = %v, counts %v: want false and zeros", present, lost)
	}
	d.say("   A service sees Present() == false (at start-up or on a timer) and rebuilds:")
	return nil
}

// rebuild rebuilds the board from PostgreSQL, with a progress bar on a
// terminal.
func (d *demo) rebuild(ctx context.Context) error {
	d.say("\n6. Rebuild from PostgreSQL (every live period of every window, swapped in atomically).")
	members := d.counts[0] + d.counts[1] // what the rebuild writes, as counted before the loss
	bar := newMeter(d.out, d.cfg.Progress, members, "   rebuilding", "members")
	var done int64 // members of the periods finished
	start := time.Now()
	rep, err := d.board.Rebuild(ctx, leaderboard.WithProgress(func(p leaderboard.RebuildProgress) {
		bar.describe(fmt.Sprintf("   rebuilding %-16s", p.Window+"/"+p.Period))
		bar.set(min(done+p.Members, members))
		if p.Done {
			done += p.Members
		}
	}))
	if err != nil {
		return err
	}
	bar.finish()
	d.say("   Rebuilt %d periods, %d members in %v; %d standings refused.",
		rep.Periods, rep.Members, time.Since(start).Round(time.Millisecond), len(rep.Refused))
	present, err := d.board.Present(ctx)
	if err != nil {
		return err
	}
	d.say("   Present() = %v", present)
	return nil
}

// verify compares the store with Redis, and pgstore's kept standings with
// its own log (Verify asks the store for that check: CheckStandings).
func (d *demo) verify(ctx context.Context) error {
	d.say("\n7. Verify: the store against Redis, member by member, and pgstore's kept standings against its log.")
	reports, err := d.board.Verify(ctx)
	if err != nil {
		return err
	}
	clean := true
	for _, r := range reports {
		d.say("   %-8s %-10s store %5d  redis %5d  missing %d  different %d  extra %d  clean: %v",
			r.Window, r.Period, r.StoreMembers, r.RedisMembers, r.MissingCount, r.DifferentCount, r.Extra, r.Clean())
		switch {
		case !r.Store.Kept:
			d.say("   %-19s pgstore keeps no standings for it: nothing to check against its log", "")
		case r.Store.DifferCount == 0:
			d.say("   %-19s pgstore's kept standings equal its log's aggregation (%d members)", "", r.Store.Members)
		default:
			d.say("   %-19s pgstore's kept standings differ from its log for %d members, e.g. %v",
				"", r.Store.DifferCount, r.Store.Differ[:min(3, len(r.Store.Differ))])
		}
		clean = clean && r.Clean()
	}
	if !clean {
		return errors.New("verify found differences after the rebuild")
	}
	return nil
}

// compare shows the board is as before the loss.
func (d *demo) compare(ctx context.Context) error {
	again, err := d.board.Top(ctx, 5)
	if err != nil {
		return err
	}
	d.say("\n8. Top 5, all time, after the rebuild:")
	table(d.out, again)
	if !slices.Equal(d.top, again) {
		return errors.New("the top 5 differ from before the loss")
	}
	after, err := countAll(ctx, d.board)
	if err != nil {
		return err
	}
	if after != d.counts {
		return fmt.Errorf("counts after the rebuild %v, before the loss %v", after, d.counts)
	}
	d.say("   Identical to before the loss (Count: alltime %d, weekly %d): nothing acknowledged was lost.", after[0], after[1])
	return nil
}

// pattern is the SCAN glob of every key of the board: the SDK's keys are
// "lb:{<board>}:..." with the default key prefix "lb" (the board's name is
// the hash tag, so on a Redis Cluster they all live on one node).
func pattern(board string) string { return "lb:{" + redisnode.GlobEscape(board) + "}:*" }

// wipe deletes every key of the board, as a FLUSHALL or a restart without
// persistence would, and returns how many it deleted. SCAN runs on every
// primary (one, unless Redis is a Cluster); UNLINK goes where the keys
// live.
func wipe(ctx context.Context, client rueidis.Client, board string) (int, error) {
	n, err := redisnode.Unlink(ctx, client, pattern(board))
	if err != nil {
		return int(n), fmt.Errorf("redis: delete the board's keys: %w", err)
	}
	return int(n), nil
}

// countAll returns the member counts of the current alltime and weekly
// periods.
func countAll(ctx context.Context, board *leaderboard.Leaderboard) ([2]int64, error) {
	var c [2]int64
	for i, w := range []leaderboard.Window{leaderboard.AllTime(), leaderboard.Weekly()} {
		n, err := board.Count(ctx, leaderboard.In(w))
		if err != nil {
			return c, err
		}
		c[i] = n
	}
	return c, nil
}

func table(out io.Writer, entries []leaderboard.Entry) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, e := range entries {
		fmt.Fprintf(tw, "   \t#%d\t%s\t%.0f\t\n", e.Rank, e.Member, e.Score)
	}
	_ = tw.Flush()
}
