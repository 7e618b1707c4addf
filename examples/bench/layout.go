package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"golang.org/x/sync/errgroup"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisnode"
)

// The layout report (-layout) answers where a sharded board's bytes and
// writes go, beside the same members in an unsharded board: it loads both,
// sizes every key of each (MEMORY USAGE ... SAMPLES 0, exact) by structure
// and by node, and drives the same random Submits through each while it
// reads every node's CPU (INFO cpu). Not INFO commandstats: a command a
// script runs is counted there on its own and again inside the script's
// EVALSHA. On a Cluster the figures show how evenly the board spreads over
// the nodes.

// layoutBoard is one of the two boards the report compares.
type layoutBoard struct {
	name  string // the board's name
	board *leaderboard.Leaderboard
	// memory is the growth of used_memory per node across its load (after
	// the shards' recent versions expired: see settle).
	memory []int64
	// before is used_memory per node before its load.
	before []int64
	// transient is the bytes the shards' recent versions held right after
	// the load, before they expired.
	transient int64
	// keys sizes its keys by structure and node.
	keys keySizes
	// cpu is the CPU µs per node across the Submits.
	cpu     []float64
	submits int
}

// keySizes is the MEMORY USAGE of a board's keys, by structure and node.
type keySizes struct {
	bytes map[string]int64 // structure -> bytes
	count map[string]int   // structure -> keys
	node  []int64          // node -> bytes
}

// runLayout runs the layout report and writes it to out.
func runLayout(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	if b.c.mini {
		return fmt.Errorf("-layout reads MEMORY USAGE and INFO cpu, which miniredis lacks: set REDIS_URL")
	}
	plain, err := leaderboard.New(b.c.rue, b.name+"-plain", b.plainOpts...)
	if err != nil {
		return err
	}
	boards := []*layoutBoard{{name: b.name + "-plain", board: plain}, {name: b.name, board: b.board}}
	for _, lb := range boards {
		if err := b.layoutLoad(ctx, lb, progress); err != nil {
			return err
		}
	}
	for _, lb := range boards {
		if err := b.layoutSizes(ctx, lb); err != nil {
			return err
		}
	}
	if err := b.settle(ctx, boards[1], progress); err != nil {
		return err
	}
	for _, lb := range boards {
		fmt.Fprintf(progress.w, "bench: layout: %d random Submits to %s\n", b.cfg.layoutSubmits, lb.name)
		if err := b.layoutCPU(ctx, lb); err != nil {
			return err
		}
	}
	mv, err := b.measureMove(ctx, boards[1], progress)
	if err != nil {
		return err
	}
	writeLayout(out, b, env, boards[0], boards[1])
	writeMove(out, b, mv)
	return nil
}

// layoutLoad loads the members into lb, measuring each node's memory.
func (b *bench) layoutLoad(ctx context.Context, lb *layoutBoard, progress console) error {
	before, err := b.c.nodeMemory(ctx)
	if err != nil {
		return err
	}
	_, err = b.loadWith(ctx, progress, "SubmitMany into "+lb.name, func(ctx context.Context, lo, hi int) error {
		batch := make(map[string]float64, hi-lo)
		for i := lo; i < hi; i++ {
			batch[member(i)] = b.loadScore(i)
		}
		if err := lb.board.SubmitMany(ctx, batch); err != nil {
			return err
		}
		return b.loadData(ctx, lb.board, false, lo, hi)
	})
	if err != nil {
		return err
	}
	after, err := b.c.nodeMemory(ctx)
	if err != nil {
		return err
	}
	lb.before = before
	lb.memory = growth(before, after)
	return nil
}

func growth(before, after []int64) []int64 {
	out := make([]int64, len(after))
	for i := range after {
		out[i] = after[i] - before[i]
	}
	return out
}

// recentKind is the structure of the shards' recent versions (keyKind).
const recentKind = "shard recent versions (hashes)"

// settle waits, on a Cluster, until the shards' recent versions that the
// load wrote have expired (a minute at most: see the SDK's versions.lua),
// remembering their bytes as transient, then sizes lb and its memory
// growth again: the steady state of a board that is not being written.
func (b *bench) settle(ctx context.Context, lb *layoutBoard, progress console) error {
	if lb.keys.count[recentKind] == 0 {
		return nil
	}
	lb.transient = lb.keys.bytes[recentKind]
	fmt.Fprintf(progress.w, "bench: layout: waiting up to 90 s for the shards' recent versions to expire\n")
	for range 18 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
		if err := b.layoutSizes(ctx, lb); err != nil {
			return err
		}
		if lb.keys.count[recentKind] == 0 {
			after, err := b.c.nodeMemory(ctx)
			if err != nil {
				return err
			}
			lb.memory = growth(lb.before, after)
			return nil
		}
	}
	return fmt.Errorf("the shards' recent versions of %s did not expire within 90 s", lb.name)
}

// layoutSizes sizes every key of lb on every node.
func (b *bench) layoutSizes(ctx context.Context, lb *layoutBoard) error {
	nodes := b.c.nodes()
	lb.keys = keySizes{bytes: map[string]int64{}, count: map[string]int{}, node: make([]int64, len(nodes))}
	pattern := redisnode.GlobEscape(b.cfg.prefix+":{"+lb.name) + "[}#]*"
	for i, node := range nodes {
		err := redisnode.Scan(ctx, node, pattern, func(keys []string) error {
			for _, key := range keys {
				if err := sizeKey(ctx, node, key, lb, i); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sizeKey adds key's size on node i (MEMORY USAGE) to lb's sizes.
func sizeKey(ctx context.Context, node rueidis.Client, key string, lb *layoutBoard, i int) error {
	n, err := node.Do(ctx, node.B().MemoryUsage().Key(key).Samples(0).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return nil // expired since SCAN listed it: a piece of recent versions
	}
	if err != nil {
		return fmt.Errorf("MEMORY USAGE: %w", err)
	}
	kind := keyKind(key)
	lb.keys.bytes[kind] += n
	lb.keys.count[kind]++
	lb.keys.node[i] += n
	return nil
}

// keyKind names the structure a key of a board holds, from the SDK's key
// layout (internal/keys): a shard's hash tag holds "#s<i>.<layout>~", a partition's
// "#p~"; on a Cluster a partition group's version clock ends ":clock" and a
// piece of a shard's recent versions ":v0:<n>" or ":v1:<n>".
func keyKind(key string) string {
	tag := key[strings.IndexByte(key, '{')+1 : strings.IndexByte(key, '}')]
	rest := key[strings.IndexByte(key, '}')+1:]
	switch {
	case strings.HasSuffix(rest, ":ids"):
		return "ids"
	case strings.HasSuffix(rest, ":data"):
		return "member data (hashes)"
	case strings.HasSuffix(rest, ":marker"):
		return "marker"
	case strings.HasSuffix(rest, ":clock"):
		return "partition clocks"
	case strings.Contains(tag, "#p~"):
		return "partitions (hashes)"
	case strings.Contains(tag, "#s") && (strings.Contains(rest, ":v0:") || strings.Contains(rest, ":v1:")):
		return recentKind
	case strings.Contains(tag, "#s"):
		return "shards (sorted sets)"
	}
	return "period (sorted set)"
}

// layoutCPU drives cfg.layoutSubmits random Submits through lb from the
// highest concurrency asked for, and reads each node's CPU across them.
func (b *bench) layoutCPU(ctx context.Context, lb *layoutBoard) error {
	cpu0, err := b.c.nodeCPU(ctx)
	if err != nil {
		return err
	}
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range slices.Max(b.cfg.concurrency) {
		g.Go(func() error {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.cfg.layoutSubmits) {
					return nil
				}
				k := int(i*7919) % poolSize
				if _, err := lb.board.Submit(gctx, b.members[k], b.scores[(k+int(i))%poolSize]); err != nil {
					return err
				}
			}
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	cpu1, err := b.c.nodeCPU(ctx)
	if err != nil {
		return err
	}
	lb.cpu, lb.submits = make([]float64, len(cpu1)), b.cfg.layoutSubmits
	for i := range cpu1 {
		lb.cpu[i] = (cpu1[i] - cpu0[i]) * 1e6
	}
	return nil
}

// nodeMemory is used_memory per node, once no node has lazy frees pending.
func (c *conn) nodeMemory(ctx context.Context) ([]int64, error) {
	c.usedMemory(ctx) // waits out pending lazy frees
	ms, err := c.info(ctx, "memory")
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ms))
	for i, m := range ms {
		if out[i], err = strconv.ParseInt(m["used_memory"], 10, 64); err != nil {
			return nil, fmt.Errorf("INFO memory has no used_memory")
		}
	}
	return out, nil
}

// nodeCPU is, per node, the CPU seconds used (INFO cpu).
func (c *conn) nodeCPU(ctx context.Context) ([]float64, error) {
	cs, err := c.info(ctx, "cpu")
	if err != nil {
		return nil, err
	}
	cpu := make([]float64, len(cs))
	for i, m := range cs {
		sys, err1 := strconv.ParseFloat(m["used_cpu_sys"], 64)
		user, err2 := strconv.ParseFloat(m["used_cpu_user"], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("INFO cpu has no used_cpu_sys or used_cpu_user")
		}
		cpu[i] = sys + user
	}
	return cpu, nil
}

// writeLayout prints the report.
func writeLayout(out io.Writer, b *bench, env environment, plain, sharded *layoutBoard) {
	n := float64(b.cfg.members)
	var w strings.Builder
	fmt.Fprintf(&w, "**Layout** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), b.cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs, %s; %s\n- Board: %s; the same members unsharded beside it\n\n", env.cpus, env.goVersion, env.redis, b.describe())
	w.WriteString("| structure | keys | bytes per member | share of the board |\n|---|---|---|---|\n")
	for _, lb := range []*layoutBoard{plain, sharded} {
		total := sum(lb.keys.node)
		kinds := make([]string, 0, len(lb.keys.bytes))
		for k := range lb.keys.bytes {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		for _, k := range kinds {
			fmt.Fprintf(&w, "| %s: %s | %d | %.1f | %.0f%% |\n", boardLabel(lb, plain), k, lb.keys.count[k],
				float64(lb.keys.bytes[k])/n, 100*float64(lb.keys.bytes[k])/float64(total))
		}
		fmt.Fprintf(&w, "| %s: **all keys** (MEMORY USAGE) | | **%.1f** | |\n", boardLabel(lb, plain), float64(total)/n)
		fmt.Fprintf(&w, "| %s: used_memory growth | | %.1f | |\n", boardLabel(lb, plain), float64(sum(lb.memory))/n)
	}
	fmt.Fprintf(&w, "\nSharded ÷ unsharded bytes per member: %.2fx (MEMORY USAGE), %.2fx (used_memory).\n\n",
		float64(sum(sharded.keys.node))/float64(sum(plain.keys.node)), float64(sum(sharded.memory))/float64(sum(plain.memory)))
	if sharded.transient > 0 {
		fmt.Fprintf(&w, "Sized once the shards' recent versions had expired. Right after the load they held %.1f bytes per member more: "+
			"a write's version is kept for 30 to 60 s, so they cost that much per member written in the last minute.\n\n", float64(sharded.transient)/n)
	}
	writeNodes(&w, b, plain, sharded)
	fmt.Fprint(out, w.String())
}

// writeNodes prints each node's share of the bytes and of the Submits' cost.
func writeNodes(w *strings.Builder, b *bench, plain, sharded *layoutBoard) {
	addrs := b.c.nodeAddrs()
	w.WriteString("| node | unsharded: bytes | CPU µs/Submit | sharded: bytes | CPU µs/Submit |\n|---|---|---|---|---|\n")
	for i, a := range addrs {
		fmt.Fprintf(w, "| %s | %.0f%% | %.1f (%.0f%%) | %.0f%% | %.1f (%.0f%%) |\n", a,
			share(plain.keys.node, i), plain.cpu[i]/float64(plain.submits), sharef(plain.cpu, i),
			share(sharded.keys.node, i), sharded.cpu[i]/float64(sharded.submits), sharef(sharded.cpu, i))
	}
	pc, sc := sumf(plain.cpu)/float64(plain.submits), sumf(sharded.cpu)/float64(sharded.submits)
	fmt.Fprintf(w, "| **all** | | %.1f | | %.1f |\n\n", pc, sc)
	fmt.Fprintf(w, "A sharded Submit costs Redis %.2fx an unsharded one (INFO cpu, all nodes: %.1f µs against %.1f).\n", sc/pc, sc, pc)
}

func boardLabel(lb, plain *layoutBoard) string {
	if lb == plain {
		return "unsharded"
	}
	return "sharded"
}

func sum(xs []int64) int64 {
	var s int64
	for _, x := range xs {
		s += x
	}
	return s
}

func sumf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

func share(xs []int64, i int) float64 {
	if t := sum(xs); t != 0 {
		return 100 * float64(xs[i]) / float64(t)
	}
	return 0
}

func sharef(xs []float64, i int) float64 {
	if t := sumf(xs); t != 0 {
		return 100 * xs[i] / t
	}
	return 0
}
