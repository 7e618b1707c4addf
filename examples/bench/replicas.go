package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// The replica report (-replicas ADDR,ADDR): the board read with
// WithReplicaReads through a client that sends read-only commands to the
// standalone replicas given (rueidis's ReplicaAddress and SendToReplicas),
// -d a round at the highest -c, each call one of Top(10), Rank, Around(5)
// and Page (20 deep), in -rounds rounds; Redis's CPU on the primary and on
// each replica (INFO cpu, a client of its own per node), and the
// primary's share of it.

// replicaRound is one round: reads, time, and the CPU of each node.
type replicaRound struct {
	reads    int64
	elapsed  time.Duration
	primary  float64   // CPU seconds
	replicas []float64 // CPU seconds, one a replica
}

func (r replicaRound) share() float64 {
	total := r.primary
	for _, c := range r.replicas {
		total += c
	}
	return r.primary / max(total, 1e-9)
}

// runReplicas loads the members, waits for the replicas, reads in rounds
// and writes the report to out.
func runReplicas(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	if env.cluster {
		return fmt.Errorf("-replicas takes a standalone REDIS_URL and its replicas")
	}
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	opt := b.c.opt
	opt.Standalone.ReplicaAddress = b.cfg.replicas
	opt.SendToReplicas = func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() }
	reader, err := rueidis.NewClient(opt)
	if err != nil {
		return fmt.Errorf("a replica-reading client: %w", err)
	}
	defer reader.Close()
	board, err := leaderboard.New(reader, b.name, append(slices.Clone(b.opts), leaderboard.WithReplicaReads())...)
	if err != nil {
		return err
	}
	nodes := []rueidis.Client{}
	for _, addr := range append([]string{opt.InitAddress[0]}, b.cfg.replicas...) {
		o := b.c.opt
		o.InitAddress, o.ForceSingleClient = []string{addr}, true
		c, err := rueidis.NewClient(o)
		if err != nil {
			return fmt.Errorf("node %s: %w", addr, err)
		}
		defer c.Close()
		nodes = append(nodes, c)
	}
	if err := waitReplicas(ctx, b, nodes[1:], progress); err != nil {
		return err
	}
	conc := slices.Max(b.cfg.concurrency)
	var rounds []replicaRound
	for r := range b.cfg.rounds {
		fmt.Fprintf(progress.w, "bench: replicas: round %d/%d\n", r+1, b.cfg.rounds)
		rd, err := b.replicaRound(ctx, board, nodes, conc)
		if err != nil {
			return err
		}
		rounds = append(rounds, rd)
	}
	writeReplicas(out, b, env, ld, conc, rounds)
	return nil
}

// waitReplicas waits until every replica holds the board's members.
func waitReplicas(ctx context.Context, b *bench, replicas []rueidis.Client, progress console) error {
	key := b.raw[0].key // loaded with the board, in the same pass
	want, err := b.c.rue.Do(ctx, b.c.rue.B().Zcard().Key(key).Build()).AsInt64()
	if err != nil {
		return err
	}
	for i, c := range replicas {
		for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
			n, err := c.Do(ctx, c.B().Zcard().Key(key).Build()).AsInt64()
			if err == nil && n == want {
				break
			}
			if time.Since(start) > time.Minute {
				return fmt.Errorf("replica %d (%s) holds %d of %d members after a minute: is it a replica of REDIS_URL's server?", i+1, b.cfg.replicas[i], n, want)
			}
		}
	}
	fmt.Fprintf(progress.w, "bench: replicas: %d replica(s) hold the board\n", len(replicas))
	return nil
}

// nodeCPU is one node's used_cpu_sys + used_cpu_user.
func nodeCPU(ctx context.Context, c rueidis.Client) (float64, error) {
	info, err := c.Do(ctx, c.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			var f float64
			fmt.Sscanf(v, "%g", &f)
			sum += f
		}
	}
	return sum, nil
}

// replicaRound reads for -d from conc goroutines (drive), the CPU of
// every node read around it.
func (b *bench) replicaRound(ctx context.Context, board *leaderboard.Leaderboard, nodes []rueidis.Client, conc int) (replicaRound, error) {
	cpu := func() ([]float64, error) {
		out := make([]float64, len(nodes))
		for i, c := range nodes {
			var err error
			if out[i], err = nodeCPU(ctx, c); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	c0, err := cpu()
	if err != nil {
		return replicaRound{}, err
	}
	lat, elapsed, err := drive(ctx, impl{call: func(ctx context.Context, w *worker) error { return b.replicaRead(ctx, board, w.r) }}, conc, b.cfg.duration, true)
	rd := replicaRound{reads: int64(len(lat)), elapsed: elapsed}
	if err != nil {
		return rd, err
	}
	c1, err := cpu()
	if err != nil {
		return rd, err
	}
	rd.primary = c1[0] - c0[0]
	for i := 1; i < len(nodes); i++ {
		rd.replicas = append(rd.replicas, c1[i]-c0[i])
	}
	return rd, nil
}

// replicaRead is one read of the mix.
func (b *bench) replicaRead(ctx context.Context, board *leaderboard.Leaderboard, r *rand.Rand) error {
	m := member(r.IntN(b.cfg.members))
	var err error
	switch r.IntN(4) {
	case 0:
		_, err = board.Top(ctx, 10)
	case 1:
		_, err = board.Rank(ctx, m)
	case 2:
		_, err = board.Around(ctx, m, 5)
	default:
		_, err = board.Page(ctx, 1+r.IntN(max(1, b.cfg.members/pageSize)), pageSize)
	}
	return err
}

// writeReplicas writes runReplicas's report.
func writeReplicas(out io.Writer, b *bench, env environment, ld loadReport, conc int, rounds []replicaRound) {
	var w strings.Builder
	cfg := b.cfg
	fmt.Fprintf(&w, "**Replica reads** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s, %d replica(s)\n- Board: %s; read with WithReplicaReads through a client with SendToReplicas(IsReadOnly)\n",
		env.cpus, env.procs, env.goVersion, env.redis, len(cfg.replicas), b.describe())
	(&report{cfg: cfg, load: ld}).writeLoad(&w, true)
	fmt.Fprintf(&w, "- Each round: %v of reads at c=%d, each one of Top(10), Rank, Around(5), Page of %d, drawn at random; INFO cpu of each node around it\n\n", cfg.duration, conc, pageSize)
	w.WriteString("| round | reads/s | Redis CPU s: primary | replicas | primary's share |\n|---|---|---|---|---|\n")
	var shares []float64
	for i, rd := range rounds {
		reps := make([]string, len(rd.replicas))
		for k, c := range rd.replicas {
			reps[k] = fmt.Sprintf("%.3f", c)
		}
		fmt.Fprintf(&w, "| %d | %s | %.3f | %s | %.2f%% |\n", i+1, thousands(float64(rd.reads)/rd.elapsed.Seconds()), rd.primary, strings.Join(reps, ", "), 100*rd.share())
		shares = append(shares, rd.share())
	}
	t := target{what: "the primary's share of the Redis CPU a read-only load costs under 10%", vals: shares, meets: under(0.10),
		show: func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }}
	fmt.Fprintf(&w, "\n**Target** (median of %d round(s), lowest..highest): %s: %s, %s.\n", len(rounds), t.what, t.measured(), t.verdict())
	fmt.Fprint(out, w.String())
}
