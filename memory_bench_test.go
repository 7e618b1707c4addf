package leaderboard

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// BenchmarkMemory measures what a board costs Redis per member, structure
// by structure, with MEMORY USAGE (SAMPLES 0: every element counted) over
// the board's keys, on a real Redis. Members are named like
// "player:99999"; WithID ids are 36-byte UUID-like strings. One iteration
// is the whole measurement:
//
//	go test -run '^$' -bench Memory -benchtime 1x .
func BenchmarkMemory(b *testing.B) {
	const members = 100_000
	cases := []struct {
		name string
		opts []Option
		ids  bool // submit one by one, each with its own WithID id
	}{
		{name: "alltime", opts: nil},
		{name: "4-windows", opts: []Option{WithWindows(AllTime(), Daily(), Weekly(), Monthly())}},
		{name: "with-ids", opts: nil, ids: true},
		{name: "shards-8", opts: []Option{WithShards(1e5, 2e5, 3e5, 4e5, 5e5, 6e5, 7e5)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			be := testredis.Real(b)
			ctx := context.Background()
			for b.Loop() {
				name := be.BoardName(b)
				board, err := New(be.Client.Client, name, c.opts...)
				if err != nil {
					b.Fatal(err)
				}
				score := func(i int) float64 { return float64(i * 7919 % 800_000) }
				if c.ids {
					loadWithIDs(b, board, members, score)
				} else {
					batch := make(map[string]float64, 1000)
					for i := range members {
						batch["player:"+strconv.Itoa(i)] = score(i)
						if len(batch) == 1000 {
							if err := board.SubmitMany(ctx, batch); err != nil {
								b.Fatal(err)
							}
							clear(batch)
						}
					}
				}
				var total, sets int64
				for _, k := range be.Keys(b, "*{"+name+"*") {
					n, err := be.Client.Do(ctx, be.Client.B().Arbitrary("MEMORY", "USAGE").Keys(k).Args("SAMPLES", "0").Build()).AsInt64()
					if err != nil {
						b.Fatal(err)
					}
					total += n
					if typ, _ := be.Client.Do(ctx, be.Client.B().Type().Key(k).Build()).ToString(); typ == "zset" {
						sets++
					}
				}
				b.ReportMetric(float64(total)/members, "B/member")
				b.ReportMetric(float64(sets), "zsets")
				be.Wipe(b, name)
			}
		})
	}
}

// loadWithIDs submits n members one by one from 16 goroutines, each
// submission with an id of its own.
func loadWithIDs(b *testing.B, board *Leaderboard, n int, score func(int) float64) {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 16 {
				id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
				if _, err := board.Submit(ctx, "player:"+strconv.Itoa(i), score(i), WithID(id)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}
