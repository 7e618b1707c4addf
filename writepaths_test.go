package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// The write paths differential: one input (member, score, data, time) sent
// through every write path that takes it, each on a fresh board of the same
// kind, must leave the same thing behind: the same error (by sentinel), the
// same Redis state (scores as stored, data), the same store rows (scores in
// their sign too: a store keeps -0 apart from 0), and, for the paths that
// report one, the same Result.

// pathKind is one kind of board the differential runs on.
type pathKind struct {
	shards []float64
	policy lb.Policy
	order  lb.Order
	tb     bool
	// noCorrector: the store checks submissions but records no
	// corrections (Set does not reach it).
	noCorrector bool
}

func (k pathKind) String() string {
	s := fmt.Sprintf("shards%v/%v/%v/tb=%v", k.shards, k.policy, k.order, k.tb)
	if k.noCorrector {
		s += "/no Corrector"
	}
	return s
}

// checkOnlyStore is a store that refuses what pgstore refuses
// (SubmissionChecker) and records no corrections: only the Store's
// methods and CheckSubmission show.
type checkOnlyStore struct {
	lb.Store
	lb.SubmissionChecker
}

// pathKinds is every kind: plain and sharded (a bound at 0, where -0 and 0
// must land in one shard), every policy and order, with and without a
// tie-break of 2 decimals.
func pathKinds() []pathKind {
	var ks []pathKind
	for _, sh := range [][]float64{nil, {0}} {
		for _, p := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
			for _, o := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
				for _, tb := range []bool{false, true} {
					ks = append(ks, pathKind{shards: sh, policy: p, order: o, tb: tb})
				}
			}
		}
	}
	return append(ks, pathKind{policy: lb.KeepBest, order: lb.HighestFirst, noCorrector: true})
}

// pathKindsOn is the kinds of pathKinds the backend named runs: on Redis
// all of them (2-5 s a kind under the race detector), on the Cluster six
// sharded ones (a sharded board spreads over its nodes), on miniredis,
// whose Lua takes 15-20 s a kind (28 inputs, each path on a fresh board),
// a plain KeepBest board and the store without corrections; the indices are
// pathKinds' order: shards (none, {0}) x policy x order x tie-break, then
// the store without corrections.
func pathKindsOn(backend string) []pathKind {
	all := pathKinds()
	switch backend {
	case "redis":
		return all
	case "cluster":
		return all[18:24] // sharded Accumulate and Replace LowestFirst
	}
	var ks []pathKind
	for _, i := range []int{0, 24} {
		ks = append(ks, all[i])
	}
	return ks
}

// pathEpoch is the Epoch of the differential's tie-break.
var pathEpoch = future.AddDate(0, 0, -30)

// pathTieBreak is the differential's tie-break: 2 decimals up to 1e6.
func pathTieBreak(t *testing.T) lb.TieBreak {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: pathEpoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 2})
	require.NoError(t, err)
	return tb
}

// pathInput is one input of the differential; at, when not zero, is a
// WithTime.
type pathInput struct {
	name   string
	member string
	score  float64
	data   string
	at     time.Time
}

// plainInput reports whether every path takes the input: no data, no time
// (SubmitMany and Set take neither).
func (in pathInput) plainInput() bool { return in.data == "" && in.at.IsZero() }

func (in pathInput) opts() []lb.SubmitOption {
	var o []lb.SubmitOption
	if in.data != "" {
		o = append(o, lb.WithData(in.data))
	}
	if !in.at.IsZero() {
		o = append(o, lb.WithTime(in.at))
	}
	return o
}

// pathInputs lists the inputs: values with two spellings, scores at the
// edge of the tie-break's decimals and range, members and data at their
// limits, and times at a period's exact end.
func pathInputs() []pathInput {
	day := future.Truncate(24 * time.Hour) // the end of yesterday's period
	long := strings.Repeat("m", lb.MaxMemberLen)
	return []pathInput{
		{name: "-0", member: "m", score: math.Copysign(0, -1)},
		{name: "0", member: "m", score: 0},
		{name: "1.5", member: "m", score: 1.5},
		{name: "-0.29", member: "m", score: -0.29},       // 28.999999999999996 when scaled
		{name: "1.005", member: "m", score: 1.005},       // 100.49999999999999 when scaled
		{name: "0.1+0.2", member: "m", score: 0.1 + 0.2}, // rounds to 30 scaled, but is not 0.30
		{name: "max", member: "m", score: 1e6},
		{name: "-max", member: "m", score: -1e6},
		{name: "max+step", member: "m", score: 1e6 + 0.01},
		{name: "subnormal", member: "m", score: 5e-324},
		{name: "-subnormal", member: "m", score: -5e-324},
		{name: "1e300", member: "m", score: 1e300},
		{name: "long member", member: long, score: 7},
		{name: "too long member", member: long + "m", score: 7},
		{name: "odd member", member: "a b:{c}*?\\[]", score: 3},
		{name: "NUL member", member: "a\x00b", score: 3},
		{name: "data at limit", member: "m", score: 2, data: strings.Repeat("d", lb.MaxDataLen)},
		{name: "data past limit", member: "m", score: 2, data: strings.Repeat("d", lb.MaxDataLen+1)},
		{name: "-0 with data", member: "m", score: math.Copysign(0, -1), data: "d"},
		{name: "time at period end", member: "m", score: 4, at: day},
		{name: "time before period end", member: "m", score: 4, at: day.Add(-time.Nanosecond)},
		{name: "-0 at period end", member: "m", score: math.Copysign(0, -1), at: day},
		{name: "time in a day past its retention", member: "m", score: 4, at: future.AddDate(0, 0, -3)},
		{name: "time within the skew", member: "m", score: 4, at: future.Add(500 * time.Millisecond)},
		{name: "time past the skew", member: "m", score: 4, at: future.Add(2 * time.Second)},
		{name: "time at the epoch", member: "m", score: 4, at: pathEpoch},
		{name: "time in the epoch's microsecond", member: "m", score: 4, at: pathEpoch.Add(time.Nanosecond)},
		{name: "time before the epoch", member: "m", score: 4, at: pathEpoch.Add(-time.Nanosecond)},
	}
}

// pathOutcome is what one path left behind.
type pathOutcome struct {
	err    string // the sentinels the error matches
	redis  string // the board's keys, as snapshotted
	reads  string // every readable period's entries, with data
	rows   string // the store's submissions and corrections
	result string // the Result, for the paths that report one
}

// sentinels names the package's sentinels err matches.
func sentinels(err error) string {
	if err == nil {
		return "ok"
	}
	var out []string
	for _, s := range []struct {
		name string
		err  error
	}{{"NotRanked", lb.ErrNotRanked}, {"InvalidScore", lb.ErrInvalidScore}, {"InvalidMember", lb.ErrInvalidMember},
		{"Precision", lb.ErrPrecision}, {"InvalidArgument", lb.ErrInvalidArgument}, {"Pending", lb.ErrPending},
		{"Expired", lb.ErrExpired}} {
		if errors.Is(err, s.err) {
			out = append(out, s.name)
		}
	}
	if len(out) == 0 {
		return "untyped: " + err.Error()
	}
	return strings.Join(out, "+")
}

// g prints a float64 with its sign: -0 apart from 0.
func g(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// pathEnv is one path's fresh board.
type pathEnv struct {
	t     *testing.T
	b     *testredis.Backend
	name  string
	board *lb.Leaderboard
	store *textStore
	folds int // batched calls that folded into one write
}

// newPathEnv makes a fresh board of kind k, with a store that refuses what
// pgstore refuses, a fixed clock, an all-time and a daily window, and
// yesterday's period still readable.
func newPathEnv(t *testing.T, b *testredis.Backend, k pathKind) *pathEnv {
	e := &pathEnv{t: t, b: b, name: shardName(t, b), store: &textStore{newMemStore()}}
	opts := []lb.Option{lb.WithPolicy(k.policy), lb.WithOrder(k.order), lb.WithClock(fixed(future)),
		lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRetention(48 * time.Hour)}
	if k.noCorrector {
		opts = append(opts, lb.WithStore(checkOnlyStore{e.store, e.store}))
	} else {
		opts = append(opts, lb.WithStore(e.store))
	}
	if k.shards != nil {
		opts = append(opts, lb.WithShards(k.shards...))
	}
	if k.tb {
		opts = append(opts, lb.WithTieBreak(pathTieBreak(t)))
	}
	var err error
	e.board, err = lb.New(b.Client, e.name, opts...)
	require.NoError(t, err)
	return e
}

var (
	pathSalt = regexp.MustCompile(`~[0-9]+`)
	pathPart = regexp.MustCompile(`\}:[0-9]+:`)
	// A sharded Cluster board's versions, stamped by Redis's clock.
	pathClocked = regexp.MustCompile(`:clock$|:v[0-9]+:[0-9]+$`)
)

// outcome reads what the board holds after a path ran and returned err.
func (e *pathEnv) outcome(res *lb.Result, err error) pathOutcome {
	o := pathOutcome{err: sentinels(err), reads: e.reads(), rows: e.rows()}
	if res != nil && err == nil {
		o.result = fmt.Sprintf("%+v", *res)
	}
	var keys []string
	for k, v := range e.b.Snapshot(e.t, e.name) {
		if strings.Contains(k, ":ids") || pathClocked.MatchString(k) {
			continue // a WithID path's own; stamps of Redis's clock
		}
		if strings.HasPrefix(v, "hash ") {
			v = pathNumbers(v)
		}
		k = strings.ReplaceAll(k, e.name, "B")
		k = pathPart.ReplaceAllString(pathSalt.ReplaceAllString(k, "~N"), "}:P:")
		keys = append(keys, k+" => "+v)
	}
	slices.Sort(keys)
	o.redis = strings.Join(keys, "\n")
	return o
}

// pathNumbers writes the numbers of a snapshotted hash (a sharded board's
// partitions) in one spelling: a value Lua added ('%.17g') and the same
// value Go sent (shortest) are one double, which every reader parses
// (sameValue in check.go).
func pathNumbers(v string) string {
	fs := strings.Fields(v)
	for i, f := range fs {
		field, val, ok := strings.Cut(f, "=")
		if x, err := strconv.ParseFloat(val, 64); ok && field != "exp" && err == nil {
			fs[i] = field + "=" + g(x)
		}
	}
	return strings.Join(fs, " ")
}

// reads lists every readable period's entries of both windows, with data
// and scores in their sign.
func (e *pathEnv) reads() string {
	ctx := context.Background()
	var out []string
	for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
		ps, err := e.board.Periods(ctx, lb.In(w))
		require.NoError(e.t, err)
		for _, p := range ps {
			q := []lb.Query{lb.In(w), lb.IncludeData()}
			if !p.Start.IsZero() {
				q = append(q, lb.At(p.Start))
			}
			for en, err := range e.board.All(ctx, q...) {
				require.NoError(e.t, err)
				out = append(out, fmt.Sprintf("%s/%s: %q=%s #%d data=%q", w.Name(), p.ID, en.Member, g(en.Score), en.Rank, en.Data))
			}
		}
	}
	return strings.Join(out, "\n")
}

// rows lists the store's submissions and corrections alike, a line a
// period (a Set of each window on a fresh board is a submission of its
// score at the clock's now): member, score in its sign, times.
func (e *pathEnv) rows() string {
	s := e.store.memStore
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, sub := range s.subs {
		for _, p := range sub.Periods {
			out = append(out, fmt.Sprintf("%s/%s: %q %s at %v received %v", p.Window, p.Period, sub.Member, g(sub.Score),
				sub.At.UTC(), sub.Received.UTC()))
		}
	}
	for k, c := range s.corrected {
		key := strings.Split(k, "\x00") // board, window, period, member
		out = append(out, fmt.Sprintf("%s/%s: %q %s at %v received %v", key[1], key[2], c.Member, g(c.Score),
			c.At.UTC(), c.At.UTC()))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// batched runs calls through a Batcher of e's board, in order, each one
// joined (or answered) before the next starts, and the batch then sent:
// calls made one after another fold into one write where they can.
func (e *pathEnv) batched(calls ...func(bt *lb.Batcher) (lb.Result, error)) ([]lb.Result, []error) {
	ctx := context.Background()
	bt, err := e.board.NewBatcher(lb.WithBatchWindow(time.Minute))
	require.NoError(e.t, err)
	var seqs []int // under the Batcher's lock, then after its writes
	lb.TraceBatch(bt, func(seq int) { seqs = append(seqs, seq) })
	res, errs := make([]lb.Result, len(calls)), make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		done := make(chan struct{})
		joined := lb.BatchJoined(bt)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done)
			res[i], errs[i] = call(bt)
		}()
		waitJoined(bt, joined, done)
	}
	require.NoError(e.t, bt.Flush(ctx))
	wg.Wait()
	require.NoError(e.t, bt.Close(ctx))
	if len(seqs) == 2 && seqs[0] == seqs[1] {
		e.folds++
	}
	return res, errs
}

// writePath is one way to write an input on a fresh board; result tells
// whether it reports a Result to compare.
type writePath struct {
	name   string
	plain  bool // takes plain inputs only (no data, no time)
	result bool
	set    bool // a Set, which a store records only as a Corrector
	run    func(e *pathEnv, in pathInput) (lb.Result, error)
}

// writePaths are the paths a single input takes.
func writePaths() []writePath {
	ctx := context.Background()
	return []writePath{
		{name: "Submit", result: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			return e.board.Submit(ctx, in.member, in.score, in.opts()...)
		}},
		{name: "Submit WithID", result: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			return e.board.Submit(ctx, in.member, in.score, append(in.opts(), lb.WithID("id"))...)
		}},
		{name: "SubmitMany", plain: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			return lb.Result{}, e.board.SubmitMany(ctx, map[string]float64{in.member: in.score})
		}},
		{name: "Set each window", plain: true, set: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			if err := e.board.Set(ctx, in.member, in.score); err != nil {
				return lb.Result{}, err
			}
			return lb.Result{}, e.board.Set(ctx, in.member, in.score, lb.In(lb.Daily()))
		}},
		{name: "Batcher", result: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			res, errs := e.batched(func(bt *lb.Batcher) (lb.Result, error) { return bt.Submit(ctx, in.member, in.score, in.opts()...) })
			return res[0], errs[0]
		}},
		{name: "Batcher WithID", result: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			res, errs := e.batched(func(bt *lb.Batcher) (lb.Result, error) {
				return bt.Submit(ctx, in.member, in.score, append(in.opts(), lb.WithID("id"))...)
			})
			return res[0], errs[0]
		}},
	}
}

// seededPaths are the paths of an input that follows a first submission
// of its member (seed): one after the other, or folded into one write of
// a batch. Only the input's own answer is compared, and of it only the
// standings after it (a folded write reports the standings before the
// fold as Previous).
func seededPaths(seed float64) []writePath {
	ctx := context.Background()
	return []writePath{
		{name: "Submit, Submit", result: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			if _, err := e.board.Submit(ctx, in.member, seed); err != nil {
				return lb.Result{}, err // a bad member
			}
			return e.board.Submit(ctx, in.member, in.score, in.opts()...)
		}},
		{name: "SubmitMany, SubmitMany", plain: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			if err := e.board.SubmitMany(ctx, map[string]float64{in.member: seed}); err != nil {
				return lb.Result{}, err
			}
			return lb.Result{}, e.board.SubmitMany(ctx, map[string]float64{in.member: in.score})
		}},
		{name: "Batcher folded", result: true, run: func(e *pathEnv, in pathInput) (lb.Result, error) {
			res, errs := e.batched(
				func(bt *lb.Batcher) (lb.Result, error) { return bt.Submit(ctx, in.member, seed) },
				func(bt *lb.Batcher) (lb.Result, error) { return bt.Submit(ctx, in.member, in.score, in.opts()...) })
			if errs[0] != nil {
				return lb.Result{}, errs[0]
			}
			return res[1], errs[1]
		}},
	}
}

// afterOnly is a Result's standings after the write, without what a fold
// reports otherwise (Previous, Changed).
func afterOnly(r lb.Result) lb.Result {
	out := lb.Result{Standing: r.Standing}
	for _, w := range r.Windows {
		out.Windows = append(out.Windows, lb.WindowResult{Window: w.Window, Period: w.Period, Standing: w.Standing, Closed: w.Closed})
	}
	return out
}

// runPaths sends in through every path of paths that takes it, each on a
// fresh board of kind k, and compares each outcome with the first path's.
// A refused input must leave nothing anywhere.
func runPaths(t *testing.T, b *testredis.Backend, k pathKind, in pathInput, paths []writePath, seeded bool) (folds int) {
	var first *pathOutcome
	var firstName string
	for _, p := range paths {
		if p.plain && !in.plainInput() {
			continue
		}
		e := newPathEnv(t, b, k)
		res, err := p.run(e, in)
		folds += e.folds
		if seeded {
			res = afterOnly(res)
		}
		o := e.outcome(&res, err)
		if !p.result {
			o.result = ""
		}
		if k.noCorrector && p.set && first != nil {
			o.rows = first.rows // Set does not reach such a store
		}
		if err != nil && !seeded {
			require.Empty(t, o.redis, "%s: %s refused (%v) but wrote Redis", in.name, p.name, err)
			require.Empty(t, o.rows, "%s: %s refused (%v) but wrote the store", in.name, p.name, err)
		}
		if first == nil {
			first, firstName = &o, p.name
			continue
		}
		require.Equal(t, first.err, o.err, "%s: error of %s vs %s", in.name, p.name, firstName)
		require.Equal(t, first.reads, o.reads, "%s: reads after %s vs %s", in.name, p.name, firstName)
		require.Equal(t, first.rows, o.rows, "%s: store rows after %s vs %s", in.name, p.name, firstName)
		require.Equal(t, first.redis, o.redis, "%s: Redis after %s vs %s", in.name, p.name, firstName)
		if o.result != "" && first.result != "" {
			require.Equal(t, first.result, o.result, "%s: Result of %s vs %s", in.name, p.name, firstName)
		}
	}
	return folds
}

// TestWritePathsAgree sends each input through every write path, on every
// kind of board, and compares what each left behind.
func TestWritePathsAgree(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, k := range pathKindsOn(b.Name) {
			t.Run(k.String(), func(t *testing.T) {
				folds := 0
				for _, in := range pathInputs() {
					runPaths(t, b, k, in, writePaths(), false)
					folds += runPaths(t, b, k, in, seededPaths(2), true)
					if k.policy == lb.Accumulate && !k.tb {
						// Totals that overflow (past MaxScore: seed 2).
						runPaths(t, b, k, in, seededPaths(math.MaxFloat64), true)
					}
				}
				require.Positive(t, folds, "no input folded into its seed's write: the folded path went untested")
			})
		}
	})
}

// removalRows lists the store's removals of the all-time window.
func (e *pathEnv) removalRows() string {
	s := e.store.memStore
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.removed {
		if key := strings.Split(k, "\x00"); key[1] == "alltime" {
			out = append(out, strings.Join(key[1:], "/"))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// allTimeReads lists the all-time window's entries.
func (e *pathEnv) allTimeReads() string {
	var out []string
	for en, err := range e.board.All(context.Background(), lb.In(lb.AllTime())) {
		require.NoError(e.t, err)
		out = append(out, fmt.Sprintf("%q=%s", en.Member, g(en.Score)))
	}
	return strings.Join(out, " ")
}

// TestRemovePathsAgree submits each accepted input's score beside a
// neighbour, then removes the member by name (Remove) and by its score
// spelled every way it has (RemoveBetween of the score, of its other
// zero, of the range just around it): each must remove the member alone
// from the all-time window, in Redis and in the store.
func TestRemovePathsAgree(t *testing.T) {
	ctx := context.Background()
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, k := range pathKinds() {
			if k.noCorrector {
				continue
			}
			t.Run(k.String(), func(t *testing.T) {
				for _, in := range pathInputs() {
					if !in.plainInput() {
						continue
					}
					x := in.score
					ranges := [][2]float64{{x, x}, {math.Nextafter(x, math.Inf(-1)), math.Nextafter(x, math.Inf(1))}}
					if x == 0 {
						ranges = append(ranges, [2]float64{-x, -x}, [2]float64{0, math.Copysign(0, -1)})
					}
					var want, wantRows string
					removes := []func(e *pathEnv) (int64, error){func(e *pathEnv) (int64, error) { return 1, e.board.Remove(ctx, in.member) }}
					for _, r := range ranges {
						removes = append(removes, func(e *pathEnv) (int64, error) { return e.board.RemoveBetween(ctx, r[0], r[1]) })
					}
					for i, remove := range removes {
						e := newPathEnv(t, b, k)
						if _, err := e.board.Submit(ctx, in.member, x); err != nil {
							break // refused: nothing to remove
						}
						_, err := e.board.Submit(ctx, "neighbour", 5)
						require.NoError(t, err)
						n, err := remove(e)
						require.NoError(t, err, "%s: removal %d", in.name, i)
						require.EqualValues(t, 1, n, "%s: removal %d", in.name, i)
						got, rows := e.allTimeReads(), e.removalRows()
						if i == 0 {
							want, wantRows = got, rows
							require.Equal(t, `"neighbour"=5`, got, "%s: Remove", in.name)
							continue
						}
						require.Equal(t, want, got, "%s: RemoveBetween %v vs Remove", in.name, ranges[i-1])
						require.Equal(t, wantRows, rows, "%s: RemoveBetween %v vs Remove: store removals", in.name, ranges[i-1])
					}
				}
			})
		}
	})
}
