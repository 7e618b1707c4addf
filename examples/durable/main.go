// Command durable shows a leaderboard that survives losing Redis: every
// submission is written to PostgreSQL first (pgstore) and to Redis second;
// the program then wipes the board's Redis keys, as a restart without
// persistence or a FLUSHALL would, notices the loss with Present, rebuilds
// the board from PostgreSQL with a progress bar, and checks with Verify that
// Redis and PostgreSQL agree again.
//
//	go run ./examples/durable                                    # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/durable   # a real Redis
//	DATABASE_URL=postgres://app@db:5432/game go run ./examples/durable
//
// PostgreSQL comes from DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable); the program
// creates its tables there (prefix "durable_example_") and, at every start,
// deletes the rows and Redis keys an earlier run left for its board, so it
// can be run again and again.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/rueidis"
	"github.com/schollz/progressbar/v3"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/pgstore"
)

// defaultDatabaseURL is the local PostgreSQL the repository's tests use.
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// config is what one run works on; main fills it from the environment.
type config struct {
	// DatabaseURL is the PostgreSQL to use.
	DatabaseURL string
	// RedisURL is the Redis to use; empty: an embedded miniredis.
	RedisURL string
	// TablePrefix is pgstore's table prefix.
	TablePrefix string
	// Board is the board's name.
	Board string
	// Players is how many players there are. The load is Rounds calls of
	// SubmitMany, each with RoundSize players, then Live calls of Submit
	// with WithID, from Workers goroutines.
	Players, Rounds, RoundSize, Live, Workers int
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := config{
		DatabaseURL: os.Getenv("DATABASE_URL"),
		RedisURL:    os.Getenv("REDIS_URL"),
		TablePrefix: "durable_example_",
		Board:       "durable-example",
		Players:     2000,
		Rounds:      19,
		RoundSize:   1000,
		Live:        1000,
		Workers:     8,
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = defaultDatabaseURL
	}
	if err := run(ctx, os.Stdout, cfg); err != nil {
		log.Fatal(err)
	}
}

// run is the whole demonstration, step by step, printed to out.
func run(ctx context.Context, out io.Writer, cfg config) error {
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }

	// 1. PostgreSQL: the source of truth.
	say("1. PostgreSQL at %s", redact(cfg.DatabaseURL))
	pool, err := pgxpool.New(ctx, cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer pool.Close()
	store, err := pgstore.New(pool, pgstore.WithTablePrefix(cfg.TablePrefix))
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate (is PostgreSQL running? set DATABASE_URL): %w", err)
	}
	say("   pgstore tables %q... are migrated (Migrate is idempotent: run it at every start).", cfg.TablePrefix+"*")
	// Only for a re-runnable demo: forget what an earlier run stored.
	tag, err := pool.Exec(ctx, "DELETE FROM "+pgx.Identifier{cfg.TablePrefix + "submissions"}.Sanitize()+" WHERE board = $1", cfg.Board)
	if err != nil {
		return fmt.Errorf("clearing an earlier run: %w", err)
	}
	if tag.RowsAffected() > 0 {
		say("   Deleted the %d submissions an earlier run stored for board %q.", tag.RowsAffected(), cfg.Board)
	}

	// 2. Redis: the fast copy.
	client, where, stopRedis, err := connectRedis(cfg.RedisURL)
	if err != nil {
		return err
	}
	defer stopRedis()
	defer client.Close()
	say("\n2. Redis: %s", where)
	if n, err := wipe(ctx, client, cfg.Board); err != nil {
		return err
	} else if n > 0 {
		say("   Deleted the %d keys an earlier run left for board %q.", n, cfg.Board)
	}

	// 3. The board, with the store.
	board, err := leaderboard.New(client, cfg.Board,
		leaderboard.WithPolicy(leaderboard.Accumulate), // a player's points add up
		leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Weekly()),
		leaderboard.WithStore(store), // PostgreSQL first, Redis second
	)
	if err != nil {
		return err
	}
	say("\n3. Board %q: Accumulate, windows alltime and weekly, WithStore(pgstore).", cfg.Board)
	present, err := board.Present(ctx)
	if err != nil {
		return err
	}
	say("   Present() = %v", present)
	if !present {
		// At start-up: Redis does not hold the board as last rebuilt (here:
		// it never was), so rebuild it from the store before serving.
		rep, err := board.Rebuild(ctx)
		if err != nil {
			return err
		}
		say("   so Rebuild() once from the store: %d periods, %d members. Present() is true from now on.", rep.Periods, rep.Members)
	}

	// 4. The load: rounds of matches in bulk, then live matches one by one.
	total := cfg.Rounds*cfg.RoundSize + cfg.Live
	say("\n4. Submitting %d scores for %d players.", total, cfg.Players)
	say("   a) %d rounds of %d players with SubmitMany: each round one COPY into PostgreSQL, then one Redis call.",
		cfg.Rounds, cfg.RoundSize)
	say("   b) %d matches with Submit(..., WithID(match id)) from %d goroutines: an INSERT, then Redis.", cfg.Live, cfg.Workers)
	rng := rand.New(rand.NewPCG(5, 2026)) // the same scores every run
	player := func(i int) string { return fmt.Sprintf("player:%04d", i) }
	score := func() float64 { return float64(1 + rng.IntN(100)) }
	rounds := make([]map[string]float64, cfg.Rounds)
	for r := range rounds {
		rounds[r] = make(map[string]float64, cfg.RoundSize)
		for _, p := range rng.Perm(cfg.Players)[:cfg.RoundSize] {
			rounds[r][player(p)] = score()
		}
	}
	type match struct {
		id, member string
		score      float64
	}
	live := make([]match, cfg.Live)
	for i := range live {
		live[i] = match{id: fmt.Sprintf("match-%06d", i), member: player(rng.IntN(cfg.Players)), score: score()}
	}

	bar := newBar(out, int64(total), "   submitting", "scores")
	start := time.Now()
	for _, round := range rounds {
		if err := board.SubmitMany(ctx, round); err != nil {
			return err
		}
		_ = bar.Add(len(round))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, cfg.Workers)
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(live) {
					return
				}
				m := live[i]
				if _, err := board.Submit(ctx, m.member, m.score, leaderboard.WithID(m.id)); err != nil {
					errs <- fmt.Errorf("submit %s: %w", m.id, err)
					next.Store(int64(len(live))) // stop the others
					return
				}
				_ = bar.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	var failed []error
	for err := range errs {
		failed = append(failed, err)
	}
	if err := errors.Join(failed...); err != nil {
		return err
	}
	_ = bar.Finish()
	say("   %d scores in %v, each in PostgreSQL before Redis.", total, time.Since(start).Round(time.Millisecond))

	// A retry of a submission already applied, as after a timeout.
	retry := live[0]
	before, err := board.Rank(ctx, retry.member)
	if err != nil {
		return err
	}
	res, err := board.Submit(ctx, retry.member, retry.score, leaderboard.WithID(retry.id))
	if err != nil {
		return err
	}
	if !res.Duplicate || res.Score != before.Score {
		return fmt.Errorf("retry of %s: Duplicate = %v, score %v -> %v: want a duplicate that changes nothing",
			retry.id, res.Duplicate, before.Score, res.Score)
	}
	say("   Retrying %s (%s, %+.0f): Duplicate = true, score still %.0f: counted once.",
		retry.id, retry.member, retry.score, res.Score)

	top, err := board.Top(ctx, 5)
	if err != nil {
		return err
	}
	say("\n   Top 5, all time:")
	table(out, top)
	counts, err := countAll(ctx, board)
	if err != nil {
		return err
	}
	say("   Count: alltime %d, weekly %d", counts[0], counts[1])

	// 5. The disaster: the board's keys vanish from Redis.
	say("\n5. Simulated loss: deleting every Redis key of the board (SCAN MATCH %s, then DEL).", pattern(cfg.Board))
	n, err := wipe(ctx, client, cfg.Board)
	if err != nil {
		return err
	}
	present, err = board.Present(ctx)
	if err != nil {
		return err
	}
	lost, err := countAll(ctx, board)
	if err != nil {
		return err
	}
	say("   Deleted %d keys. Present() = %v, Count: alltime %d, weekly %d.", n, present, lost[0], lost[1])
	if present || lost[0] != 0 || lost[1] != 0 {
		return fmt.Errorf("after the wipe: Present() = %v, counts %v: want false and zeros", present, lost)
	}
	say("   A service sees Present() == false (at start-up or on a timer) and rebuilds:")

	// 6. The rebuild, from PostgreSQL, with a progress bar.
	say("\n6. Rebuild from PostgreSQL (every live period of every window, swapped in atomically).")
	members := counts[0] + counts[1] // what the rebuild writes, as counted before the loss
	bar = newBar(out, members, "   rebuilding", "members")
	var done int64 // members of the periods finished
	shown := ""
	start = time.Now()
	rep, err := board.Rebuild(ctx, leaderboard.WithProgress(func(p leaderboard.RebuildProgress) {
		if period := p.Window + "/" + p.Period; period != shown && !p.Done {
			shown = period
			bar.Describe(fmt.Sprintf("   rebuilding %-16s", period))
		}
		_ = bar.Set64(min(done+p.Members, members))
		if p.Done {
			done += p.Members
		}
	}))
	if err != nil {
		return err
	}
	_ = bar.Finish()
	say("   Rebuilt %d periods, %d members in %v; %d standings refused.",
		rep.Periods, rep.Members, time.Since(start).Round(time.Millisecond), len(rep.Refused))
	if present, err = board.Present(ctx); err != nil {
		return err
	}
	say("   Present() = %v", present)

	// 7. Verify: PostgreSQL and Redis agree, member by member.
	say("\n7. Verify: the store against Redis, member by member.")
	reports, err := board.Verify(ctx)
	if err != nil {
		return err
	}
	clean := true
	for _, r := range reports {
		say("   %-8s %-10s store %5d  redis %5d  missing %d  different %d  extra %d  clean: %v",
			r.Window, r.Period, r.StoreMembers, r.RedisMembers, r.MissingCount, r.DifferentCount, r.Extra, r.Clean())
		clean = clean && r.Clean()
	}
	if !clean {
		return errors.New("verify found differences after the rebuild")
	}

	// 8. The same board as before the loss.
	again, err := board.Top(ctx, 5)
	if err != nil {
		return err
	}
	say("\n8. Top 5, all time, after the rebuild:")
	table(out, again)
	if !slices.Equal(top, again) {
		return errors.New("the top 5 differ from before the loss")
	}
	after, err := countAll(ctx, board)
	if err != nil {
		return err
	}
	if after != counts {
		return fmt.Errorf("counts after the rebuild %v, before the loss %v", after, counts)
	}
	say("   Identical to before the loss (Count: alltime %d, weekly %d): nothing acknowledged was lost.", after[0], after[1])
	return nil
}

// connectRedis connects to url, or starts an embedded miniredis when url is
// empty. stop stops what it started.
func connectRedis(url string) (client rueidis.Client, where string, stop func(), err error) {
	if url == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, "", nil, err
		}
		// ForceSingleClient: miniredis answers CLUSTER commands, which would
		// otherwise make rueidis build a cluster client.
		client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			mr.Close()
			return nil, "", nil, err
		}
		return client, "embedded miniredis (set REDIS_URL to use a real Redis)", mr.Close, nil
	}
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.DisableCache = true
	client, err = rueidis.NewClient(opt)
	if err != nil {
		return nil, "", nil, fmt.Errorf("redis at %s: %w", redact(url), err)
	}
	return client, redact(url), func() {}, nil
}

// pattern is the SCAN glob of every key of the board: the SDK's keys are
// "lb:{<board>}:..." with the default key prefix "lb" (the board's name is
// the hash tag, so on a Redis Cluster they all live on one node).
func pattern(board string) string { return "lb:{" + board + "}:*" }

// wipe deletes every key of the board, as a FLUSHALL or a restart without
// persistence would, and returns how many it deleted.
func wipe(ctx context.Context, client rueidis.Client, board string) (int, error) {
	var cursor uint64
	deleted := 0
	for {
		e, err := client.Do(ctx, client.B().Scan().Cursor(cursor).Match(pattern(board)).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return deleted, fmt.Errorf("scan: %w", err)
		}
		if len(e.Elements) > 0 {
			n, err := client.Do(ctx, client.B().Del().Key(e.Elements...).Build()).AsInt64()
			if err != nil {
				return deleted, fmt.Errorf("del: %w", err)
			}
			deleted += int(n)
		}
		if e.Cursor == 0 {
			return deleted, nil
		}
		cursor = e.Cursor
	}
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

// newBar is a progress bar of max steps (units) on out.
func newBar(out io.Writer, max int64, description, unit string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionThrottle(65*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
	)
}

func table(out io.Writer, entries []leaderboard.Entry) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, e := range entries {
		fmt.Fprintf(tw, "   \t#%d\t%s\t%.0f\t\n", e.Rank, e.Member, e.Score)
	}
	_ = tw.Flush()
}

// redact hides a URL's password.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
