// Command quickstart fills a leaderboard with a few hundred scores and prints
// what a game's UI would show: the top 10, one player's standing with the
// players around them, page 2, and the daily and weekly boards.
//
//	go run ./examples/quickstart                      # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/quickstart
//	go run ./examples/quickstart -h                   # usage; connects to nothing
//
// On a real Redis it writes the board "quickstart" (keys lb:{quickstart}:*)
// and deletes those keys before it exits; -keep leaves them, to look at with
// redis-cli. The all-time key never expires by itself.
package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisurl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p := program{board: "quickstart", getenv: os.Getenv, stdout: os.Stdout, stderr: os.Stderr}
	err := p.run(ctx, os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		return
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// program is the command with what it reads and writes, so tests can run it
// on a board and streams of their own.
type program struct {
	board          string
	getenv         func(string) string
	stdout, stderr io.Writer
}

// errUsage is a bad command line; the flag package has printed why.
var errUsage = errors.New("usage")

func (p program) flags(args []string) (keep bool, err error) {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(p.stderr)
	fs.BoolVar(&keep, "keep", false, "leave the board's keys in Redis when it ends (a real Redis only)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `Usage: go run ./examples/quickstart [-keep]

Fills the leaderboard %q with 400 scores and prints its top 10, one
player's neighbours, page 2, and the daily and weekly boards.

Environment:
  REDIS_URL  the Redis to use, e.g. redis://127.0.0.1:6379 (unset: an
             embedded miniredis, gone when the program ends). On a real
             Redis the program writes the keys lb:{%s}:* and deletes
             them before it exits, unless -keep is given.

Flags:
`, p.board, p.board)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return false, err
		}
		return false, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(p.stderr, "unexpected arguments: %q\n", fs.Args())
		fs.Usage()
		return false, errUsage
	}
	return keep, nil
}

func (p program) run(ctx context.Context, args []string) (err error) {
	keep, err := p.flags(args)
	if err != nil {
		return err
	}
	r, err := connect(p.getenv("REDIS_URL"))
	if err != nil {
		return err
	}
	defer r.close()
	fmt.Fprintln(p.stdout, "Redis:", r.where)
	defer func() {
		if cerr := p.cleanUp(r, keep); err == nil {
			err = cerr
		}
	}()
	board, err := leaderboard.New(r.client, p.board,
		leaderboard.WithPolicy(leaderboard.KeepBest), // a player's best run counts
		leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily(), leaderboard.Weekly(), leaderboard.Monthly()),
	)
	if err != nil {
		return err
	}
	now := time.Now()
	if err := p.fill(ctx, board, now); err != nil {
		return err
	}
	return p.show(ctx, board, now)
}

// fill submits 400 runs by 80 players over the last ten days, oldest first,
// and prints what the last one did; the seed makes every run the same.
func (p program) fill(ctx context.Context, board *leaderboard.Leaderboard, now time.Time) error {
	rng := rand.New(rand.NewPCG(7, 42))
	var last leaderboard.Result
	for i := 0; i < 400; i++ {
		player := fmt.Sprintf("player:%02d", rng.IntN(80))
		score := float64(rng.IntN(9000) + 1000)
		at := now.Add(-time.Duration(400-i) * 36 * time.Minute) // when the run ended
		var err error
		if last, err = board.Submit(ctx, player, score, leaderboard.WithTime(at)); err != nil {
			return err
		}
	}
	fmt.Fprintf(p.stdout, "Submitted 400 runs. The last one, %s with %.0f:\n", last.Member, last.Score)
	for _, w := range last.Windows {
		if w.Closed {
			fmt.Fprintf(p.stdout, "  %-8s %-11s closed: the run is older than the period's retention\n", w.Window, w.Period)
			continue
		}
		fmt.Fprintf(p.stdout, "  %-8s %-11s rank %3d of %-3d %-14s new best: %v\n",
			w.Window, w.Period, w.Standing.Rank, w.Standing.Total, before(w.Previous), w.Changed)
	}
	return nil
}

// before says where a member stood before a submission.
func before(prev leaderboard.Entry) string {
	if prev.Rank == 0 {
		return "(new)" // not ranked in that period before
	}
	return fmt.Sprintf("(was %d)", prev.Rank)
}

// show prints the reads a game's UI makes.
func (p program) show(ctx context.Context, board *leaderboard.Leaderboard, now time.Time) error {
	top, err := board.Top(ctx, 10)
	if err != nil {
		return err
	}
	fmt.Fprintln(p.stdout, "\nTop 10, all time")
	table(p.stdout, top, "")

	me := "player:42"
	st, err := board.Rank(ctx, me)
	if err != nil {
		return err
	}
	around, err := board.Around(ctx, me, 2)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.stdout, "\n%s: rank %d of %d, ahead of %.1f%% of the others\n", me, st.Rank, st.Total, st.Percentile)
	table(p.stdout, around, me)

	page, err := board.Page(ctx, 2, 10)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.stdout, "\nPage %d (%d per page, %d players)\n", page.Number, page.Size, page.Total)
	table(p.stdout, page.Entries, "")

	for _, w := range []leaderboard.Window{leaderboard.Daily(), leaderboard.Weekly()} {
		top, err := board.Top(ctx, 3, leaderboard.In(w))
		if err != nil {
			return err
		}
		n, err := board.Count(ctx, leaderboard.In(w))
		if err != nil {
			return err
		}
		fmt.Fprintf(p.stdout, "\nTop 3 of %d players, %s board %s\n", n, w.Name(), w.Period(now).ID)
		table(p.stdout, top, "")
	}
	if err := p.showByScore(ctx, board); err != nil {
		return err
	}
	return p.export(ctx, board)
}

// showByScore prints the reads by position and by score: the ranks under
// the podium, a bracket, where a score would place, a reward tier.
func (p program) showByScore(ctx context.Context, board *leaderboard.Leaderboard) error {
	under, err := board.Range(ctx, 4, 8)
	if err != nil {
		return err
	}
	fmt.Fprintln(p.stdout, "\nRanks 4 to 8, under the podium")
	table(p.stdout, under, "")
	bracket, err := board.Between(ctx, 8000, 8999, 5)
	if err != nil {
		return err
	}
	n, err := board.CountBetween(ctx, 8000, 8999)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.stdout, "\nThe 8000-8999 bracket: %d players, the best 5\n", n)
	table(p.stdout, bracket, "")
	place, near, err := board.AroundScore(ctx, 9500, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.stdout, "\nA run of 9500 would place %d, next to\n", place)
	table(p.stdout, near, "")
	tier, err := board.Cutoff(ctx, 10)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.stdout, "\nThe best 10%%: %.0f or more (%s, rank %d)\n", tier.Score, tier.Member, tier.Rank)
	return nil
}

// export walks the whole board as a season's end would, into CSV rows, with
// a progress bar: All reads it in chunks, in constant memory.
func (p program) export(ctx context.Context, board *leaderboard.Leaderboard) error {
	total, err := board.Count(ctx)
	if err != nil || total == 0 {
		return err
	}
	var rows bytes.Buffer
	out := csv.NewWriter(&rows)
	fmt.Fprintln(p.stdout, "\nSeason-end export")
	var done int64
	for e, err := range board.All(ctx) {
		if err != nil {
			return fmt.Errorf("export after %d of %d rows: %w", done, total, err)
		}
		if err := out.Write([]string{strconv.FormatInt(e.Rank, 10), e.Member, strconv.FormatFloat(e.Score, 'f', -1, 64)}); err != nil {
			return err
		}
		done++
		if done*4%total < 4 { // each quarter, and the last row
			const width = 20
			bar := int(done * width / total)
			fmt.Fprintf(p.stdout, "  [%s%s] %3d%% %d/%d\n", strings.Repeat("#", bar), strings.Repeat(".", width-bar), done*100/total, done, total)
		}
	}
	out.Flush()
	fmt.Fprintf(p.stdout, "  %d rows, %d bytes of CSV\n", done, rows.Len())
	return out.Error()
}

// table prints entries right-aligned, marking the row of member mark.
func table(out io.Writer, es []leaderboard.Entry, mark string) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "rank\tplayer\tscore\t")
	for _, e := range es {
		fmt.Fprintf(w, "%d\t%s\t%.0f\t", e.Rank, e.Member, e.Score)
		if e.Member == mark {
			fmt.Fprint(w, "  <- you") // after the aligned cells, two spaces off
		}
		fmt.Fprintln(w)
	}
	_ = w.Flush()
}

// redis is the Redis the program uses.
type redis struct {
	client rueidis.Client
	where  string // for people: the URL without its password
	real   bool   // REDIS_URL, not the embedded miniredis
	close  func()
	// opt is what REDIS_URL parsed to, and unix whether it names a
	// socket: the cleanup hint names the same server (cleanup.go).
	opt  rueidis.ClientOption
	unix bool
}

// connect uses REDIS_URL when set and an embedded miniredis otherwise.
func connect(url string) (*redis, error) {
	if url != "" {
		opt, err := redisurl.Parse(url)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		// The SDK reads nothing through rueidis's client-side cache; tracking
		// would only cost a handshake, and a Redis without RESP3 refuses it.
		opt.DisableCache = true
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return nil, fmt.Errorf("connect to %s: %w", redisurl.Redact(url), err)
		}
		return &redis{client: c, where: redisurl.Redact(url), real: true, close: c.Close, opt: opt, unix: isUnix(url)}, nil
	}
	mr, err := miniredis.Run()
	if err != nil {
		return nil, fmt.Errorf("start miniredis: %w", err)
	}
	// miniredis answers CLUSTER commands as a one-node cluster; without
	// ForceSingleClient rueidis would build a cluster client for it.
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		mr.Close()
		return nil, fmt.Errorf("connect to miniredis: %w", err)
	}
	return &redis{client: c, where: "embedded miniredis at " + mr.Addr() + ", in memory until the program ends (set REDIS_URL to use a real Redis)",
		close: func() { c.Close(); mr.Close() }}, nil
}
