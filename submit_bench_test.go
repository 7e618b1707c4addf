package leaderboard

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// BenchmarkSubmitPaths compares the two ways Submit can run KeepBest under
// Ordinal ranks on four windows, on a real Redis: the MULTI/EXEC of plain
// commands that Submit uses, and the Lua script it uses where it must
// branch. It is the measurement behind choosing the transaction.
//
//	go test -run '^$' -bench SubmitPaths -benchtime 3s .
func BenchmarkSubmitPaths(b *testing.B) {
	be := testredis.Real(b)
	board, err := New(be.Client.Client, be.BoardName(b), WithWindows(AllTime(), Daily(), Weekly(), Monthly()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const members = 100_000
	load := make(map[string]float64, 1000)
	for i := 0; i < members; i++ {
		load["player:"+strconv.Itoa(i)] = float64(i % 5000)
		if len(load) == 1000 {
			if err := board.SubmitMany(ctx, load); err != nil {
				b.Fatal(err)
			}
			clear(load)
		}
	}
	plain := baseBackend(board.be).(*plainBackend)
	paths := map[string]func(context.Context, submission, []target, []int, []WindowResult) error{
		"tx": func(ctx context.Context, sub submission, live []target, where []int, out []WindowResult) error {
			return plain.submitTx(ctx, sub, live, where, out, nil)
		},
		"script": func(ctx context.Context, sub submission, live []target, where []int, out []WindowResult) error {
			_, err := plain.submitScript(ctx, sub, live, where, out, nil)
			return err
		},
	}
	for _, name := range []string{"tx", "script"} {
		run := paths[name]
		b.Run(name, func(b *testing.B) {
			var n atomic.Int64
			b.SetParallelism(32)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					member := "player:" + strconv.FormatInt(i%members, 10)
					live := make([]target, len(board.windows))
					where := make([]int, len(board.windows))
					for j, w := range board.windows {
						live[j], _ = board.target(w, time.Now())
						where[j] = j
					}
					out := make([]WindowResult, len(live))
					sub := submission{member: member, score: float64(i % 7000), stored: float64(i % 7000)}
					if err := run(ctx, sub, live, where, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
