package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skiprank/leaderboard"
)

// The move part of the layout report: what moving the sharded board to new
// bounds costs (WithShadowShards, FillShadow, DropShadow), measured on the
// board the report just loaded.

// moveFigures is what measureMove found.
type moveFigures struct {
	bounds []float64 // the shadow's bounds
	// fill is how long FillShadow took; members how many it filled.
	fill    time.Duration
	members int64
	// memory is the growth of used_memory, all nodes, across the fill
	// (once the fill's recent versions expired, on a Cluster).
	memory int64
	// without and with are the Redis CPU µs per Submit, all nodes, of the
	// board alone and of the board keeping its shadow, one pair a round.
	without, with []float64
}

// moveBounds are the board's bounds moved up by half a shard's width, so
// that about half of every shard's members land in another shard.
func (b *bench) moveBounds() []float64 {
	out := make([]float64, len(b.bounds))
	half := float64(b.cfg.scoreMax) / float64(2*b.cfg.shards)
	for i, x := range b.bounds {
		out[i] = x + half
	}
	return out
}

// measureMove fills a shadow of sharded's board at moveBounds, measuring
// the fill's time and memory, then the CPU of random Submits that keep the
// shadow, and drops the shadow again.
func (b *bench) measureMove(ctx context.Context, sharded *layoutBoard, progress console) (moveFigures, error) {
	mv := moveFigures{bounds: b.moveBounds()}
	board, err := leaderboard.New(b.c.rue, b.name, append(b.plainOpts, leaderboard.WithShards(b.bounds...), leaderboard.WithShadowShards(mv.bounds...))...)
	if err != nil {
		return mv, err
	}
	before, err := b.c.nodeMemory(ctx)
	if err != nil {
		return mv, err
	}
	fmt.Fprintf(progress.w, "bench: layout: FillShadow to bounds %v\n", mv.bounds)
	start := time.Now()
	rep, err := board.FillShadow(ctx)
	if err != nil {
		return mv, err
	}
	mv.fill, mv.members = time.Since(start), rep.Members
	shadowed := &layoutBoard{name: b.name, board: board, before: before}
	if err := b.layoutSizes(ctx, shadowed); err != nil {
		return mv, err
	}
	if err := b.settle(ctx, shadowed, progress); err != nil {
		return mv, err
	}
	after, err := b.c.nodeMemory(ctx)
	if err != nil {
		return mv, err
	}
	mv.memory = sum(growth(before, after))
	// The board alone and the board keeping its shadow take turns, round
	// after round, so that both see the same machine.
	alone := &layoutBoard{name: b.name, board: b.board}
	for r := range b.cfg.rounds {
		fmt.Fprintf(progress.w, "bench: layout: round %d: %d random Submits without the shadow, then keeping it\n", r+1, b.cfg.layoutSubmits)
		for _, lb := range []*layoutBoard{alone, shadowed} {
			if err := b.layoutCPU(ctx, lb); err != nil {
				return mv, err
			}
		}
		mv.without = append(mv.without, sumf(alone.cpu)/float64(alone.submits))
		mv.with = append(mv.with, sumf(shadowed.cpu)/float64(shadowed.submits))
	}
	return mv, board.DropShadow(ctx)
}

// writeMove prints the move's figures.
func writeMove(out io.Writer, b *bench, mv moveFigures) {
	n := float64(b.cfg.members)
	fmt.Fprintf(out, "\n**Moving to new bounds** (WithShadowShards(%s), bounds moved by half a shard):\n\n", boundsText(mv.bounds))
	fmt.Fprintf(out, "- FillShadow: %d members in %.2f s, %.0f members/s (from one client, one batch at a time).\n",
		mv.members, mv.fill.Seconds(), float64(mv.members)/mv.fill.Seconds())
	fmt.Fprintf(out, "- The second layout while both exist: %.1f bytes per member (used_memory growth across the fill).\n", float64(mv.memory)/n)
	ratios := make([]string, len(mv.with))
	for r := range mv.with {
		ratios[r] = fmt.Sprintf("%.2fx (%.1f µs against %.1f)", mv.with[r]/mv.without[r], mv.with[r], mv.without[r])
	}
	fmt.Fprintf(out, "- A Submit that keeps the shadow against one that does not, Redis CPU of all nodes (INFO cpu), round by round: %s.\n",
		strings.Join(ratios, ", "))
}

// boundsText shows bounds briefly: all of them up to four, else the first
// and the last.
func boundsText(bounds []float64) string {
	if len(bounds) <= 4 {
		return fmt.Sprint(bounds)
	}
	return fmt.Sprintf("%v, ... %v (%d bounds)", bounds[0], bounds[len(bounds)-1], len(bounds))
}
