package leaderboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by a Batcher's Submit after Close.
var ErrClosed = errors.New("leaderboard: batcher closed")

// Batcher coalesces Submits that arrive within a short window into one write: a
// member's submissions to the same window periods fold into one by the board's
// policy (KeepBest: the best; Replace: the last; Accumulate: the sum), a
// submission into its member's newest write only (one WithTime into other
// periods between them starts a new write), and each batch goes to Redis as one
// script, in one round trip on an unsharded board and on a sharded one whose
// keys share one node. Every caller waits for the batch that carries its
// submission and gets its own Result: the member's standings before and after
// the folded write that applied it (so two callers folded together see the same
// standings, and Changed says whether that write changed the stored score). A
// hot board's players that submit several times a second then cost Redis one
// write a batch, not one a submission.
//
// A batch is sent when its window (WithBatchWindow) has passed since its
// first submission, or when it holds WithBatchSize writes, or, when that
// comes first, at the end (by the board's clock) of a period one of its
// writes goes to: a submission made just before a period ends then reaches
// it within the clock skew that Seal waits after the end, as a Submit's
// does, not up to a window later, after Seal sealed the period without it.
// Batches reach Redis one after another, in the order they were opened, so
// a later submission is never applied before an earlier one. Close sends
// what is pending and waits for it.
//
// Bad input returns its error at once and joins no batch. A submission WithID
// is written on its own, as Submit writes it (its id is checked and recorded
// with it), and is not folded: it waits for its member's submissions before it
// to be written, and while it is in flight the member's next submissions are
// written on their own after it, so that a member's submissions apply in their
// order. A submission whose every window period has closed joins no batch
// either: it is answered at once, Closed, and recorded in a store as Submit
// records it (Close waits for that record). After Close, Submit returns
// ErrClosed, whatever the submission, bad input included; a Batcher not
// made by NewBatcher (its zero value) is closed. Under Accumulate a
// submission folds only into a write of
// the same sign (so a total in range at the end of a fold was in range all
// along), and one whose sum would leave the range starts a write of its own;
// and so that one submission's refusal is never another's, a folded write Redis
// refuses (its sum out of range with what is stored) is written again one
// submission at a time, after the rest of its batch, each as a Submit (one
// round trip; a sharded Cluster board's two steps). After any refused write its
// member's later writes in the batch wait and are written after it the same
// way, so that a member's submissions apply in their order. Without a tie-break
// only whole numbers fold (a tie-break's scaled scores always do): float64 adds
// them exactly in any order, where 0.1 + (0.2 + 0.3) is not (0.1 + 0.2) + 0.3,
// the order a store adds them in; a member's other scores are each a write of
// their own in the batch, in order (what a member's further writes in a batch
// cost on each kind of board: doc.go). A whole-number fold added to a total
// that is not a whole number (the member once scored a fraction), or to one
// whose size passes 2^53 (where float64 holds only every second whole number
// or fewer: 2^53 + 1 + 1 is 2^53 one by one, 2^53 + 2 folded), may still
// differ from the store's in the last bits, which Verify names; a tie-break
// with Decimals keeps every total exact.
//
// With a store, every submission of a batch reaches the store (in one call
// when it is a BatchAppender) before the batch reaches Redis: a store
// failure fails every caller of the batch and leaves Redis untouched, a
// Redis failure after it returns ErrPending to every caller it fails (on
// a sharded board on a Cluster, when one partition group's call fails,
// that group's callers alone), and a
// submission Redis refuses is retracted as Submit retracts it. A store
// that takes submissions one at a time and fails part way has those it
// took retracted (a Retractor); when they cannot be, their callers get
// ErrPending (stored, in Redis at the next Rebuild) and the others the
// store's error.
//
// On an unsharded board a batch is one script (batch.lua), and on a
// sharded board (WithShards) whose keys share one node too
// (shard_batch.lua, with a shadow layout's share after it in the same
// round trip while one is kept, as Submit sends it): each write is atomic
// across its windows, and the batch as a whole too, the first time a
// server runs the script excepted. On a sharded board on a Cluster a
// batch takes Submit's two steps, each one round trip for the whole
// batch: the members' partitions (a call for the members of a partition
// group, the 32 partitions under one hash tag, that go to the same periods
// with the same time slot and data), then the
// shards (a call for each shard of each period written, and a read of the
// members whose write changed nothing in their other shards: a copy found
// there, left by a write that died between its steps, is dropped in one
// round trip more, as a Submit drops it). Each write is
// atomic in each step, as a Submit is, not the batch as a whole, and each
// caller's standings are its rank in its shard when its write applied
// with the other shards' counts after the batch (so Total too is the
// count after the batch), as if the batch's writes were Submits sent at
// once. A member's further writes in the batch (WithTime, to other
// periods; under Accumulate, scores that did not fold into its first) and
// the writes of a partition group's call Redis refused are written after
// it, each as a Submit. A caller whose ctx ends before its
// batch is written gets ctx's error; its submission may still be written,
// as a Submit that times out may have been; a ctx that has ended when
// Submit is called joins no batch, and nothing of it is written (ctx's
// error), as with the board's Submit. Callers of a batch that share one
// ctx (a service's own, say) are woken together: the Batcher watches that
// ctx once a batch, not once a caller (one such ctx a batch, the first
// that two callers in a row share; the others' callers wait each on its
// own). The batch's write runs with
// the values, not the deadline, of the ctx of the first submission in it:
// it is bounded by the client's own timeouts and the store's, and a store
// call that never returns holds that batch and every later one (give a
// store's database a statement timeout: pgstore's pool, statement_timeout).
// A batch Redis refuses before running it (a slot migrating, CLUSTERDOWN,
// LOADING; see New) is sent again until Redis runs it, holding the later
// ones meanwhile.
//
// A Batcher is safe for concurrent use.
type Batcher struct {
	lb     *Leaderboard
	window time.Duration
	size   int

	mu     sync.Mutex
	cur    *batch        // the batch collecting submissions, nil when none
	queued []*batch      // sent, waiting for the batch before: still folding
	last   chan struct{} // closed when the batch sent last is written
	// writing is the batch writing (batches write one at a time): a
	// member's write there is not done until its done is closed.
	writing *batch
	// closed is set by Close, under mu (so that a submission that saw it
	// unset under mu is waited for); Submit's first look reads it without
	// the lock, to refuse a submission before checking it.
	closed atomic.Bool
	alone  sync.WaitGroup // submissions written on their own, in flight
	// after holds, for each member with a submission written on its own
	// in flight, the done of the newest: the member's next submissions
	// are written on their own after it, so that they apply in order.
	after  map[string]chan struct{}
	joined int // submissions that joined a batch, ever
	writes int // writes made, ever: the next one's seq
	// traced, when set (tests), learns the seq of the write each
	// submission joined, in the order they joined.
	traced func(seq int)
}

// BatchOption configures a Batcher.
type BatchOption func(*batchConfig)

type batchConfig struct {
	window time.Duration
	size   int
}

// Batch defaults and bounds (see WithBatchWindow, WithBatchSize).
const (
	defaultBatchWindow = 100 * time.Millisecond
	maxBatchWindow     = time.Minute
	defaultBatchSize   = 512
)

// WithBatchWindow sets how long a batch collects submissions after its
// first one before it is sent: a caller waits up to this long more than a
// Submit takes. Default 100 ms; 0 < d <= 1 minute.
func WithBatchWindow(d time.Duration) BatchOption {
	return func(c *batchConfig) { c.window = d }
}

// WithBatchSize sets how many folded writes (distinct members, or members
// with submissions in distinct periods) a batch holds at most: a full
// batch is sent at once. It bounds how long one batch's script holds
// Redis: about 6 µs a write of one window on the machine BENCHMARKS.md
// describes, 3 ms for a full batch of the default. Default 512;
// 1 <= n <= MaxN.
func WithBatchSize(n int) BatchOption {
	return func(c *batchConfig) { c.size = n }
}

// NewBatcher returns a Batcher for the board. Bad options return
// ErrInvalidArgument.
func (lb *Leaderboard) NewBatcher(opts ...BatchOption) (*Batcher, error) {
	c := batchConfig{window: defaultBatchWindow, size: defaultBatchSize}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil batch option", ErrInvalidArgument)
		}
		opt(&c)
	}
	if c.window <= 0 || c.window > maxBatchWindow {
		return nil, fmt.Errorf("%w: batch window %v, want over 0 and at most %v", ErrInvalidArgument, c.window, maxBatchWindow)
	}
	if c.size < 1 || c.size > MaxN {
		return nil, fmt.Errorf("%w: batch size %d, want 1..%d", ErrInvalidArgument, c.size, MaxN)
	}
	return &Batcher{lb: lb, window: c.window, size: c.size}, nil
}

// batch is the submissions a Batcher collects and writes together.
type batch struct {
	writes  []*batchWrite
	newest  map[string]*batchWrite // each member's newest write: the one its next submission may fold into
	records []Submission           // for the store: every submission, in arrival order
	owners  []*batchJoin           // records[i] is owners[i]'s
	ctx     context.Context        // the first submission's, without its cancel
	timer   *time.Timer
	// due is when, by the board's clock, the batch is to be sent: its
	// window after its first submission, or the end of a period it writes
	// when that comes first (see sendBy).
	due  time.Time
	done chan struct{} // closed when written; err is set before
	err  error         // the whole batch's
	// shared is the Done of the newest caller's ctx until two callers
	// in a row share one; watch then wakes the callers that share it
	// (sharedWake).
	shared <-chan struct{}
	watch  *ctxWatch
}

// ctxWatch wakes, with one channel, the callers of a batch whose ctxs
// share one Done: ch is closed when the batch is written or when that
// Done is, whichever comes first. A caller that selected on its batch's
// done and its ctx's Done would queue on both channels' locks: thousands
// of callers sharing a service's ctx then take turns on that one lock
// twice each; with a watch, the ctx is watched once a batch.
type ctxWatch struct {
	ch   chan struct{}
	stop func() bool // context.AfterFunc's: true when it stopped the close
}

// sharedWake returns what a caller whose ctx is ctx (d its Done) waits
// on once it has joined bt: nil for its own select on bt.done and ctx (a
// ctx that cannot end, a ctx of its own, the first of a shared one), or the
// watch's channel of the ctx it shares with callers before it. A watch
// starts when two callers in a row share a ctx, so that a batch's first
// caller with a ctx of its own does not keep the rest, sharing one,
// from it; a batch watches one ctx at most. Called with b.mu held, before
// bt starts writing.
func (bt *batch) sharedWake(ctx context.Context, d <-chan struct{}) chan struct{} {
	switch {
	case d == nil:
		return nil
	case bt.watch != nil:
		if bt.shared != d {
			return nil
		}
	case bt.shared != d:
		bt.shared = d
		return nil
	default:
		bt.watch = newCtxWatch(ctx)
	}
	return bt.watch.ch
}

// newCtxWatch watches ctx for a batch (see ctxWatch). Not inlined: once a
// batch, and its frame would weigh on sharedWake's, under the Batcher's
// lock (see recordStored).
//
//go:noinline
func newCtxWatch(ctx context.Context) *ctxWatch {
	w := &ctxWatch{ch: make(chan struct{})}
	w.stop = context.AfterFunc(ctx, func() { close(w.ch) })
	return w
}

// wait waits until bt is written or ctx ends; wake is sharedWake's.
func (bt *batch) wait(ctx context.Context, wake chan struct{}) error {
	if wake == nil {
		return waitFor(ctx, bt.done)
	}
	<-wake
	select {
	case <-bt.done:
		return nil
	default: // woken by the ctx's end before the write's
		return ctxEnded(ctx)
	}
}

// batchWrite is one folded write of a batch: sub, with every submission
// folded into it, to the periods live (reporting live[j] into out[where[j]]).
type batchWrite struct {
	seq   int // the Batcher's writes are applied in this order
	key   foldID
	sub   submission
	live  []target
	where []int
	out   []WindowResult
	err   error // its own: a refusal, or a failure of its write alone
	// joins is the list of the callers' submissions folded into the
	// write, in the order they came (through batchJoin.next), last its
	// end: a list, not a slice, as a fold then allocates nothing under
	// the Batcher's lock.
	joins, last *batchJoin
	// The out of a one-window board: a new write costs one allocation,
	// not three (join runs under the Batcher's lock).
	out1   [1]WindowResult
	live1  [1]target
	where1 [1]int
}

// newBatchWrite is the write seq of j's submission to the periods live,
// j its first join; the write keeps a copy of live and where, and reports
// into a copy of j.out.
func newBatchWrite(seq int, j *batchJoin, live []target, where []int) *batchWrite {
	w := &batchWrite{seq: seq, sub: j.sub, joins: j, last: j}
	if len(j.out) == 1 {
		w.out1[0] = j.out[0]
		w.out = w.out1[:]
	} else {
		w.out = slices.Clone(j.out)
	}
	if len(live) == 1 {
		w.live1[0], w.where1[0] = live[0], where[0]
		w.live, w.where = w.live1[:], w.where1[:]
	} else {
		w.live, w.where = slices.Clone(live), slices.Clone(where)
	}
	return w
}

// add adds j to w's joins.
func (w *batchWrite) add(j *batchJoin) {
	w.last.next, w.last = j, j
}

// batchJoin is one caller's submission in a write. A write that Redis
// refused is written again one submission at a time (see writeAlone):
// then each caller's answer is its own (alone).
type batchJoin struct {
	sub    submission
	record []Submission // as the store has it; nil without a store
	alone  bool
	out    []WindowResult // the caller's Result.Windows: with alone, where its own answer goes
	err    error
	wake   chan struct{} // besides its batch's done, what the caller waits on (sharedWake)
	next   *batchJoin    // the next one in its write (batchWrite.joins)
}

// Submit submits as the board's Submit does, through the next batch; it
// returns when that batch is written (see Batcher).
func (b *Batcher) Submit(ctx context.Context, member string, score float64, opts ...SubmitOption) (_ Result, err error) {
	defer endedWith(ctx, &err)
	if b.closed.Load() || b.lb == nil { // a zero Batcher is closed
		return Result{}, ErrClosed
	}
	c := &batchCall{}
	c.join.out = c.window[:]
	// What checks the submission and joins it runs in enter, whose frame
	// (the board's periods, copies of the submission) is gone before the
	// caller waits: thousands of callers wait at once, each on its own
	// stack, which the garbage collector scans and which would else grow.
	bt, w, err := b.enter(ctx, c, member, score, opts)
	switch {
	case errors.Is(err, errAfterAlone):
		return b.submitCallAlone(ctx, c)
	case err != nil:
		return Result{}, err
	case bt == nil: // every window period has closed
		if b.lb.store != nil {
			// Recorded as Submit records it (the store keeps every
			// submission); it counts in no period a board reads.
			return b.recordClosed(ctx, c)
		}
		if b.isClosed() {
			return Result{}, ErrClosed
		}
	default:
		if err := b.await(ctx, bt, w, &c.join); err != nil {
			return Result{}, err
		}
	}
	res := Result{Windows: c.join.out}
	first := &res.Windows[0]
	res.Standing, res.Previous, res.Changed = first.Standing, first.Previous, first.Changed
	return res, nil
}

// enter checks a submission into c.join and joins it to a batch: it
// returns the batch and the write it joined; no batch and no error when
// every window period of the submission has closed; errAfterAlone when it
// is written on its own (WithID, or its member has a submission on its own
// in flight).
func (b *Batcher) enter(ctx context.Context, c *batchCall, member string, score float64, opts []SubmitOption) (*batch, *batchWrite, error) {
	lb, sub := b.lb, &c.join.sub
	var err error
	if *sub, err = lb.newSubmission(member, score, opts); err != nil {
		return nil, nil, err
	}
	if err := lb.storeRefuses("batch submit", sub); err != nil {
		return nil, nil, err
	}
	if sub.id != "" {
		return nil, nil, errAfterAlone
	}
	// The periods stay on this frame: a submission that folds into a
	// write (most, on a busy board) needs them only to find it, and a new
	// write keeps a copy.
	var allBuf [1]target
	var whereBuf [1]int
	all, wb := allBuf[:], whereBuf[:]
	if n := len(lb.windows); n != 1 {
		c.join.out, all, wb = make([]WindowResult, n), make([]target, n), make([]int, n)
	}
	live, where, err := lb.submitTargets(sub, c.join.out, all, wb)
	if err != nil {
		return nil, nil, err
	}
	if err := notStarted(ctx, "batch submit"); err != nil {
		// Ended already: nothing is written, as the board's Submit
		// writes nothing then (a batch would write it all the same), and
		// the answer is ctx's error, as Submit's, even for a submission
		// whose every window period has closed.
		return nil, nil, err
	}
	if len(live) == 0 {
		return nil, nil, nil
	}
	return b.join(ctx, &c.join, live, where)
}

// await waits for bt, which holds j's submission in w, and puts the
// submission's standings into j.out.
func (b *Batcher) await(ctx context.Context, bt *batch, w *batchWrite, j *batchJoin) error {
	if err := bt.wait(ctx, j.wake); err != nil {
		return err
	}
	err := w.err
	switch {
	case j.alone:
		err = j.err // written alone: into j.out itself
	case j.err != nil:
		return j.err // stored before the store failed
	}
	if bt.err != nil || err != nil {
		return cmp.Or(bt.err, err)
	}
	if !j.alone {
		// w goes to the periods j's submission does (the same keys, so
		// the same windows), and reports them at the same places.
		for _, i := range w.where {
			j.out[i] = w.out[i]
		}
	}
	return nil
}

// submitCallAlone writes c's submission on its own (see submitAlone). Not
// inlined: its copy of the submission would weigh on Submit's frame.
//
//go:noinline
func (b *Batcher) submitCallAlone(ctx context.Context, c *batchCall) (Result, error) {
	return b.submitAlone(ctx, c.join.sub)
}

// submitAlone writes sub on its own, as the board's Submit writes it (a
// WithID submission, or one of a member with such a submission in flight),
// after every earlier submission of its member the Batcher holds: a write
// in a batch not yet written, a submission on its own in flight. A caller
// whose ctx ends first gets ctx's error, and its submission is not written.
func (b *Batcher) submitAlone(ctx context.Context, sub submission) (Result, error) {
	before, mine, ok := b.startAlone(sub.member)
	if !ok {
		return Result{}, ErrClosed
	}
	for i, done := range before {
		if err := waitFor(ctx, done); err != nil {
			// The member's next submissions still wait for those before.
			go func() {
				for _, done := range before[i:] {
					<-done
				}
				b.endAlone(sub.member, mine)
			}()
			return Result{}, err
		}
	}
	defer b.endAlone(sub.member, mine)
	return b.lb.submitChecked(ctx, sub)
}

// recordClosed records in the store a submission whose every window
// period has closed, at once (it waits for no batch: it writes nothing in
// Redis), counted in as a submission on its own unless the Batcher is
// closed, so that Close waits for it: a store call after Close returned
// would reach a store its caller may have closed by then.
//
//go:noinline
func (b *Batcher) recordClosed(ctx context.Context, c *batchCall) (Result, error) {
	b.mu.Lock()
	if b.closed.Load() {
		b.mu.Unlock()
		return Result{}, ErrClosed
	}
	b.alone.Add(1) // before Close's Wait: closed is set under this lock
	b.mu.Unlock()
	defer b.alone.Done()
	return b.lb.submitChecked(ctx, c.join.sub)
}

// startAlone counts in a submission written on its own, unless the
// Batcher is closed (Close waits for it as for a batch), and returns what
// it waits for: the done of the newest batch holding a write of member
// that is not yet written, and of the member's submission on its own
// before it; mine is its own, for the member's next ones.
func (b *Batcher) startAlone(member string) (before []chan struct{}, mine chan struct{}, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil, nil, false
	}
	b.alone.Add(1) // before Close's Wait: closed is set under this lock
	if bt := b.newestHolding(member); bt != nil {
		before = append(before, bt.done)
	}
	if prev := b.after[member]; prev != nil {
		before = append(before, prev)
	}
	if b.after == nil {
		b.after = map[string]chan struct{}{}
	}
	mine = make(chan struct{})
	b.after[member] = mine
	return before, mine, true
}

// endAlone ends a submission on its own: the member's next submissions
// no longer wait for it, and join batches again once none is in flight.
func (b *Batcher) endAlone(member string, mine chan struct{}) {
	b.mu.Lock()
	if b.after[member] == mine {
		delete(b.after, member)
	}
	b.mu.Unlock()
	close(mine)
	b.alone.Done()
}

// newestHolding is the newest batch holding a write of member that may not
// be written yet: the batch collecting, those sent, the one writing.
// Called with b.mu held.
func (b *Batcher) newestHolding(member string) *batch {
	if b.cur != nil && b.cur.newest[member] != nil {
		return b.cur
	}
	for i := len(b.queued) - 1; i >= 0; i-- {
		if b.queued[i].newest[member] != nil {
			return b.queued[i]
		}
	}
	if b.writing != nil && b.writing.newest[member] != nil {
		return b.writing
	}
	return nil
}

// isClosed reports whether Close was called.
func (b *Batcher) isClosed() bool {
	return b.closed.Load()
}

// errAfterAlone is join's answer for a member with a submission on its own
// in flight: the caller writes it on its own after that one.
var errAfterAlone = errors.New("leaderboard: batch submit: after a submission on its own")

// batchCall is one Batcher.Submit's own memory, in one allocation on a
// one-window board: its join, and its Result's window.
type batchCall struct {
	join   batchJoin
	window [1]WindowResult
}

// join adds j's submission to a batch, and returns the batch and the
// write: folded into the member's newest write while that write's batch
// has not started writing (a batch sent and waiting for the one before it
// still folds) and it goes to the same periods, else as a new write of the
// batch collecting (a new write reports into a copy of j.out, as
// submitTargets filled it). Only the newest: folding into an older write
// of the member, to the same periods, while a newer one goes to others
// (WithTime into another day on a board with all-time and daily windows)
// would apply the submission before that newer write, in the periods they
// share and in the member's data.
func (b *Batcher) join(ctx context.Context, j *batchJoin, live []target, where []int) (*batch, *batchWrite, error) {
	lb, sub := b.lb, j.sub
	// Built before the lock, which every submission of the board takes
	// (a ctx's Done may make its channel).
	key, done, due := foldKey(sub.member, live), ctx.Done(), lb.batchDue(live, sub.at)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil, nil, ErrClosed
	}
	if b.after[sub.member] != nil {
		return nil, nil, errAfterAlone
	}
	b.joined++
	if bt, w := b.newestWrite(key); w != nil && lb.foldInto(&w.sub, &j.sub) {
		w.add(j)
		b.record(bt, j, w)
		j.wake = bt.sharedWake(ctx, done)
		return bt, w, nil
	}
	bt := b.cur
	if bt == nil {
		bt = &batch{newest: map[string]*batchWrite{}, ctx: context.WithoutCancel(ctx), done: make(chan struct{}),
			due: sub.at.Add(b.window)}
		bt.timer = time.AfterFunc(b.window, func() { b.sendIfCurrent(bt) })
		b.cur = bt
	}
	w := newBatchWrite(b.writes, j, live, where)
	w.key = key
	b.writes++
	bt.writes = append(bt.writes, w)
	bt.newest[sub.member] = w
	b.record(bt, j, w)
	j.wake = bt.sharedWake(ctx, done)
	if bt.sendBy(due, sub.at) || len(bt.writes) >= b.size {
		b.send(bt)
	}
	return bt, w, nil
}

// batchDue is when a batch holding a write to the periods live, made at
// now by the board's clock, must be sent: the earliest end of those
// periods that a Submit could still write now (one that ends after now
// less the clock skew), so that the write lands within the skew after the
// period's end that Seal waits before it seals it, as a Submit's does; a
// batch's window (up to a minute) would else carry a submission made just
// before a period's end past its seal. Zero for none: a period that never
// ends, one that ended longer ago (a replay, which Seal does not wait for).
func (lb *Leaderboard) batchDue(live []target, now time.Time) time.Time {
	var due time.Time
	for i := range live {
		end := live[i].period.End
		if !end.IsZero() && end.After(now.Add(-lb.skew)) && (due.IsZero() || end.Before(due)) {
			due = end
		}
	}
	return due
}

// sendBy brings bt's sending forward to due (batchDue) when that comes
// before it, now being the board's clock, and reports whether due has
// come: the batch is to be sent at once. Called with the Batcher's lock
// held; a timer that fired already finds bt sent (sendIfCurrent).
func (bt *batch) sendBy(due, now time.Time) bool {
	if due.IsZero() || !due.Before(bt.due) {
		return false
	}
	bt.due = due
	d := due.Sub(now)
	if d <= 0 {
		return true
	}
	bt.timer.Reset(d)
	return false
}

// newestWrite finds the member's newest write in a batch that has not
// started writing (the batch collecting, then the batches sent, newest
// first), if it goes to the periods of key. Called with b.mu held.
func (b *Batcher) newestWrite(key foldID) (*batch, *batchWrite) {
	for i := len(b.queued); i >= 0; i-- {
		bt := b.cur
		if i < len(b.queued) {
			bt = b.queued[i]
		}
		if bt == nil {
			continue
		}
		if w := bt.newest[key.member]; w != nil {
			if w.key != key {
				return nil, nil
			}
			return bt, w
		}
	}
	return nil, nil
}

// record adds j's submission, which joined w, to bt's records for the
// store.
func (b *Batcher) record(bt *batch, j *batchJoin, w *batchWrite) {
	if b.traced != nil {
		b.traced(w.seq)
	}
	if b.lb.store != nil {
		b.recordStored(bt, j, w)
	}
}

// recordStored is record's work with a store. Not inlined: its Submission
// would make every record's frame, under b.mu, hundreds of bytes larger,
// and a goroutine whose stack must grow there (a copy of it) holds the
// lock that every submission of the board takes while it does.
//
//go:noinline
func (b *Batcher) recordStored(bt *batch, j *batchJoin, w *batchWrite) {
	sub := j.sub
	j.record = []Submission{b.lb.storeSubmission(sub.member, sub.score, "", sub.reached, sub.at, w.live)}
	bt.records = append(bt.records, j.record...)
	bt.owners = append(bt.owners, j)
}

// foldID names a member's write to a set of periods: submissions with
// the same foldID fold into one write.
type foldID struct {
	member  string
	n       int    // how many periods
	periods string // their keys: one key as it is, more each length-prefixed
}

// foldKey names a member's write to the periods live; with one window
// (most boards) it costs no allocation.
func foldKey(member string, live []target) foldID {
	if len(live) == 1 {
		return foldID{member: member, n: 1, periods: live[0].key}
	}
	n := 0
	for _, tg := range live {
		n += len(tg.key) + 11
	}
	var sb strings.Builder
	sb.Grow(n)
	var num [20]byte
	for _, tg := range live {
		sb.Write(strconv.AppendInt(num[:0], int64(len(tg.key)), 10))
		sb.WriteByte(':')
		sb.WriteString(tg.key)
	}
	return foldID{member: member, n: len(live), periods: sb.String()}
}

// foldInto folds next into w, an earlier submission of the same member to
// the same periods, so that writing w does what writing both one after the
// other would; false when it cannot (an Accumulate sum out of range).
//
// By pointer, as beats and addInto: it runs under the Batcher's lock, where
// a frame that holds copies of submissions can make a goroutine's stack grow
// (see recordStored).
func (lb *Leaderboard) foldInto(w, next *submission) bool {
	data := next.data
	if data == "" {
		data = w.data // a later submission without data leaves it
	}
	switch lb.policy {
	case Replace:
		*w = *next
	case KeepBest:
		if lb.beats(next, w) {
			*w = *next
		}
	case Accumulate:
		if !lb.addInto(w, next) {
			return false
		}
	}
	w.data = data
	return true
}

// beats reports whether KeepBest keeps a over b: a better score, or under
// a tie-break the same score reached in an earlier time slot (as apply in
// writes.lua decides).
func (lb *Leaderboard) beats(a, b *submission) bool {
	if lb.tb == nil {
		if lb.high() {
			return a.stored > b.stored
		}
		return a.stored < b.stored
	}
	if a.s != b.s {
		return (a.s > b.s) == lb.high()
	}
	return a.t < b.t
}

// wholeSum reports whether a, b and their sum are whole numbers of at most
// 2^53 in size, which float64 adds exactly.
func wholeSum(a, b, sum float64) bool {
	const exact = 1 << 53
	for _, x := range [3]float64{a, b, sum} {
		if x != math.Trunc(x) || math.Abs(x) > exact {
			return false
		}
	}
	return true
}

// addInto adds next's score to w's (Accumulate), stamped with next's time
// as the script stamps a total (a 0 stamps nothing); false when next's sign
// is not the fold's, or the sum leaves the range.
func (lb *Leaderboard) addInto(w, next *submission) bool {
	// Increments of one sign only: the stored total then moves one way
	// through the fold, so a folded total in range means every total along
	// the way was, and one submission's refusal is never hidden by another
	// (+10 at 995 of 1,000 is refused alone, whatever -8 follows it).
	if (w.score > 0 && next.score < 0) || (w.score < 0 && next.score > 0) {
		return false
	}
	if lb.tb == nil {
		// Only whole numbers fold: float64 adds them exactly, in any
		// order, to a whole total of at most 2^53, as a store adding the
		// submissions one by one does (0.1 + (0.2 + 0.3) is not
		// (0.1 + 0.2) + 0.3). The stored total is not known here: past
		// 2^53 the two may differ (see Batcher).
		sum := w.score + next.score
		if !wholeSum(w.score, next.score, sum) {
			return false
		}
		w.score, w.stored = sum, sum
	} else {
		s := w.s + next.s
		switch {
		case s > lb.tb.maxS || s < -lb.tb.maxS:
			return false
		case next.s == 0:
			// Adding 0 reaches no new total, and stamps nothing (apply in
			// writes.lua). (One sign only: a fold never sums back to 0.)
			return true
		}
		w.s, w.t = s, next.t
		w.score = float64(s) / lb.tb.scale
		w.stored = lb.tb.encode(s, next.t, lb.high())
	}
	w.at, w.reached = next.at, next.reached
	return true
}

// sendIfCurrent sends bt when it is still the batch collecting (its
// window is over).
func (b *Batcher) sendIfCurrent(bt *batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == bt {
		b.send(bt)
	}
}

// send closes the batch collecting to new writes and writes it once the
// batch sent before it is written; until then its writes still take the
// submissions that fold into them. Called with b.mu held.
func (b *Batcher) send(bt *batch) {
	bt.timer.Stop()
	b.cur = nil
	b.queued = append(b.queued, bt)
	prev := b.last
	b.last = bt.done
	go func() {
		if prev != nil {
			<-prev
		}
		b.seal(bt)
		b.write(bt)
	}()
}

// seal takes bt, about to be written, out of the batches that still fold.
func (b *Batcher) seal(bt *batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queued = slices.DeleteFunc(b.queued, func(q *batch) bool { return q == bt })
	b.writing = bt
}

// write sends a batch to the store, then to Redis, and answers its callers.
func (b *Batcher) write(bt *batch) {
	defer b.written(bt)
	lb, ctx := b.lb, bt.ctx
	if lb.store != nil {
		if kept, err := lb.appendRecords(ctx, bt.records); err != nil {
			// The submissions a store without batches kept before it
			// failed are durable (ErrPending); the rest were not written.
			for _, j := range bt.owners[:kept] {
				j.err = partlyStored("batch submit", kept, len(bt.records), err)
			}
			bt.err = storeErr("batch submit", err)
			return
		}
	}
	if err := lb.be.submitBatch(ctx, bt.writes); err != nil {
		bt.err = lb.afterStore(ctx, "batch submit", wrap("batch submit", err), nil)
		return
	}
	for _, w := range bt.writes {
		switch {
		case w.err == nil:
		case errors.Is(w.err, errLater), w.joins != w.last && isRefusal(w.err):
			// In the batch's order, so a member's writes after a refused
			// one apply after it is written again.
			b.writeAlone(ctx, w)
		default:
			var records []Submission
			for j := w.joins; j != nil; j = j.next {
				records = append(records, j.record...)
			}
			w.err = lb.afterStore(ctx, "batch submit", w.err, records)
		}
	}
}

// errLater is the error of a batch's write not applied because a write of
// the same member before it was refused: the write waits to be written
// after that one is written again one submission at a time (writeAlone),
// so that a member's submissions apply in their order (under Accumulate
// the order decides which of them stay in range, and a tie-break's stamp).
var errLater = errors.New("leaderboard: batch submit: after a refused write")

// written ends bt's write: its callers are answered, and the Batcher
// keeps no hold on its memory.
func (b *Batcher) written(bt *batch) {
	b.mu.Lock()
	if b.writing == bt {
		b.writing = nil
	}
	watch := bt.watch // no caller joins bt any more: it is writing
	b.mu.Unlock()
	close(bt.done)
	if watch != nil && watch.stop() {
		close(watch.ch) // after done: a caller woken here finds it closed
	}
}

// isRefusal reports whether err is Redis refusing a write's value (an
// Accumulate total out of range), which says nothing of the submissions
// folded into it one by one.
func isRefusal(err error) bool {
	return errors.Is(err, ErrInvalidScore) || errors.Is(err, ErrPrecision)
}

// writeAlone writes again, one at a time and in order, the submissions of
// a folded write Redis refused (its sum left the range where some of them
// alone may not), or of a write that waited for its member's refused one
// (errLater): each caller then gets its own answer, and a refused one
// alone is retracted from the store. Only a refused write and its member's
// later ones pay these round trips.
func (b *Batcher) writeAlone(ctx context.Context, w *batchWrite) {
	lb := b.lb
	for j := w.joins; j != nil; j = j.next {
		j.alone = true
		_, err := lb.be.submit(ctx, j.sub, w.live, w.where, j.out)
		j.err = lb.afterStore(ctx, "batch submit", err, j.record)
	}
}

// Flush sends the batch collecting now, without waiting for its window,
// and waits until every batch sent so far is written, or ctx ends (ctx's
// error). A ctx that has ended when Flush is called returns its error at
// once, the batch sent all the same.
func (b *Batcher) Flush(ctx context.Context) error {
	b.mu.Lock()
	if b.cur != nil {
		b.send(b.cur)
	}
	last := b.last
	b.mu.Unlock()
	if ctxEnd(ctx) != nil {
		return ctxEnded(ctx) // ended before the call: sent, not waited for
	}
	return waitFor(ctx, last)
}

// Close sends what is pending, refuses further submissions (ErrClosed) and
// waits until every batch is written, and every submission written on its
// own (WithID; or, with a store, one whose every window period has closed)
// that came before it, or ctx ends (they are still written then; ctx's
// error). A ctx that has ended when Close is called returns its error at
// once, the Batcher closed and what is pending sent all the same. Closing
// twice is harmless.
func (b *Batcher) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed.Store(true)
	if b.cur != nil {
		b.send(b.cur)
	}
	last := b.last
	b.mu.Unlock()
	if ctxEnd(ctx) != nil {
		return ctxEnded(ctx) // ended before the call: closed and sent, not waited for
	}
	if err := waitFor(ctx, last); err != nil {
		return err
	}
	alone := make(chan struct{})
	go func() {
		b.alone.Wait()
		close(alone)
	}()
	return waitFor(ctx, alone)
}

// waitFor waits until done is closed (nil: at once) or ctx ends; a ctx
// that cannot end takes a plain receive, cheaper than a select.
func waitFor(ctx context.Context, done chan struct{}) error {
	if done == nil {
		return nil
	}
	if ctx.Done() == nil {
		<-done
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctxEnded(ctx)
	}
}

// ctxEnded is the error of a wait whose ctx ended first, or of a Flush or
// Close whose ctx had ended when it was called.
func ctxEnded(ctx context.Context) error {
	return fmt.Errorf("leaderboard: batcher: %w", ctxEnd(ctx))
}

// batchRefusal is the error of a write batch.lua refused: code is its
// refusal ("LBOVERFLOW key", "LBRANGE key").
func (lb *Leaderboard) batchRefusal(code string, w *batchWrite) error {
	what := fmt.Sprintf("adding %v to %q", w.sub.score, w.sub.member)
	switch {
	case strings.HasPrefix(code, "LBOVERFLOW"):
		return fmt.Errorf("%w: %s would overflow (%s)", ErrInvalidScore, what, code)
	case strings.HasPrefix(code, "LBRANGE"):
		return beyondMax(fmt.Sprintf("%s would pass MaxScore %v (%s)", what, lb.tb.order.MaxScore, code))
	}
	return fmt.Errorf("leaderboard: batch submit: %s: %s", what, code)
}
