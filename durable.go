package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// rebuildBatch is how many members one ZADD of a rebuild carries,
// rebuildPipeline how many such commands share a round trip, and
// rebuildInFlight how many round trips may be on their way while the next
// pipeline is read from the store (1 to 3 measured in BENCHMARKS.md).
const (
	rebuildBatch    = 1000
	rebuildPipeline = 16
	rebuildInFlight = 2
)

// RebuildOption configures Rebuild.
type RebuildOption func(*rebuildConfig)

type rebuildConfig struct {
	progress func(RebuildProgress)
}

// WithProgress calls fn as a rebuild goes: after every batch of members
// and at the end of every period, from the goroutine that called Rebuild.
func WithProgress(fn func(RebuildProgress)) RebuildOption {
	return func(c *rebuildConfig) { c.progress = fn }
}

// RebuildProgress tells how far a Rebuild is.
type RebuildProgress struct {
	// Window and Period name the period being rebuilt.
	Window, Period string
	// Members is how many members of that period are read from the store
	// and handed to Redis so far; they are all written when Done.
	Members int64
	// PeriodsDone counts the periods finished, of Periods in all.
	PeriodsDone, Periods int
	// Done reports that this period is finished and swapped in.
	Done bool
}

// RebuildReport is what Rebuild did.
type RebuildReport struct {
	// Periods is how many window periods were rebuilt.
	Periods int
	// Members is how many members were written, over all periods.
	Members int64
	// Refused lists "window/period/member" for the standings the board
	// cannot hold (an Accumulate total that overflowed, a score outside a
	// tie-break's range), which were left out.
	Refused []string
}

// Present reports whether Redis still holds the board as last rebuilt: a
// marker key that Rebuild writes and nothing else does, so that a wipe
// (a restart without persistence, FLUSHALL, a failover to an empty replica)
// shows even after new submissions arrive. A service calls it at start-up
// and on a timer, and calls Rebuild when it reports false. A board that was
// never rebuilt reports false: rebuild it once from its (possibly empty)
// store to start. One round trip.
func (lb *Leaderboard) Present(ctx context.Context) (bool, error) {
	n, err := lb.client.Do(ctx, lb.client.B().Exists().Key(lb.keys.Marker()).Build()).AsInt64()
	return n == 1, wrap("present", err)
}

// Rebuild rebuilds every live period of every window (the current one and
// the closed ones still within their retention) from the store: each into
// fresh keys, swapped in with RENAME, so readers see the old board or the
// new one, never a half-built one. Each period is read with
// Store.Standings naming the period (a store that keeps standings streams
// them best first); members are written in pipelined batches of 1,000,
// sent from other goroutines while the next are read; WithProgress reports
// how far it is. On a sharded board it
// rebuilds the index and every shard (each shard's swap is atomic, the
// shards of one period are swapped one after another). It then gives Redis
// back its memory of the WithID ids the store received within the dedupe
// window, when the store is an IDKeeper (so that their retries are
// duplicates, see WithID), and writes the marker that Present looks for.
//
// Submissions that reach Redis while a period is being rebuilt are in the
// store, but the swap replaces them in Redis: run Rebuild before serving
// writes (at start-up, on Present reporting false), or run it again after.
// Without a store it returns ErrInvalidArgument.
func (lb *Leaderboard) Rebuild(ctx context.Context, opts ...RebuildOption) (RebuildReport, error) {
	var cfg rebuildConfig
	for _, o := range opts {
		if o == nil {
			return RebuildReport{}, fmt.Errorf("%w: nil rebuild option", ErrInvalidArgument)
		}
		o(&cfg)
	}
	if lb.store == nil {
		return RebuildReport{}, fmt.Errorf("%w: Rebuild needs a store (WithStore)", ErrInvalidArgument)
	}
	now := lb.now()
	all, err := lb.livePeriods(now)
	if err != nil {
		return RebuildReport{}, err
	}
	var rep RebuildReport
	for i, tg := range all {
		n, err := lb.rebuildPeriod(ctx, tg, &rep, func(members int64, done bool) {
			if cfg.progress != nil {
				cfg.progress(RebuildProgress{Window: tg.window.Name(), Period: tg.period.ID, Members: members,
					PeriodsDone: i + boolInt(done), Periods: len(all), Done: done})
			}
		})
		if err != nil {
			return rep, err
		}
		rep.Periods++
		rep.Members += n
	}
	if err := lb.restoreIDs(ctx, now); err != nil {
		return rep, err
	}
	err = lb.client.Do(ctx, lb.client.B().Set().Key(lb.keys.Marker()).Value(strconv.FormatInt(now.UnixMilli(), 10)).Build()).Error()
	return rep, wrap("rebuild", err)
}

// restoreIDs gives Redis back its memory of the WithID ids the store
// received within the dedupe window, when the store can list them
// (IDKeeper): the scores just rebuilt include those submissions, so their
// retries must find them applied. Each id is forgotten when it would have
// been; ids Redis already holds stay.
func (lb *Leaderboard) restoreIDs(ctx context.Context, now time.Time) error {
	k, ok := lb.store.(IDKeeper)
	if !ok {
		return nil
	}
	key, b := lb.keys.IDs(), lb.client.B()
	args := make([]string, 0, 2*rebuildBatch)
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		// The set lives as long as its newest id: one a Submit records now
		// is forgotten at the clock's now plus the window, which no
		// restored id outlives (PEXPIREAT GT, which would keep a later
		// expiry, needs Redis 7).
		cmds := rueidis.Commands{b.Arbitrary("ZADD").Keys(key).Args(args...).Build(),
			b.Pexpireat().Key(key).MillisecondsTimestamp(lb.now().Add(lb.dedupe).UnixMilli()).Build()}
		args = args[:0]
		for _, r := range lb.client.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return nil
	}
	err := k.IDsSince(ctx, lb.name, now.Add(-lb.dedupe), func(id string, received time.Time) error {
		forget := received.Add(lb.dedupe).UnixMilli()
		if forget <= now.UnixMilli() {
			return nil
		}
		args = append(args, strconv.FormatInt(forget, 10), id)
		if len(args) == 2*rebuildBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return wrap("rebuild: ids", err)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// livePeriods lists, window by window in the board's order, each window's
// current period and the closed ones whose keys still live at now, newest
// first: what Rebuild, Verify and Seal walk.
func (lb *Leaderboard) livePeriods(now time.Time) ([]target, error) {
	var out []target
	for _, w := range lb.windows {
		ps, err := lb.windowLivePeriods(w, now)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func (lb *Leaderboard) windowLivePeriods(w Window, now time.Time) ([]target, error) {
	var out []target
	t := now
	for range 10_000 { // bounds a window whose periods never end
		tg, err := lb.target(w, t)
		if err != nil {
			return nil, err
		}
		if tg.expire != 0 && tg.expire <= now.UnixMilli() {
			break
		}
		out = append(out, tg)
		if tg.expire == 0 || tg.period.Start.IsZero() {
			break
		}
		t = tg.period.Start.Add(-time.Nanosecond)
	}
	return out, nil
}

// storedValue is what Redis holds for an aggregated standing: the score, or
// its tie-break composite.
func (lb *Leaderboard) storedValue(st StoredStanding) (float64, error) {
	if math.IsNaN(st.Score) || math.IsInf(st.Score, 0) {
		return 0, fmt.Errorf("%w: %v", ErrInvalidScore, st.Score)
	}
	if lb.tb == nil {
		return st.Score, nil
	}
	s, err := lb.tb.scaled(st.Score)
	if err != nil {
		return 0, err
	}
	slot, err := lb.tb.slot(st.At)
	if err != nil {
		return 0, err
	}
	return lb.tb.encode(s, slot, lb.high()), nil
}

func (lb *Leaderboard) query(tg target) StandingsQuery {
	return StandingsQuery{Board: lb.name, Policy: lb.policy, Order: lb.order, From: tg.period.Start, To: tg.period.End,
		Window: tg.window.Name(), Period: tg.period.ID}
}

// rebuildAdder queues one field of a key being rebuilt: keyIdx indexes
// rebuildKeys' zsets, or its hashes when hash is set.
type rebuildAdder func(keyIdx int, hash bool, field, value string) error

func fresh(key string) string { return key + ":rebuild" }

func (lb *Leaderboard) rebuildPeriod(ctx context.Context, tg target, rep *RebuildReport, progress func(int64, bool)) (int64, error) {
	b := lb.client.B()
	zsets, hashes := lb.be.rebuildKeys(tg)
	var clear rueidis.Commands
	for _, k := range append(append([]string(nil), zsets...), hashes...) {
		clear = append(clear, b.Del().Key(fresh(k)).Build())
	}
	for _, r := range lb.client.DoMulti(ctx, clear...) {
		if err := r.Error(); err != nil {
			return 0, wrap("rebuild", err)
		}
	}

	// Commands go to Redis from the writer's goroutines while this one
	// reads on: a pipeline is handed over as soon as it is full.
	w := lb.startPipelineWriter(ctx, rebuildInFlight)
	defer w.stop()
	pending := make(rueidis.Commands, 0, rebuildPipeline)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := w.send(pending)
		pending = make(rueidis.Commands, 0, rebuildPipeline) // the writer owns the old one
		return err
	}
	// One argument list per key being built; a full one becomes a command.
	zadd := make([][]string, len(zsets))
	hset := make([][]string, len(hashes))
	// The command copies the arguments: the list can be reused after it.
	command := func(keyIdx int, hash bool, list []string) rueidis.Completed {
		if hash {
			return b.Arbitrary("HSET").Keys(fresh(hashes[keyIdx])).Args(list...).Build()
		}
		return b.Arbitrary("ZADD").Keys(fresh(zsets[keyIdx])).Args(list...).Build()
	}
	var members int64
	add := func(keyIdx int, hash bool, field, value string) error {
		var list *[]string
		if hash {
			list = &hset[keyIdx]
			*list = append(*list, field, value)
		} else {
			list = &zadd[keyIdx]
			*list = append(*list, value, field)
		}
		if len(*list) < 2*rebuildBatch {
			return nil
		}
		pending = append(pending, command(keyIdx, hash, *list))
		*list = (*list)[:0]
		if len(pending) >= rebuildPipeline {
			return flush()
		}
		return nil
	}
	err := lb.store.Standings(ctx, lb.query(tg), func(st StoredStanding) error {
		v, err := lb.storedValue(st)
		if err != nil {
			if errors.Is(err, ErrInvalidScore) || errors.Is(err, ErrPrecision) {
				rep.Refused = append(rep.Refused, tg.window.Name()+"/"+tg.period.ID+"/"+st.Member)
				return nil
			}
			return err
		}
		if err := lb.be.rebuildAdd(st.Member, formatScore(v), v, add); err != nil {
			return err
		}
		members++
		if members%rebuildBatch == 0 {
			progress(members, false)
		}
		return nil
	})
	if err != nil {
		return members, fmt.Errorf("leaderboard: rebuild %s/%s: %w", tg.window.Name(), tg.period.ID, err)
	}
	for i, list := range zadd {
		if len(list) > 0 {
			pending = append(pending, command(i, false, list))
		}
	}
	for i, list := range hset {
		if len(list) > 0 {
			pending = append(pending, command(i, true, list))
		}
	}
	if err := flush(); err != nil {
		return members, wrap("rebuild", err)
	}
	// Every command must have reached Redis before the swap.
	if err := w.finish(); err != nil {
		return members, wrap("rebuild", err)
	}
	// The swap: each key's fresh copy replaces it in one step, or the key
	// goes when the period has no members (or that shard none).
	// One transaction per key: on a Cluster the keys of a sharded board
	// live in different slots, which one pipeline of transactions may not mix.
	for _, k := range append(append([]string(nil), zsets...), hashes...) {
		for _, r := range lb.client.DoMulti(ctx, lb.swapCmds(k, tg.expire)...) {
			if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
				return members, wrap("rebuild", err)
			}
		}
	}
	progress(members, true)
	return members, nil
}

// pipelineWriter sends a rebuild's pipelines to Redis from goroutines of its
// own, so that reading the store and writing Redis overlap: without it the
// reader waits while Redis inserts and Redis idles while the reader decodes
// rows and builds commands (BENCHMARKS.md). Commands of one rebuild touch
// distinct members, so their pipelines may land in any order.
type pipelineWriter struct {
	work   chan rueidis.Commands
	ctx    context.Context // cancelled by stop, or on the first error
	cancel context.CancelFunc
	failed chan struct{} // closed on the first error, after err is set
	once   sync.Once
	err    error
	wg     sync.WaitGroup
	closed bool
}

// startPipelineWriter starts n goroutines, each sending one pipeline at a
// time: n pipelines at most are on their way while the caller builds the
// next.
func (lb *Leaderboard) startPipelineWriter(ctx context.Context, n int) *pipelineWriter {
	w := &pipelineWriter{work: make(chan rueidis.Commands), failed: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.wg.Add(n)
	for range n {
		go func() {
			defer w.wg.Done()
			for cmds := range w.work {
				if w.ctx.Err() != nil {
					w.fail(w.ctx.Err())
					continue // drain: the caller stops sending
				}
				for _, r := range lb.client.DoMulti(w.ctx, cmds...) {
					if err := r.Error(); err != nil {
						w.fail(err)
						break
					}
				}
			}
		}()
	}
	return w
}

func (w *pipelineWriter) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.failed)
		w.cancel() // the other writers' round trips are moot now
	})
}

// send hands cmds to a writer, waiting while all of them are busy. It
// returns the first error a writer met, or the context's.
func (w *pipelineWriter) send(cmds rueidis.Commands) error {
	select {
	case <-w.failed:
		return w.err
	default:
	}
	select {
	case w.work <- cmds:
		return nil
	case <-w.failed:
		return w.err
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// finish waits until every pipeline sent has been answered and returns the
// first error.
func (w *pipelineWriter) finish() error {
	if !w.closed {
		w.closed = true
		close(w.work)
	}
	w.wg.Wait()
	select {
	case <-w.failed:
		return w.err
	default:
		return w.ctx.Err() // nil unless the caller's context ended
	}
}

// stop ends the writers without waiting for what is still queued to be
// worth anything (the rebuild failed); it returns once they are gone.
func (w *pipelineWriter) stop() {
	w.cancel()
	_ = w.finish()
}

// swapCmds replaces key with its fresh copy in one script-free step: a
// transaction that unlinks the key and renames the copy (RENAME fails on a
// missing source, so the UNLINK keeps an empty rebuild right), then sets the
// expiry.
func (lb *Leaderboard) swapCmds(key string, expire int64) rueidis.Commands {
	b := lb.client.B()
	cmds := rueidis.Commands{
		b.Multi().Build(),
		// UNLINK, not DEL: freeing a large old set would block Redis for
		// seconds (3.7 s at 10M members, BENCHMARKS.md).
		b.Unlink().Key(key).Build(),
		b.Eval().Script("if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('RENAME', KEYS[1], KEYS[2]) end return false").
			Numkeys(2).Key(fresh(key), key).Build(),
	}
	if expire != 0 {
		cmds = append(cmds, b.Pexpireat().Key(key).MillisecondsTimestamp(expire).Build())
	}
	return append(cmds, b.Exec().Build())
}

// VerifyReport is what Verify found in one window period.
type VerifyReport struct {
	// Window and Period name the period compared.
	Window, Period string
	// StoreMembers and RedisMembers count the members on each side.
	StoreMembers, RedisMembers int64
	// Missing lists members the store has and Redis lacks; Different, those
	// whose stored value differs. At most VerifySample names each; the
	// counts are exact.
	Missing, Different []string
	// MissingCount and DifferentCount count them all.
	MissingCount, DifferentCount int64
	// Extra counts members Redis has and the store lacks.
	Extra int64
	// Store is the store's check of its kept standings against its own log
	// for the period, when the store is a StandingsChecker (zero
	// otherwise): kept standings that drifted from the log would else be
	// compared with Redis as if they were the truth.
	Store StandingsCheck
}

// VerifySample is how many names a VerifyReport lists per kind.
const VerifySample = 100

// Clean reports whether Redis and the store agree, and the store's kept
// standings with its log.
func (r VerifyReport) Clean() bool {
	return r.MissingCount == 0 && r.DifferentCount == 0 && r.Extra == 0 && r.Store.DifferCount == 0
}

// Verify checks, for every live period of every window, two things:
//
//   - Redis against the store: the standings Store.Standings gives for the
//     period (the store's kept standings where it keeps them, else the
//     aggregation of its log) against Redis, member by member: a member
//     missing from Redis, a stored value that differs (the composite under
//     a tie-break), and the members Redis has beyond them, read back in
//     batches of 1,000. On a sharded board Redis's side is the index;
//     Check compares the shards with it.
//   - The store against itself, when it is a StandingsChecker (pgstore
//     is): its kept standings against the aggregation of its own log
//     (VerifyReport.Store), without repairing them.
//
// It does not check the log itself (a submission that never reached the
// store cannot show) nor the WithID ids. The basis of an alarm; it reads
// whole periods, so run it from a maintenance job. Without a store it
// returns ErrInvalidArgument.
func (lb *Leaderboard) Verify(ctx context.Context) ([]VerifyReport, error) {
	if lb.store == nil {
		return nil, fmt.Errorf("%w: Verify needs a store (WithStore)", ErrInvalidArgument)
	}
	live, err := lb.livePeriods(lb.now())
	if err != nil {
		return nil, err
	}
	var out []VerifyReport
	for _, tg := range live {
		r, err := lb.verifyPeriod(ctx, tg)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (lb *Leaderboard) verifyPeriod(ctx context.Context, tg target) (VerifyReport, error) {
	r := VerifyReport{Window: tg.window.Name(), Period: tg.period.ID}
	read, count := lb.be.verifyReads(tg)
	var matched int64
	members := make([]string, 0, rebuildBatch)
	want := make([]float64, 0, rebuildBatch)
	check := func() error {
		if len(members) == 0 {
			return nil
		}
		got, err := lb.client.Do(ctx, read(members)).ToArray()
		if err != nil {
			return err
		}
		for i, m := range got {
			v, ok, err := optFloat(&m)
			switch {
			case err != nil:
				return err
			case !ok:
				r.MissingCount++
				if len(r.Missing) < VerifySample {
					r.Missing = append(r.Missing, members[i])
				}
			case v != want[i]:
				matched++
				r.DifferentCount++
				if len(r.Different) < VerifySample {
					r.Different = append(r.Different, members[i])
				}
			default:
				matched++
			}
		}
		members, want = members[:0], want[:0]
		return nil
	}
	err := lb.store.Standings(ctx, lb.query(tg), func(st StoredStanding) error {
		v, err := lb.storedValue(st)
		if err != nil {
			return nil // Rebuild leaves it out too, and reports it
		}
		r.StoreMembers++
		members, want = append(members, st.Member), append(want, v)
		if len(members) == rebuildBatch {
			return check()
		}
		return nil
	})
	if err == nil {
		err = check()
	}
	if err != nil {
		return r, fmt.Errorf("leaderboard: verify %s/%s: %w", tg.window.Name(), tg.period.ID, err)
	}
	if r.RedisMembers, err = lb.client.Do(ctx, count).AsInt64(); err != nil {
		return r, wrap("verify", err)
	}
	r.Extra = r.RedisMembers - matched
	if c, ok := lb.store.(StandingsChecker); ok {
		if r.Store, err = c.CheckStandings(ctx, lb.query(tg), false); err != nil {
			return r, fmt.Errorf("leaderboard: verify %s/%s: store: %w", tg.window.Name(), tg.period.ID, err)
		}
	}
	return r, nil
}

// SealedPeriod is a closed period's final standings, as sealed into the store.
type SealedPeriod struct {
	// Window and Period name the period.
	Window, Period string
	// Entries are its final standings, best first.
	Entries []Entry
}

// Seal seals every closed period whose key still lives (the ones within
// their retention) into the store, each exactly once, and runs hook once for
// each period it seals first (rewards, notifications); periods sealed
// before, and periods nobody played, are skipped. It returns what it sealed. Run it from a job shortly
// after each reset: a period whose key expired before it was sealed is
// gone. The hook runs after the seal is recorded, so a hook that fails is
// not run again for that period: it returns the error, and the hook must
// make its own retries. Without a store it returns ErrInvalidArgument.
func (lb *Leaderboard) Seal(ctx context.Context, hook func(context.Context, SealedPeriod) error) ([]SealedPeriod, error) {
	if lb.store == nil {
		return nil, fmt.Errorf("%w: Seal needs a store (WithStore)", ErrInvalidArgument)
	}
	now := lb.now()
	live, err := lb.livePeriods(now)
	if err != nil {
		return nil, err
	}
	var out []SealedPeriod
	for _, tg := range live {
		if tg.expire == 0 || now.Before(tg.period.End) {
			continue // never closes, or still open
		}
		if _, sealed, err := lb.store.Sealed(ctx, lb.name, tg.window.Name(), tg.period.ID); err != nil {
			return out, fmt.Errorf("leaderboard: seal: store: %w", err)
		} else if sealed {
			continue
		}
		sp := SealedPeriod{Window: tg.window.Name(), Period: tg.period.ID}
		for n := 1; ; n++ {
			p, err := lb.Page(ctx, n, MaxN, In(tg.window), At(tg.period.Start))
			if err != nil {
				return out, err
			}
			sp.Entries = append(sp.Entries, p.Entries...)
			if len(p.Entries) < MaxN {
				break
			}
		}
		if len(sp.Entries) == 0 {
			continue // nobody played: nothing to keep or reward
		}
		first, err := lb.store.Seal(ctx, lb.name, tg.window.Name(), tg.period.ID, sp.Entries)
		if err != nil {
			return out, fmt.Errorf("leaderboard: seal: store: %w", err)
		}
		if !first {
			continue // another process sealed it meanwhile
		}
		out = append(out, sp)
		if hook != nil {
			if err := hook(ctx, sp); err != nil {
				return out, fmt.Errorf("leaderboard: seal hook for %s/%s: %w", sp.Window, sp.Period, err)
			}
		}
	}
	return out, nil
}

// Sealed returns the final standings of the period the queries pick (the
// default window's current period without At), as sealed into the store,
// long after its Redis key expired; ok is false when it was never sealed.
func (lb *Leaderboard) Sealed(ctx context.Context, q ...Query) (entries []Entry, ok bool, err error) {
	if lb.store == nil {
		return nil, false, fmt.Errorf("%w: Sealed needs a store (WithStore)", ErrInvalidArgument)
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, false, err
	}
	entries, ok, err = lb.store.Sealed(ctx, lb.name, tg.window.Name(), tg.period.ID)
	if err != nil {
		return nil, false, fmt.Errorf("leaderboard: sealed: store: %w", err)
	}
	return entries, ok, nil
}
