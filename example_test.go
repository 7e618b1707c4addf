package leaderboard_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	lb "github.com/skiprank/leaderboard"
)

// exampleClient starts an embedded miniredis so the examples run anywhere;
// in production pass your own rueidis.Client (standalone, Sentinel, Cluster,
// or wrapped with rueidisotel).
func exampleClient() (rueidis.Client, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	// Pinned to the date the examples' clocks read, so their windowed keys
	// are alive whenever the examples run.
	mr.SetTime(time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC))
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true})
	if err != nil {
		panic(err)
	}
	return c, func() { c.Close(); mr.Close() }
}

func ExampleNew() {
	client, done := exampleClient()
	defer done()

	board, err := lb.New(client, "speedrun",
		lb.WithOrder(lb.LowestFirst), // the fastest time ranks first
		lb.WithWindows(lb.AllTime(), lb.Weekly()),
	)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	board.Submit(ctx, "ana", 71.3)
	board.Submit(ctx, "ben", 68.9)
	top, _ := board.Top(ctx, 2)
	for _, e := range top {
		fmt.Println(e.Rank, e.Member, e.Score)
	}
	// Output:
	// 1 ben 68.9
	// 2 ana 71.3
}

func ExampleLeaderboard_Submit() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena") // KeepBest, HighestFirst, all-time

	board.Submit(ctx, "ana", 900)
	res, _ := board.Submit(ctx, "ben", 800)
	fmt.Printf("ben: rank %d of %d, new best: %v\n", res.Rank, res.Total, res.Changed)

	res, _ = board.Submit(ctx, "ben", 950)
	fmt.Printf("ben: rank %d (was %d), score %v (was %v), new best: %v\n",
		res.Rank, res.Previous.Rank, res.Score, res.Previous.Score, res.Changed)

	res, _ = board.Submit(ctx, "ben", 700)
	fmt.Printf("ben: score %v, new best: %v\n", res.Score, res.Changed)
	// Output:
	// ben: rank 2 of 2, new best: true
	// ben: rank 1 (was 2), score 950 (was 800), new best: true
	// ben: score 950, new best: false
}

func ExampleLeaderboard_Top() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "quiz", lb.WithRanking(lb.Competition))
	board.SubmitMany(ctx, map[string]float64{"ana": 30, "ben": 20, "cai": 20, "dee": 10})

	top, _ := board.Top(ctx, 10)
	for _, e := range top {
		fmt.Printf("%d. %s %v\n", e.Rank, e.Member, e.Score)
	}
	// Output:
	// 1. ana 30
	// 2. cai 20
	// 2. ben 20
	// 4. dee 10
}

func ExampleLeaderboard_Rank() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.SubmitMany(ctx, map[string]float64{"ana": 50, "ben": 40, "cai": 30, "dee": 20, "eve": 10})

	st, _ := board.Rank(ctx, "cai")
	fmt.Printf("%s: rank %d of %d, better than %.0f%% of the others\n", st.Member, st.Rank, st.Total, st.Percentile)

	_, err := board.Rank(ctx, "zed")
	fmt.Println(err)
	// Output:
	// cai: rank 3 of 5, better than 50% of the others
	// leaderboard: not ranked: "zed"
}

func ExampleLeaderboard_Around() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.SubmitMany(ctx, map[string]float64{"ana": 50, "ben": 40, "cai": 30, "dee": 20, "eve": 10})

	// At the top, the slice shifts down instead of shrinking.
	for _, member := range []string{"cai", "ana"} {
		around, _ := board.Around(ctx, member, 1)
		fmt.Print(member, ":")
		for _, e := range around {
			fmt.Printf(" %d. %s %v", e.Rank, e.Member, e.Score)
		}
		fmt.Println()
	}
	// Output:
	// cai: 2. ben 40 3. cai 30 4. dee 20
	// ana: 1. ana 50 2. ben 40 3. cai 30
}

func ExampleLeaderboard_Page() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.SubmitMany(ctx, map[string]float64{"ana": 50, "ben": 40, "cai": 30, "dee": 20, "eve": 10})

	for n := 1; n <= 3; n++ {
		p, _ := board.Page(ctx, n, 2)
		fmt.Printf("page %d of %d members:", p.Number, p.Total)
		for _, e := range p.Entries {
			fmt.Printf(" %d. %s %v", e.Rank, e.Member, e.Score)
		}
		fmt.Println()
	}
	// Output:
	// page 1 of 5 members: 1. ana 50 2. ben 40
	// page 2 of 5 members: 3. cai 30 4. dee 20
	// page 3 of 5 members: 5. eve 10
}

func ExampleLeaderboard_Among() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.SubmitMany(ctx, map[string]float64{"ana": 50, "ben": 40, "cai": 30, "dee": 20, "eve": 10})

	friends, _ := board.Among(ctx, []string{"eve", "ben", "stranger"})
	for _, e := range friends {
		fmt.Println(e.Rank, e.Member, e.Score)
	}
	// Output:
	// 1 ben 40
	// 2 eve 10
}

// Windows keep one board per period; At reads an older one while its key
// lives (by default for one more period after it ends).
func ExampleWeekly() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	now := time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC)
	board, _ := lb.New(client, "arena",
		lb.WithPolicy(lb.Accumulate),
		lb.WithWindows(lb.Weekly(), lb.AllTime()),
		lb.WithClock(func() time.Time { return now }),
	)
	res, _ := board.Submit(ctx, "ana", 10)
	fmt.Println(res.Windows[0].Window, res.Windows[0].Period, res.Score)

	now = now.AddDate(0, 0, 4) // Monday 2027-01-04: a new ISO week
	res, _ = board.Submit(ctx, "ana", 5)
	fmt.Println(res.Windows[0].Window, res.Windows[0].Period, res.Score)

	last, _ := board.Rank(ctx, "ana", lb.At(now.AddDate(0, 0, -7)))
	all, _ := board.Rank(ctx, "ana", lb.In(lb.AllTime()))
	fmt.Println("last week:", last.Score, "all time:", all.Score)
	// Output:
	// weekly 2026-W53 10
	// weekly 2027-W01 5
	// last week: 10 all time: 15
}

// A speed-run board: the fastest time ranks first, and of two equal times
// the one set first ranks higher. Run times are kept to the millisecond
// (Decimals 3) up to an hour (MaxScore 3600 seconds); submissions are told
// apart to the second for 79 years from Epoch.
func ExampleEarlierFirst_speedrun() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	tb, err := lb.EarlierFirst(lb.TimeOrder{
		Epoch:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Resolution: time.Second,
		MaxScore:   3600,
		Decimals:   3,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("horizon:", tb.Horizon().Format("2006-01-02"))

	now := time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC)
	board, _ := lb.New(client, "any%", lb.WithOrder(lb.LowestFirst), lb.WithTieBreak(tb),
		lb.WithClock(func() time.Time { return now }))
	board.Submit(ctx, "zoe", 71.25, lb.WithTime(now.Add(-2*time.Hour)))
	board.Submit(ctx, "abe", 71.25, lb.WithTime(now.Add(-1*time.Hour))) // same time, set later
	board.Submit(ctx, "kim", 70.901, lb.WithTime(now.Add(-30*time.Minute)))
	res, _ := board.Submit(ctx, "abe", 71.25) // equal to abe's best: keeps the first time
	fmt.Println("abe improved:", res.Changed)

	top, _ := board.Top(ctx, 3)
	for _, e := range top {
		fmt.Printf("%d. %s %.3f\n", e.Rank, e.Member, e.Score)
	}
	// Output:
	// horizon: 2105-04-15
	// abe improved: false
	// 1. kim 70.901
	// 2. zoe 71.250
	// 3. abe 71.250
}

// A points board where the first to reach a score keeps the higher place,
// and Competition ranks still give equal points an equal rank.
func ExampleEarlierFirst_points() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	tb, _ := lb.EarlierFirst(lb.TimeOrder{
		Epoch:      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Resolution: time.Second,
		MaxScore:   1e6,
	})
	now := time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC)
	for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
		board, _ := lb.New(client, "points-"+ranking.String(), lb.WithTieBreak(tb), lb.WithRanking(ranking),
			lb.WithPolicy(lb.Accumulate), lb.WithClock(func() time.Time { return now }))
		board.Submit(ctx, "ana", 500, lb.WithTime(now.Add(-3*time.Hour)))
		board.Submit(ctx, "ben", 300, lb.WithTime(now.Add(-2*time.Hour)))
		board.Submit(ctx, "ben", 200, lb.WithTime(now.Add(-1*time.Hour))) // ben reaches 500 after ana
		board.Submit(ctx, "cai", 400, lb.WithTime(now.Add(-4*time.Hour)))
		top, _ := board.Top(ctx, 3)
		fmt.Print(ranking, ":")
		for _, e := range top {
			fmt.Printf(" %d. %s %v", e.Rank, e.Member, e.Score)
		}
		fmt.Println()
	}
	// Output:
	// Ordinal: 1. ana 500 2. ben 500 3. cai 400
	// Competition: 1. ana 500 1. ben 500 3. cai 400
}

func ExampleLeaderboard_ProposeBounds() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")

	// 400 players who have not scored yet, and 600 spread over 1..600.
	scores := map[string]float64{}
	for i := range 1000 {
		s := 0.0
		if i >= 400 {
			s = float64(i - 399)
		}
		scores[fmt.Sprintf("p%d", i)] = s
	}
	board.SubmitMany(ctx, scores)

	// Four shards: the zeros keep one of their own, the rest split evenly.
	bounds, _ := board.ProposeBounds(ctx, 4)
	fmt.Println(bounds)
	// Output: [5e-324 194 397]
}

// A friends screen: the friends ranked among themselves (Among), each with
// their display name and world rank beside (Ranks with IncludeData), in two
// calls whatever the number of friends; a friend who never played shows
// with rank 0, and still with a name.
func ExampleLeaderboard_Ranks() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.SubmitMany(ctx, map[string]float64{"u1": 900, "u2": 800, "u3": 700, "u4": 600, "u5": 500})
	for id, name := range map[string]string{"u2": "Ben", "u5": "Eve", "u6": "Fay"} {
		board.SetData(ctx, id, name)
	}

	friends := []string{"u5", "u2", "u6"}
	among, _ := board.Among(ctx, friends)
	world, _ := board.Ranks(ctx, friends, lb.IncludeData())
	of := map[string]lb.Standing{}
	for _, st := range world {
		of[st.Member] = st
	}
	for _, e := range among {
		fmt.Printf("%d. %s %v (world #%d of %d)\n", e.Rank, of[e.Member].Data, e.Score, of[e.Member].Rank, of[e.Member].Total)
	}
	fmt.Printf("%s: world rank %d\n", of["u6"].Data, of["u6"].Rank)
	// Output:
	// 1. Ben 800 (world #2 of 5)
	// 2. Eve 500 (world #5 of 5)
	// Fay: world rank 0
}

// A top-10 screen with display names: the names go with the scores in the
// Submit (WithData) and come back with the entries (IncludeData), in the
// same round trip on an unsharded board.
func ExampleIncludeData() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.Submit(ctx, "u1", 900, lb.WithData(`{"name":"Ana","avatar":7}`))
	board.Submit(ctx, "u2", 800, lb.WithData(`{"name":"Ben","avatar":3}`))
	// u3 gives no data; u1's next score is no new best, but a new name.
	board.Submit(ctx, "u3", 700)
	board.Submit(ctx, "u1", 850, lb.WithData(`{"name":"Ana B.","avatar":7}`))

	top, _ := board.Top(ctx, 10, lb.IncludeData())
	for _, e := range top {
		fmt.Printf("%d. %s %v %s\n", e.Rank, e.Member, e.Score, e.Data)
	}
	// Output:
	// 1. u1 900 {"name":"Ana B.","avatar":7}
	// 2. u2 800 {"name":"Ben","avatar":3}
	// 3. u3 700
}

// Under the podium: ranks 4 to 6 of a board, and the score that reaches
// the best 40% (a reward tier).
func ExampleLeaderboard_Range() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena")
	board.SubmitMany(ctx, map[string]float64{"ana": 90, "ben": 80, "cai": 70, "dee": 60, "eve": 50, "fay": 40, "gus": 30})

	under, _ := board.Range(ctx, 4, 6)
	for _, e := range under {
		fmt.Println(e.Rank, e.Member, e.Score)
	}
	tier, _ := board.Cutoff(ctx, 40) // position ceil(7 * 40 / 100) = 3
	fmt.Printf("best 40%%: %v or more (%s, #%d)\n", tier.Score, tier.Member, tier.Rank)
	// Output:
	// 4 dee 60
	// 5 eve 50
	// 6 fay 40
	// best 40%: 70 or more (cai, #3)
}

// An event board lives for the event: its periods are listed with their
// players, and at its end the whole board is deleted (every period, with a
// store its records too, so that no Rebuild brings it back).
func ExampleLeaderboard_Delete() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	now := time.Date(2026, 12, 31, 18, 0, 0, 0, time.UTC)
	board, _ := lb.New(client, "winter-event", lb.WithWindows(lb.Daily()), lb.WithClock(func() time.Time { return now }))
	board.Submit(ctx, "ana", 40, lb.WithTime(now.Add(-24*time.Hour)))
	board.SubmitMany(ctx, map[string]float64{"ana": 55, "ben": 35})

	periods, _ := board.Periods(ctx)
	for _, p := range periods {
		fmt.Printf("%s: %d players\n", p.ID, p.Members)
	}
	board.Delete(ctx)
	n, _ := board.Count(ctx)
	fmt.Println("after Delete:", n)
	// Output:
	// 2026-12-31: 2 players
	// 2026-12-30: 1 players
	// after Delete: 0
}

// A bracket by score: everyone between 1,000 and 1,999 points, with their
// ranks on the whole board, and how many there are.
func ExampleLeaderboard_Between() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "ladder")
	board.SubmitMany(ctx, map[string]float64{"ana": 2400, "ben": 1999, "cai": 1500, "dee": 1000, "eve": 999, "fay": 1500})

	silver, _ := board.Between(ctx, 1000, 1999, 10)
	for _, e := range silver {
		fmt.Println(e.Rank, e.Member, e.Score)
	}
	n, _ := board.CountBetween(ctx, 1000, 1999)
	fmt.Println("in the silver bracket:", n)
	// Output:
	// 2 ben 1999
	// 3 fay 1500
	// 4 cai 1500
	// 5 dee 1000
	// in the silver bracket: 4
}

// Where would 8,500 place? The place, and the entries either side of it,
// without submitting anything.
func ExampleLeaderboard_AroundScore() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arcade")
	board.SubmitMany(ctx, map[string]float64{"ana": 9900, "ben": 9000, "cai": 8600, "dee": 8500, "eve": 7000})

	place, near, _ := board.AroundScore(ctx, 8500, 1)
	fmt.Println("8500 would place", place)
	for _, e := range near {
		fmt.Println(e.Rank, e.Member, e.Score)
	}
	// Output:
	// 8500 would place 4
	// 3 cai 8600
	// 4 dee 8500
}

// An operator corrects a total on an Accumulate board: Set makes it exactly
// the value given; later submissions add to it as before.
func ExampleLeaderboard_Set() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "kills", lb.WithPolicy(lb.Accumulate))
	board.Submit(ctx, "ana", 40)
	board.Submit(ctx, "ana", 900) // a duplicated event counted by mistake

	board.Set(ctx, "ana", 40)
	res, _ := board.Submit(ctx, "ana", 2)
	fmt.Println("ana:", res.Score)
	// Output:
	// ana: 42
}

// Cheater clean-up: every score above what the game allows leaves the
// current period, in chunks that never stall Redis.
func ExampleLeaderboard_RemoveBetween() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "sprint")
	board.SubmitMany(ctx, map[string]float64{"ana": 980, "ben": 1e9, "cai": 870, "dee": 5e6})

	removed, _ := board.RemoveBetween(ctx, 1000, math.Inf(1))
	top, _ := board.Top(ctx, 10)
	fmt.Println("removed:", removed)
	for _, e := range top {
		fmt.Println(e.Rank, e.Member, e.Score)
	}
	// Output:
	// removed: 2
	// 1 ana 980
	// 2 cai 870
}

// A season-end export: All walks the whole board best first, a chunk of up
// to MaxN entries a round trip, in constant memory, while players go on
// submitting.
func ExampleLeaderboard_All() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "season-7")
	scores := map[string]float64{}
	for i := range 2500 {
		scores[fmt.Sprintf("p%04d", i)] = float64(i % 700)
	}
	board.SubmitMany(ctx, scores)

	total, _ := board.Count(ctx)
	var exported int64
	for e, err := range board.All(ctx) {
		if err != nil {
			fmt.Println("export stopped:", err)
			return
		}
		exported++ // write e to the rewards file here
		if exported%1000 == 0 || exported == total {
			fmt.Printf("exported %d/%d (%.0f%%), last #%d %s\n", exported, total, float64(exported)*100/float64(total), e.Rank, e.Member)
		}
	}
	// Output:
	// exported 1000/2500 (40%), last #1000 p0375
	// exported 2000/2500 (80%), last #2000 p0125
	// exported 2500/2500 (100%), last #2500 p0000
}

// A Batcher folds the submissions of a burst into one write per member:
// here 300 kills scored by three players within the batch's window cost
// Redis one script, and every caller gets its own Result.
func ExampleBatcher() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "kills", lb.WithPolicy(lb.Accumulate))
	batcher, _ := board.NewBatcher(lb.WithBatchWindow(20 * time.Millisecond))
	defer batcher.Close(ctx)

	var wg sync.WaitGroup
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			player := []string{"ana", "ben", "cy"}[i%3]
			if _, err := batcher.Submit(ctx, player, 1); err != nil {
				panic(err)
			}
		}()
	}
	wg.Wait()
	top, _ := board.Top(ctx, 3)
	for _, e := range top {
		fmt.Println(e.Member, e.Score)
	}
	// Output:
	// cy 100
	// ben 100
	// ana 100
}

// WithReplicaReads makes every read fit for a client that sends read-only
// commands to replicas (rueidis's SendToReplicas): here the embedded
// server has none, and the reads run as they would on a replica.
func ExampleWithReplicaReads() {
	client, done := exampleClient() // in production: a client with SendToReplicas
	defer done()
	ctx := context.Background()
	board, _ := lb.New(client, "arena", lb.WithReplicaReads())
	board.SubmitMany(ctx, map[string]float64{"ana": 30, "ben": 20, "cy": 10})
	st, _ := board.Rank(ctx, "ben") // one EVALSHA_RO: rank, score and total from one moment
	fmt.Println(st.Rank, st.Score, st.Total)
	// Output:
	// 2 20 3
}
