package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
)

// config is what the flags ask for.
type config struct {
	redisURL        string
	members         int
	windows         []string
	policy          leaderboard.Policy
	order           leaderboard.Order
	ranking         leaderboard.RankMode
	shards          int
	tieBreak        string
	concurrency     []int
	duration        time.Duration
	rounds          int
	ops             []string
	format          string
	prefix          string
	scoreMax        int
	loadConcurrency int
	keep            bool
	cpuProfile      string
	commandStats    bool
	compare         bool
	// noAutoPipelining builds the rueidis client with DisableAutoPipelining.
	noAutoPipelining bool
	seed             uint64
	// name is the board's name; empty for a random one (tests set it).
	name string
	// layout asks for the layout report (layout.go) instead of the
	// operations, with layoutSubmits Submits per board.
	layout        bool
	layoutSubmits int
	// data is how many bytes of data each loaded member gets (data.go);
	// 0 for none.
	data int
	// walk asks for the All walk (walk.go) instead of the operations.
	walk bool
	// removeBetween asks for the RemoveBetween stall report (stall.go)
	// instead of the operations, removing remove members a round.
	removeBetween bool
	// delete asks for the Delete stall report (delete.go).
	delete bool
	remove int
	// batch asks for the coalescing report (coalesce.go): bursts of burst
	// Submits to batchMembers members, through a Batcher of batchWindow
	// and batchSize, and plain.
	batch        bool
	burst        int
	batchMembers int
	batchWindow  time.Duration
	batchSize    int
	// hot asks for the hot top report (hottop.go): a writer of hotRate
	// submissions a second, hotTrials staleness trials a round.
	hot       bool
	hotRate   int
	hotTrials int
	// replicas asks for the replica report (replicas.go): the addresses
	// of the standalone replicas of REDIS_URL's server.
	replicas []string
	// args are the flags that reproduce the run (see reproducing): every
	// flag whose value is not its default, but those that pick only where
	// the output goes or what is left after the run.
	args []string
}

// commandLine is the command that reproduces the run, as every report
// prints it.
func (c config) commandLine() string {
	return strings.Join(append([]string{"go run ./examples/bench"}, c.args...), " ")
}

// outputOnly are the flags a report's command line leaves out: they pick
// the report's format, a profile's file or whether the keys stay, and the
// figures do not depend on them.
var outputOnly = map[string]bool{"format": true, "cpuprofile": true, "keep": true}

// allOps is every operation the tool knows, in the order it measures them.
var allOps = []string{"submit", "submit-many", "top", "rank", "around", "page", "page-deep", "among", "count",
	"range", "between", "count-between", "around-score", "cutoff", "set", "top-data", "rank-data"}

// minDuration is the shortest -d: a call on a big board under load can
// take tens of milliseconds, and a round that finishes no call has no
// figure.
const minDuration = 100 * time.Millisecond

// Without REDIS_URL the tool runs on miniredis, whose figures mean nothing:
// smaller defaults make that run a check that the tool works, in seconds.
const (
	miniMembers  = 10_000
	miniDuration = 200 * time.Millisecond
)

// minVerdictRounds is how many rounds a target's verdict needs: one round's
// ratio moves by half its value from one run to the next on a busy machine.
const minVerdictRounds = 3

// listFlags are the flags given as text and checked after parsing.
type listFlags struct {
	windows, policy, order, ranking, conc, ops, tieBreak string
}

// replicasFlag is -replicas: host:port addresses, comma-separated.
type replicasFlag struct{ addrs *[]string }

func (f replicasFlag) String() string {
	if f.addrs == nil {
		return ""
	}
	return strings.Join(*f.addrs, ",")
}

func (f replicasFlag) Set(v string) error {
	var addrs []string
	for _, a := range strings.Split(v, ",") {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("%q is not a host:port address", a)
		}
		if slices.Contains(addrs, a) {
			return fmt.Errorf("%q twice", a)
		}
		addrs = append(addrs, a)
	}
	*f.addrs = addrs
	return nil
}

// parseFlags reads the command line, and REDIS_URL through getenv. It
// returns flag.ErrHelp for -h, after printing the usage to stderr.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var cfg config
	var lists listFlags
	fs := flagSet(&cfg, &lists, stderr)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	cfg.redisURL = getenv("REDIS_URL")
	if cfg.redisURL == "" {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["members"] {
			cfg.members = miniMembers
		}
		if !set["d"] {
			cfg.duration = miniDuration
		}
	}
	if !isSet(fs, "remove") {
		cfg.remove = min(defaultRemove, cfg.members/10)
	}
	for _, check := range []func(*config, listFlags) error{checkBoard, checkRun, checkLimits} {
		if err := check(&cfg, lists); err != nil {
			return cfg, err
		}
	}
	cfg.args = reproducing(fs, &lists, cfg)
	return cfg, nil
}

// reproducing lists the flags that reproduce the run: every flag whose
// value, once the defaults without REDIS_URL are applied, is not its
// default, but the outputOnly ones and a -remove left to follow -members;
// the lists as read (-windows 4 as its four windows).
func reproducing(fs *flag.FlagSet, lists *listFlags, cfg config) []string {
	join := func(xs []int) string {
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = strconv.Itoa(x)
		}
		return strings.Join(s, ",")
	}
	lists.windows, lists.conc = strings.Join(cfg.windows, ","), join(cfg.concurrency)
	if lists.ops != "all" {
		lists.ops = strings.Join(cfg.ops, ",")
	}
	var args []string
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		if outputOnly[f.Name] || v == f.DefValue || f.Name == "remove" && !isSet(fs, "remove") {
			return
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if v == "true" {
				args = append(args, "-"+f.Name)
			} else {
				args = append(args, "-"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "-"+f.Name, shellQuote(v))
	})
	return args
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.:/_+=@%-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func flagSet(cfg *config, lists *listFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs) }
	fs.IntVar(&cfg.members, "members", 1_000_000, fmt.Sprintf("members loaded before measuring (without REDIS_URL: %d)", miniMembers))
	fs.StringVar(&lists.windows, "windows", "alltime", `windows, comma-separated: alltime, daily, weekly, monthly; or "4" for all four (the first is read)`)
	fs.StringVar(&lists.policy, "policy", "keepbest", "keepbest, replace or accumulate")
	fs.StringVar(&lists.order, "order", "highest", "highest or lowest first")
	fs.StringVar(&lists.ranking, "ranking", "ordinal", "ordinal or competition (WithRanking; the raw versions read ordinal ranks either way)")
	fs.IntVar(&cfg.shards, "shards", 0, "score-range shards (WithShards with shards-1 even bounds over [0, score-max)); 0: unsharded")
	fs.StringVar(&lists.tieBreak, "tiebreak", "none", "none, earlier or later (EarlierFirst/LaterFirst, 1 s resolution)")
	fs.StringVar(&lists.conc, "c", "1,64", "concurrency levels: goroutines calling at once")
	fs.DurationVar(&cfg.duration, "d", 2*time.Second, fmt.Sprintf("how long each implementation is measured in each round (without REDIS_URL: %v)", miniDuration))
	fs.IntVar(&cfg.rounds, "rounds", minVerdictRounds, fmt.Sprintf("rounds per figure: each round measures every implementation of an operation once, one after the other; a target's verdict needs %d or more", minVerdictRounds))
	fs.StringVar(&lists.ops, "ops", "all", "operations, comma-separated: "+strings.Join(allOps, ", ")+"; or all")
	fs.StringVar(&cfg.format, "format", "text", "text or md (Markdown tables for BENCHMARKS.md), for the operations; the reports of -layout, -walk, -remove-between, -delete, -batch, -hot and -replicas are Markdown only")
	fs.StringVar(&cfg.prefix, "prefix", "lbbench", "key prefix of the boards it writes")
	fs.IntVar(&cfg.scoreMax, "score-max", 1_000_000, "scores are whole numbers in [0, score-max)")
	fs.IntVar(&cfg.loadConcurrency, "load-c", 4, "SubmitMany or ZADD calls in flight while loading")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the keys it wrote")
	fs.BoolVar(&cfg.noAutoPipelining, "no-auto-pipelining", false, "build the rueidis client with DisableAutoPipelining: each call takes a pooled connection of its own, as go-redis does, instead of sharing one pipelined connection (lower latency at low concurrency, lower throughput at high)")
	fs.BoolVar(&cfg.compare, "compare", true, "measure the raw rueidis and go-redis versions beside the SDK")
	fs.BoolVar(&cfg.commandStats, "commandstats", false, "also report, per figure, the server time of each command per call (INFO commandstats; the INFO calls themselves show up as info); with -walk, per 1,000 entries walked")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write this process's CPU profile of the measured part to this file")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the members' scores and the operations' arguments")
	fs.BoolVar(&cfg.layout, "layout", false, "instead of the operations, report where a sharded board's bytes and Submits go (with -shards): it loads the members into the sharded board and into an unsharded one, sizes their keys by structure and node (MEMORY USAGE), and reads each node's CPU across -layout-submits random Submits to each, at the highest -c; then it measures a move of the sharded board to new bounds (FillShadow's time, the second layout's memory, the CPU of Submits that keep it)")
	fs.IntVar(&cfg.layoutSubmits, "layout-submits", 20_000, "random Submits per board in the -layout report")
	fs.BoolVar(&cfg.walk, "walk", false, "instead of the operations, walk the whole board with All beside a raw ZRANGE walk in chunks of 1,000 by rank offsets, -rounds times each, and report entries/s, the ratio and the Go heap in use during each walk")
	fs.BoolVar(&cfg.removeBetween, "remove-between", false, "instead of the operations, time RemoveBetween of the -remove best-scored members beside one ZREMRANGEBYSCORE of the same members in the raw set, -rounds times each (the members put back between rounds), and report the longest Redis stall during each: a PING every 1 ms from a connection of its own per node, the latency monitor (latency-monitor-threshold 1, restored afterwards) and the longest command on the board's keys (SLOWLOG, its settings restored afterwards)")
	fs.BoolVar(&cfg.delete, "delete", false, "instead of the operations, time Delete of the whole board beside one DEL of the raw set holding the same members, -rounds times (both loaded again between rounds), and report the longest Redis stall during each, measured as -remove-between measures it")
	fs.BoolVar(&cfg.batch, "batch", false, "instead of the operations, the coalescing report: the highest -c goroutines each send bursts of -burst Submits at once to -batch-members members and wait for them, -d through a Batcher, then -d as plain Submits, -rounds times; submissions/s, each submission's latency, commands sent, Redis CPU and this process's CPU per submission")
	fs.IntVar(&cfg.burst, "burst", 100, "Submits each goroutine of -batch sends at once")
	fs.IntVar(&cfg.batchMembers, "batch-members", 1000, "members -batch submits to")
	fs.DurationVar(&cfg.batchWindow, "batch-window", 100*time.Millisecond, "the Batcher's WithBatchWindow in -batch")
	fs.IntVar(&cfg.batchSize, "batch-size", 512, "the Batcher's WithBatchSize in -batch")
	fs.BoolVar(&cfg.hot, "hot", false, "instead of the operations, the hot top report: Top(10) at the highest -c without and with WithHotTop(10) (a client of its own with client-side caching) while a writer submits -hot-rate random scores a second, Submits below the top without and with it, and -hot-trials staleness trials a round")
	fs.IntVar(&cfg.hotRate, "hot-rate", 2000, "submissions a second the writer of -hot sends")
	fs.IntVar(&cfg.hotTrials, "hot-trials", 200, "staleness trials a round in -hot")
	fs.Var(replicasFlag{&cfg.replicas}, "replicas", "instead of the operations, the replica report: the board read with WithReplicaReads through a client that sends read-only commands to these standalone replicas of REDIS_URL's server (comma-separated host:port), and the primary's share of the Redis CPU")
	fs.IntVar(&cfg.remove, "remove", defaultRemove, "members -remove-between removes a round (default a tenth of -members when that is fewer)")
	fs.IntVar(&cfg.data, "data", 0, "bytes of member data (SetData) each loaded member gets, for top-data and rank-data and the -layout report's member data; 0: none")
	return fs
}

func usage(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), `Usage: go run ./examples/bench [flags]

Measures the leaderboard SDK on your Redis beside the same work done with raw
rueidis and go-redis commands, and prints ops/s, latency percentiles,
allocations, Redis CPU per call, the SDK's ratios, and its targets' verdicts.
Run from the repository root; examples/bench/README.md explains the output.

Environment:
  REDIS_URL  the Redis to measure: redis://[user:password@]host:port[/db],
             rediss://..., or a Cluster as redis://host:port?addr=host:port.
             Unset: an embedded miniredis, whose figures mean nothing, with
             smaller defaults (-members 10000 -d 200ms).

It writes only keys under -prefix and a board name of its own, deletes them
at the end (unless -keep), and loads Redis hard for minutes: point it at a
Redis you may load. -remove-between and -delete also set
latency-monitor-threshold, slowlog-log-slower-than and slowlog-max-len on
every node for their run and set them back at the end. -h connects to
nothing.

-format picks the operations' report's format; the reports of -layout,
-walk, -remove-between, -delete, -batch, -hot and -replicas are Markdown
whatever it says. Every report's command line (in Markdown) reproduces the
run: the flags not at their defaults, but -format, -cpuprofile and -keep.

Flags:
`)
	fs.PrintDefaults()
}

// checkBoard reads the flags that shape the board.
func checkBoard(cfg *config, l listFlags) error {
	if cfg.members < 100 {
		return fmt.Errorf("-members %d: want at least 100", cfg.members)
	}
	windows := l.windows
	if windows == "4" {
		windows = "alltime,daily,weekly,monthly"
	}
	for _, w := range strings.Split(windows, ",") {
		w = strings.TrimSpace(w)
		if _, ok := windowByName(w); !ok {
			return fmt.Errorf("-windows: unknown window %q", w)
		}
		if slices.Contains(cfg.windows, w) {
			return fmt.Errorf("-windows: %q twice", w)
		}
		cfg.windows = append(cfg.windows, w)
	}
	var err error
	if cfg.policy, err = choose("policy", l.policy, choice[leaderboard.Policy]{"keepbest", leaderboard.KeepBest},
		choice[leaderboard.Policy]{"replace", leaderboard.Replace}, choice[leaderboard.Policy]{"accumulate", leaderboard.Accumulate}); err != nil {
		return err
	}
	if cfg.order, err = choose("order", l.order, choice[leaderboard.Order]{"highest", leaderboard.HighestFirst},
		choice[leaderboard.Order]{"lowest", leaderboard.LowestFirst}); err != nil {
		return err
	}
	if cfg.ranking, err = choose("ranking", l.ranking, choice[leaderboard.RankMode]{"ordinal", leaderboard.Ordinal},
		choice[leaderboard.RankMode]{"competition", leaderboard.Competition}); err != nil {
		return err
	}
	if cfg.shards < 0 || cfg.shards == 1 || cfg.shards > 64 {
		return fmt.Errorf("-shards %d: want 0 (unsharded) or 2..64", cfg.shards)
	}
	switch l.tieBreak {
	case "none", "earlier", "later":
		cfg.tieBreak = l.tieBreak
	default:
		return fmt.Errorf("-tiebreak %q: want none, earlier or later", l.tieBreak)
	}
	return nil
}

// checkRun reads the flags that shape the measurement.
func checkRun(cfg *config, l listFlags) error {
	for _, s := range strings.Split(l.conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 4096 {
			return fmt.Errorf("-c: %q is not a concurrency in 1..4096", s)
		}
		cfg.concurrency = append(cfg.concurrency, n)
	}
	if cfg.rounds < 1 || cfg.rounds > 100 {
		return fmt.Errorf("-rounds %d: want 1..100", cfg.rounds)
	}
	if cfg.duration < minDuration {
		return fmt.Errorf("-d %v: want at least %v", cfg.duration, minDuration)
	}
	if l.ops == "all" {
		// The data operations need data: with -data only.
		cfg.ops = slices.DeleteFunc(slices.Clone(allOps), func(o string) bool { return needsData(o) && cfg.data == 0 })
		return checkDataFlag(cfg)
	}
	for _, o := range strings.Split(l.ops, ",") {
		o = strings.TrimSpace(o)
		if !slices.Contains(allOps, o) {
			return fmt.Errorf("-ops: unknown operation %q (known: %s)", o, strings.Join(allOps, ", "))
		}
		if slices.Contains(cfg.ops, o) {
			return fmt.Errorf("-ops: %q twice", o)
		}
		cfg.ops = append(cfg.ops, o)
	}
	return checkDataFlag(cfg)
}

// checkLimits reads the remaining flags.
func checkLimits(cfg *config, _ listFlags) error {
	if cfg.format != "text" && cfg.format != "md" {
		return fmt.Errorf("-format %q: want text or md", cfg.format)
	}
	if cfg.scoreMax < 2 || cfg.scoreMax > 1<<40 {
		return fmt.Errorf("-score-max %d: want 2..2^40", cfg.scoreMax)
	}
	if cfg.loadConcurrency < 1 || cfg.loadConcurrency > 256 {
		return fmt.Errorf("-load-c %d: want 1..256", cfg.loadConcurrency)
	}
	if !keys.ValidName(cfg.prefix) {
		// leaderboard.New's rule for WithKeyPrefix.
		return fmt.Errorf("-prefix %q: want a non-empty prefix without whitespace, braces or control characters", cfg.prefix)
	}
	if cfg.tieBreak != "none" {
		if _, err := tieBreakOf(*cfg); err != nil {
			return err
		}
	}
	if cfg.layout && cfg.shards < 2 {
		return fmt.Errorf("-layout compares a sharded board with an unsharded one: give -shards 2 or more")
	}
	if cfg.layoutSubmits < 1 || cfg.layoutSubmits > 10_000_000 {
		return fmt.Errorf("-layout-submits %d: want 1..10000000", cfg.layoutSubmits)
	}
	return checkModes(cfg)
}

// checkModes refuses two modes at once and a -remove the board cannot hold.
func checkModes(cfg *config) error {
	modes := 0
	for _, on := range []bool{cfg.layout, cfg.walk, cfg.removeBetween, cfg.delete, cfg.batch, cfg.hot, len(cfg.replicas) > 0} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		return fmt.Errorf("-layout, -walk, -remove-between, -delete, -batch, -hot and -replicas are modes of their own: give one")
	}
	if cfg.hotRate < 1 || cfg.hotRate > 1_000_000 || cfg.hotTrials < 1 {
		return fmt.Errorf("-hot-rate %d, -hot-trials %d: want 1..1000000 and at least 1", cfg.hotRate, cfg.hotTrials)
	}
	if cfg.burst < 1 || cfg.batchMembers < 1 || cfg.batchMembers > poolSize {
		return fmt.Errorf("-burst %d, -batch-members %d: want at least 1, and -batch-members at most %d", cfg.burst, cfg.batchMembers, poolSize)
	}
	if cfg.batchWindow <= 0 || cfg.batchWindow > maxBatchWindow {
		return fmt.Errorf("-batch-window %v: want over 0 and at most %v (WithBatchWindow)", cfg.batchWindow, maxBatchWindow)
	}
	if cfg.batchSize < 1 || cfg.batchSize > leaderboard.MaxN {
		return fmt.Errorf("-batch-size %d: want 1..%d (WithBatchSize)", cfg.batchSize, leaderboard.MaxN)
	}
	if cfg.remove < 1 || cfg.remove > cfg.members {
		return fmt.Errorf("-remove %d: want 1..-members (%d)", cfg.remove, cfg.members)
	}
	return nil
}

// maxBatchWindow is the longest window WithBatchWindow takes.
const maxBatchWindow = time.Minute

// defaultRemove is how many members -remove-between removes a round,
// unless -members is under ten times as many.
const defaultRemove = 100_000

// isSet reports whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func windowByName(name string) (leaderboard.Window, bool) {
	switch name {
	case "alltime":
		return leaderboard.AllTime(), true
	case "daily":
		return leaderboard.Daily(), true
	case "weekly":
		return leaderboard.Weekly(), true
	case "monthly":
		return leaderboard.Monthly(), true
	}
	return nil, false
}

// choice is one value a flag may name.
type choice[T any] struct {
	name  string
	value T
}

// choose is the value of the choice that flag's text got names, or an
// error listing the names.
func choose[T any](flag, got string, cs ...choice[T]) (T, error) {
	names := make([]string, len(cs))
	for i, c := range cs {
		if c.name == got {
			return c.value, nil
		}
		names[i] = c.name
	}
	var none T
	last := len(names) - 1
	return none, fmt.Errorf("-%s %q: want %s or %s", flag, got, strings.Join(names[:last], ", "), names[last])
}
