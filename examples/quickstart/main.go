// Command quickstart fills a leaderboard with a few hundred scores and prints
// what a game's UI would show: the top 10, one player's standing with the
// players around them, and page 2.
//
//	go run ./examples/quickstart                      # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"text/tabwriter"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

func main() {
	client, where, err := connect()
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	fmt.Println("Redis:", where)

	board, err := leaderboard.New(client, "quickstart",
		leaderboard.WithPolicy(leaderboard.KeepBest), // a player's best run counts
		leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily(), leaderboard.Weekly(), leaderboard.Monthly()),
	)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// 400 runs by 80 players over the last ten days, oldest first; the seed
	// makes every run of this program the same.
	rng := rand.New(rand.NewPCG(7, 42))
	now := time.Now()
	var last leaderboard.Result
	for i := 0; i < 400; i++ {
		player := fmt.Sprintf("player:%02d", rng.IntN(80))
		score := float64(rng.IntN(9000) + 1000)
		at := now.Add(-time.Duration(400-i) * 36 * time.Minute) // when the run ended
		if last, err = board.Submit(ctx, player, score, leaderboard.WithTime(at)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("Submitted 400 runs. The last one, %s with %.0f:\n", last.Member, last.Score)
	for _, w := range last.Windows {
		fmt.Printf("  %-8s %-11s rank %3d of %-3d (was %d), new best: %v\n",
			w.Window, w.Period, w.Standing.Rank, w.Standing.Total, w.Previous.Rank, w.Changed)
	}

	top, err := board.Top(ctx, 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("\nTop 10, all time")
	table(top, "")

	me := "player:42"
	st, err := board.Rank(ctx, me)
	if err != nil {
		log.Fatal(err)
	}
	around, err := board.Around(ctx, me, 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\n%s: rank %d of %d, ahead of %.1f%% of the others\n", me, st.Rank, st.Total, st.Percentile)
	table(around, me)

	page, err := board.Page(ctx, 2, 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nPage %d (%d per page, %d players)\n", page.Number, page.Size, page.Total)
	table(page.Entries, "")

	for _, w := range []leaderboard.Window{leaderboard.Daily(), leaderboard.Weekly()} {
		top, err := board.Top(ctx, 3, leaderboard.In(w))
		if err != nil {
			log.Fatal(err)
		}
		n, err := board.Count(ctx, leaderboard.In(w))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nTop 3 of %d players, %s board %s\n", n, w.Name(), w.Period(now).ID)
		table(top, "")
	}
}

// connect uses REDIS_URL when set and an embedded miniredis otherwise.
func connect() (rueidis.Client, string, error) {
	if url := os.Getenv("REDIS_URL"); url != "" {
		opt, err := rueidis.ParseURL(url)
		if err != nil {
			return nil, "", fmt.Errorf("REDIS_URL: %w", err)
		}
		c, err := rueidis.NewClient(opt)
		return c, url, err
	}
	mr, err := miniredis.Run()
	if err != nil {
		return nil, "", err
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true})
	return c, "embedded miniredis at " + mr.Addr() + " (set REDIS_URL to use a real Redis)", err
}

func table(es []leaderboard.Entry, mark string) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "rank\tplayer\tscore\t")
	for _, e := range es {
		arrow := ""
		if e.Member == mark {
			arrow = "<- you"
		}
		fmt.Fprintf(w, "%d\t%s\t%.0f\t%s\n", e.Rank, e.Member, e.Score, arrow)
	}
	w.Flush()
}
