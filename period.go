package leaderboard

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
)

// target is one window period an operation reads or writes.
type target struct {
	window Window
	period Period
	key    string
	hot    string // the hot top's mirror key (WithHotTop); "" without one
	// hotRead is the cached read of the mirror, built once a period and
	// pinned so that every read sends it again (WithHotTop): with DoCache,
	// or as a plain GET with Do on a client that does not cache (hotGet).
	hotRead rueidis.Cacheable
	// shards and shadowShards are a sharded board's shard keys of the
	// period, by shard, and its shadow layout's (WithShadowShards): built
	// once a period with the rest, as a read names most of its shards
	// (backend.layoutKeys); nil on an unsharded board. Read only.
	shards, shadowShards []string
	expire               int64 // unix ms when the key expires; 0 for never
	// data is a read's IncludeData: fill each entry's Data.
	data bool
}

// target resolves the period of w holding t: from lb.current when it holds
// t, else from w (Window.Period is a function of t alone).
func (lb *Leaderboard) target(w Window, t time.Time) (target, error) {
	slot := lb.currentSlot(w)
	if c := heldBy(slot, t); c != nil {
		return *c, nil
	}
	return lb.resolveIn(slot, w, t, lb.now())
}

// targetIn is target with w's entry in lb.current (currentSlot) found and
// the board's clock read (now).
func (lb *Leaderboard) targetIn(slot *atomic.Pointer[target], w Window, t, now time.Time) (target, error) {
	if c := heldBy(slot, t); c != nil {
		return *c, nil
	}
	return lb.resolveIn(slot, w, t, now)
}

// resolveIn resolves w's period holding t and caches it in slot when it
// is the current one, the period holding now. A period read or written At
// another time, later or earlier, is not cached: it would evict the
// current one, which every call without At would then resolve again.
func (lb *Leaderboard) resolveIn(slot *atomic.Pointer[target], w Window, t, now time.Time) (target, error) {
	tg, err := lb.resolve(w, t)
	if err == nil && slot != nil && tg.holds(now) {
		slot.Store(&tg)
	}
	return tg, err
}

// heldBy is the period cached in slot when it holds t, else nil (also for
// a nil slot: a window the board does not have).
func heldBy(slot *atomic.Pointer[target], t time.Time) *target {
	if slot == nil {
		return nil
	}
	if c := slot.Load(); c != nil && c.holds(t) {
		return c
	}
	return nil
}

// currentSlot is w's entry in lb.current; nil for a window the board does
// not have.
func (lb *Leaderboard) currentSlot(w Window) *atomic.Pointer[target] {
	name := w.Name()
	for i, bw := range lb.windows {
		if bw.Name() == name {
			return &lb.current[i]
		}
	}
	return nil
}

// timeless reports whether the target's period never ends nor expires
// (AllTime without retention): it holds every instant, so a read of it
// needs no clock (a clock read is a large part of a read served from
// memory: WithHotTop).
func (tg *target) timeless() bool {
	return tg.period.Start.IsZero() && tg.period.End.IsZero() && tg.expire == 0
}

// holds reports whether t lies in the target's period, which must have a
// known start unless it never ends.
func (tg *target) holds(t time.Time) bool {
	p := tg.period
	switch {
	case p.Start.IsZero():
		return p.End.IsZero()
	case t.Before(p.Start):
		return false
	}
	return p.End.IsZero() || t.Before(p.End)
}

// resolve builds the target of w's period holding t.
func (lb *Leaderboard) resolve(w Window, t time.Time) (target, error) {
	return lb.resolvePeriod(w, w.Period(t), t)
}

// resolvePeriod builds the target of p, the period w gave for t.
func (lb *Leaderboard) resolvePeriod(w Window, p Period, t time.Time) (target, error) {
	// A period that never ends must hold t too: one starting after t
	// would take a score no Rebuild finds (the store counts the period
	// from its start).
	if err := checkPeriod(w, p, t); err != nil {
		return target{}, err
	}
	tg := target{window: w, period: p, key: lb.keys.Period(w.Name(), p.ID), expire: lb.expiry(p)}
	tg.shards, tg.shadowShards = lb.be.layoutKeys(w.Name(), p.ID)
	if lb.hot != nil {
		tg.hot = lb.keys.Hot(w.Name(), p.ID)
		tg.hotRead = lb.hotReadCmd(tg.hot).Pin()
	}
	return tg, nil
}

// checkPeriod checks a period p that w gave for t: a valid ID, and t
// held (checkHolds).
func checkPeriod(w Window, p Period, t time.Time) error {
	if !keys.ValidSegment(p.ID) {
		return fmt.Errorf("%w: window %q gave period ID %q for %v, which must be non-empty printable UTF-8 of at most %d bytes, without whitespace, braces or ':'", ErrInvalidArgument, w.Name(), p.ID, t, keys.MaxNameLen)
	}
	return checkHolds(w, p, t)
}

// checkHolds checks that p, which w gave for t, holds t: a zero Start or
// End bounds nothing on its side.
func checkHolds(w Window, p Period, t time.Time) error {
	if (!p.End.IsZero() && !t.Before(p.End)) || (!p.Start.IsZero() && t.Before(p.Start)) {
		return fmt.Errorf("%w: window %q gave period %q [%v, %v) for %v, which does not hold it", ErrInvalidArgument, w.Name(), p.ID, p.Start, p.End, t)
	}
	return nil
}

// expiry is when p's key expires, in unix ms: its end plus the retention
// (WithRetention; by default the period's length); 0 for a period that
// never ends, which is why an expiry on the Unix epoch itself is a
// millisecond before it (-1): as 0 it would never expire.
func (lb *Leaderboard) expiry(p Period) int64 {
	if p.End.IsZero() {
		return 0
	}
	keep := lb.retention
	if !lb.retained && !p.Start.IsZero() {
		keep = p.End.Sub(p.Start)
	}
	if ms := unixMilli(p.End.Add(keep)); ms != 0 {
		return ms
	}
	return -1
}

// firstMilli and lastMilli are the first and last instants whose Unix
// milliseconds an int64 holds.
var firstMilli, lastMilli = time.UnixMilli(math.MinInt64), time.UnixMilli(math.MaxInt64)

// unixMilli is t's Unix milliseconds, math.MaxInt64 for a t beyond them
// (an At some hundred million years ahead) and math.MinInt64 for one
// before them (a WithTime as far back): UnixMilli would wrap around, and
// such a period would read as expired, or one of the far past as live for
// ages, taking writes under a key no Remove or Delete reaches.
func unixMilli(t time.Time) int64 {
	switch {
	case t.After(lastMilli):
		return math.MaxInt64
	case t.Before(firstMilli):
		return math.MinInt64
	}
	return t.UnixMilli()
}

// parseQueries applies a read's queries. Most reads pass none, and get
// the zero query without a heap allocation: applying a Query takes the
// query's address, which moves it to the heap.
func parseQueries(qs []Query) (query, error) {
	if len(qs) == 0 {
		return query{}, nil
	}
	return applyQueries(qs)
}

// applyQueries applies one or more queries (parseQueries).
func applyQueries(qs []Query) (query, error) {
	var q query
	for _, fn := range qs {
		if fn == nil {
			return q, fmt.Errorf("%w: nil query", ErrInvalidArgument)
		}
		fn(&q)
	}
	if q.in && nilValue(q.window) {
		return q, fmt.Errorf("%w: In: nil window", ErrInvalidArgument)
	}
	if q.zeroAt {
		return q, fmt.Errorf("%w: At: the zero time", ErrInvalidArgument)
	}
	return q, nil
}

// window returns the configured window with w's name.
func (lb *Leaderboard) window(w Window) (Window, error) {
	name := w.Name()
	for _, c := range lb.windows {
		if c.Name() == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("%w: window %q is not configured on this board", ErrInvalidArgument, name)
}

// queryWindow is the window a query names with In, else the default one.
func (lb *Leaderboard) queryWindow(q query) (Window, error) {
	if q.window == nil {
		return lb.windows[0], nil
	}
	return lb.window(q.window)
}

// read resolves the period a read looks at: ErrExpired once its
// retention is over.
func (lb *Leaderboard) read(qs []Query) (target, error) {
	tg, now, err := lb.pick(qs)
	if err != nil {
		return target{}, err
	}
	if err := expiredAt(tg, now); err != nil {
		return target{}, err
	}
	return tg, nil
}

// expiredAt is ErrExpired when tg's retention is over at now (its key
// gone, or about to be), else nil: what a read, or Check, of it returns.
func expiredAt(tg target, now time.Time) error {
	if tg.expire == 0 || tg.expire > now.UnixMilli() {
		return nil
	}
	return fmt.Errorf("%w: window %q, period %q: its retention ended at %v", ErrExpired, tg.window.Name(), tg.period.ID,
		time.UnixMilli(tg.expire).UTC().Format(time.RFC3339))
}

// pick resolves the period the queries pick (the default window's current
// one without In and At), whether or not its retention is over, and
// returns the board's clock it read: zero when the cached period of a
// window without periods (AllTime) answered without it.
func (lb *Leaderboard) pick(qs []Query) (target, time.Time, error) {
	q, err := parseQueries(qs)
	if err != nil {
		return target{}, time.Time{}, err
	}
	w, err := lb.queryWindow(q)
	if err != nil {
		return target{}, time.Time{}, err
	}
	slot := lb.currentSlot(w)
	if q.at.IsZero() && slot != nil {
		if c := slot.Load(); c != nil && c.timeless() {
			tg := *c
			tg.data = q.data
			return tg, time.Time{}, nil
		}
	}
	now := lb.now()
	t := q.at
	if t.IsZero() {
		t = now
	}
	tg, err := lb.targetIn(slot, w, t, now)
	tg.data = q.data
	return tg, now, err
}

// livePeriods lists, window by window in the board's order, the periods
// that may hold keys at now, newest first: those another process's clock
// may already write into (aheadPeriods), the current one and the closed
// ones whose keys still live (windowLivePeriods). What Remove, Delete,
// Rebuild, Verify, Seal, FillShadow and DropShadow walk.
func (lb *Leaderboard) livePeriods(now time.Time) ([]target, error) {
	var out []target
	for _, w := range lb.windows {
		ps, err := lb.windowLivePeriods(w, now)
		if err != nil {
			return nil, err
		}
		ahead, err := lb.aheadPeriods(w, now)
		if err != nil {
			return nil, err
		}
		out = append(append(out, ahead...), ps...)
	}
	return out, nil
}

// aheadPeriods lists w's periods after the current one that start within
// the board's clock skew after now, newest first. A process whose clock
// runs ahead of this one's by up to WithClockSkew, as processes of one
// board may, writes into them already: a Remove, Delete or Rebuild run
// here just before a period's end must reach them, or a removed member, a
// deleted board or a lost score would come back when this clock crosses.
func (lb *Leaderboard) aheadPeriods(w Window, now time.Time) ([]target, error) {
	cur, err := lb.target(w, now)
	if err != nil {
		return nil, err
	}
	limit := now.Add(lb.skew)
	var out []target
	for b := cur.period.End; !b.IsZero() && !b.After(limit); {
		tg, err := lb.target(w, b)
		if err != nil {
			return nil, err
		}
		if !tg.period.End.IsZero() && !tg.period.End.After(b) {
			return nil, fmt.Errorf("%w: window %q gave period %q [%v, %v) for %v, which does not end after it",
				ErrInvalidArgument, w.Name(), tg.period.ID, tg.period.Start, tg.period.End, b)
		}
		if len(out) == maxLivePeriods {
			return nil, fmt.Errorf("%w: window %q holds over %d periods within the clock skew", ErrInvalidArgument, w.Name(), maxLivePeriods)
		}
		out = append(out, tg)
		b = tg.period.End
	}
	slices.Reverse(out)
	return out, nil
}

// maxLivePeriods bounds the periods windowLivePeriods lists: a window
// with more readable periods than this (a one-second window kept for two
// weeks) is refused with an error, never cut short in silence (Remove
// must reach every readable period).
const maxLivePeriods = 1_000_000

// maxLookback bounds how far back windowLivePeriods looks under the
// default retention, where a period's retention is its own length, so
// that no bound follows from the board's options: a period that ended
// longer ago than this would have to be longer than this to be still
// readable (a century: no real window's), and is neither listed (Periods)
// nor reached (Remove, Delete). It also keeps the window from
// being asked about instants far from now, where a window's own
// arithmetic may overflow.
const maxLookback = 100 * 365 * 24 * time.Hour

// windowLivePeriods lists w's current period and the closed ones whose
// retention has not ended at now, newest first. It walks back from the
// current period's start b, asking w for the period before b, and stops
// once no period ending by b can be readable: once b <= now - the longest
// retention the board gives a period, WithRetention's, else maxLookback.
//
// With WithRetention every period ending after now - retention is
// readable, so the walk is period by period, and maxLivePeriods bounds
// it. With the default retention readable periods need not be contiguous
// (a long season stays readable after the short event that followed it
// has expired), so the walk skips (skipTo) the periods it can prove
// expired; each step more than doubles now - b, so it takes at most 63
// steps (maxLookback is under 2^62ns), of which only the first one or two
// find a readable period for the built-in windows.
func (lb *Leaderboard) windowLivePeriods(w Window, now time.Time) ([]target, error) {
	cur, err := lb.target(w, now)
	if err != nil {
		return nil, err
	}
	stop, nowMs := now.Add(-maxLookback), now.UnixMilli()
	if lb.retained {
		stop = now.Add(-lb.retention)
	}
	var out []target
	if cur.expire == 0 || cur.expire > nowMs { // it may not, in its last millisecond with no retention
		out = append(out, cur)
	}
	// The period before the current one is always looked at, even when it
	// cannot be readable, so that a window whose periods do not move back
	// is refused, not walked in silence.
	for b, first := cur.period.Start, true; !b.IsZero() && (first || b.After(stop)); first = false {
		t := lb.skipTo(b, now, stop).Add(-time.Nanosecond)
		p := w.Period(t)
		if p.End.IsZero() || p.End.After(b) {
			return nil, fmt.Errorf("%w: window %q gave period %q [%v, %v) for %v, which does not end by %v, where the next period starts",
				ErrInvalidArgument, w.Name(), p.ID, p.Start, p.End, t, b)
		}
		if err := checkHolds(w, p, t); err != nil {
			return nil, err
		}
		live := lb.expiry(p) > nowMs
		if !live && lb.retained {
			break // every older period ended earlier and is kept as long
		}
		if live {
			if len(out) == maxLivePeriods {
				return nil, fmt.Errorf("%w: window %q holds over %d readable periods", ErrInvalidArgument, w.Name(), maxLivePeriods)
			}
			tg, err := lb.resolvePeriod(w, p, t)
			if err != nil {
				return nil, err
			}
			out = append(out, tg)
		}
		b = p.Start
	}
	return out, nil
}

// skipTo is the instant windowLivePeriods looks just before for the next
// period older than b, the start of the oldest period it has looked at.
// With WithRetention that is b itself. With the default retention it is
// 2b - now (no earlier than stop): a period within [2b-now, b) is at most
// now - b long and ended by b, so its retention, its length, ended by now.
// Never after b: a current period that started before stop (more than
// maxLookback ago) is followed back by the one just before it, not by an
// instant it holds itself.
func (lb *Leaderboard) skipTo(b, now, stop time.Time) time.Time {
	if lb.retained || !b.After(stop) {
		return b
	}
	t := b.Add(b.Sub(now))
	if t.Before(stop) {
		return stop
	}
	return t
}

// targetsAt resolves every window's period holding t, in the board's order
// of windows: what a write goes to.
func (lb *Leaderboard) targetsAt(t time.Time) ([]target, error) {
	out := make([]target, len(lb.windows))
	return out, lb.targetsInto(out, t)
}

// targetsInto is targetsAt into out, of one target a window.
func (lb *Leaderboard) targetsInto(out []target, t time.Time) error {
	for i := range lb.windows {
		// The current period, copied straight into out: every write
		// passes here, often on a fresh goroutine whose stack a target
		// held in this frame would make grow.
		if c := heldBy(&lb.current[i], t); c != nil {
			out[i] = *c
			continue
		}
		if err := lb.targetInto(&out[i], lb.windows[i], t); err != nil {
			return err
		}
	}
	return nil
}

// targetInto resolves into dst what target does: the slow way of
// targetsAt, out of its frame (not inlined, or the target it holds lands
// in targetsAt's frame again).
//
//go:noinline
func (lb *Leaderboard) targetInto(dst *target, w Window, t time.Time) error {
	tg, err := lb.target(w, t)
	*dst = tg
	return err
}
