package leaderboard

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
)

// The package's sentinel errors; match them with errors.Is.
var (
	// ErrNotRanked means the member has no score in that period.
	ErrNotRanked = errors.New("leaderboard: not ranked")
	// ErrInvalidScore means a score is NaN, ±Inf, or would leave what the
	// board can hold (an Accumulate total overflowing to ±Inf).
	ErrInvalidScore = errors.New("leaderboard: invalid score")
	// ErrInvalidMember means a member is empty or longer than MaxMemberLen.
	ErrInvalidMember = errors.New("leaderboard: invalid member")
	// ErrPrecision means a composite (tie-break) score would not be exact in
	// float64.
	ErrPrecision = errors.New("leaderboard: precision")
	// ErrInvalidArgument means n, radius, a page number or size is out of
	// range, or an option is bad.
	ErrInvalidArgument = errors.New("leaderboard: invalid argument")
)

const (
	// MaxMemberLen is the longest member, in bytes, a board accepts.
	MaxMemberLen = 512
	// MaxN is the largest n for Top, page size for Page, and member list for
	// Among: one call never moves an unbounded reply.
	MaxN = 1000
	// MaxRadius is the largest radius for Around (2*MaxRadius+1 entries).
	MaxRadius = 500
	// MaxIDLen is the longest WithID id, in bytes.
	MaxIDLen = 256
)

// ErrPending means a submission (or a removal) reached the store but
// perhaps not Redis: it is durable, and reaches Redis at the next Rebuild,
// or when retried with the same WithID within the dedupe window on a store
// that is an IDKeeper (pgstore is; see WithID), or, for Remove, when run
// again.
var ErrPending = errors.New("leaderboard: stored, not yet in Redis")

// Leaderboard is one named board: a sorted set per window period in Redis.
// It holds no state of its own beyond its configuration (and each window's
// current period, computed once per period) and is safe for concurrent use.
type Leaderboard struct {
	client    rueidis.Client
	be        backend // the kind of board, chosen once in New
	keys      keys.Board
	order     Order
	policy    Policy
	ranking   RankMode
	windows   []Window
	now       func() time.Time
	retention time.Duration
	retained  bool       // retention was set; otherwise one period length
	tb        *composite // nil: no tie-break
	bounds    []float64  // shard bounds; none: unsharded
	name      string
	store     Store // nil: Redis alone
	dedupe    time.Duration
	skew      time.Duration
	// current holds, per window (in windows' order), the newest period
	// resolved: nearly every call resolves the current period, which only
	// changes at a reset, so the period, key and expiry are built once per
	// period instead of on every call.
	current []atomic.Pointer[target]
}

// Entry is one member's place on a board.
type Entry struct {
	// Member is the member's name as submitted.
	Member string
	// Score is the player's score as submitted or accumulated: never an
	// encoded composite.
	Score float64
	// Rank is 1-based under the board's RankMode; 0 where "not ranked".
	Rank int64
}

// Standing is an entry with its place among all members of the period.
type Standing struct {
	Entry
	// Total is the number of members in that period.
	Total int64
	// Percentile is the share of the other members ranked below this one,
	// 0..100; 100 for a member alone on the board.
	Percentile float64
}

// Result is what Submit did.
type Result struct {
	// Standing is the member's standing in the default window after the submit.
	Standing
	// Previous is the member's entry in the default window before the submit
	// (Rank 0: was not ranked).
	Previous Entry
	// Changed reports whether the stored score in the default window changed
	// (KeepBest: a new personal best).
	Changed bool
	// Duplicate reports that the WithID id was applied before: nothing was
	// written, and the standings are the member's current ones.
	Duplicate bool
	// Windows holds every configured window, in the order given to WithWindows.
	Windows []WindowResult
}

// WindowResult is what Submit did in one window.
type WindowResult struct {
	// Window is the window's Name.
	Window string
	// Period is the ID of the period written to.
	Period string
	// Standing is the member's standing in that period after the submit.
	Standing Standing
	// Previous is the member's entry before the submit (Rank 0: was not ranked).
	Previous Entry
	// Changed reports whether the stored score changed.
	Changed bool
	// Closed reports that the period the submission's time falls in had
	// already expired (a late WithTime replay), so nothing was written to it.
	Closed bool
}

// Page is one page of a board.
type Page struct {
	// Entries are the page's entries, best first; empty past the end.
	Entries []Entry
	// Number is the 1-based page number asked for.
	Number int
	// Size is the page size asked for.
	Size int
	// Total is the number of members in that period.
	Total int64
}

// New returns the board called name on client. It makes no call to Redis.
//
// The name becomes the hash tag of every key of the board
// ("lb:{name}:weekly:2026-W49"), so it must be non-empty, with no whitespace
// and no braces. Every option is checked; a bad one returns ErrInvalidArgument.
func New(client rueidis.Client, name string, opts ...Option) (*Leaderboard, error) {
	c := defaultConfig()
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidArgument)
		}
		opt(&c)
	}
	if err := c.validate(client, name); err != nil {
		return nil, err
	}
	var tb *composite
	if c.tieBreak != nil {
		tb = c.tieBreak.encoding()
	}
	lb := &Leaderboard{
		client:    client,
		keys:      keys.NewBoard(c.prefix, name),
		order:     c.order,
		policy:    c.policy,
		ranking:   c.ranking,
		windows:   c.windows,
		now:       c.now,
		retention: c.retention,
		retained:  c.hasRetention,
		tb:        tb,
		bounds:    c.shards,
		name:      name,
		store:     c.store,
		dedupe:    c.dedupe,
		skew:      c.skew,
		current:   make([]atomic.Pointer[target], len(c.windows)),
	}
	lb.be = newBackend(lb)
	return lb, nil
}

func (c *config) validate(client rueidis.Client, name string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
	}
	if len(c.errs) > 0 {
		return bad("%v", errors.Join(c.errs...))
	}
	switch {
	case client == nil:
		return bad("nil client")
	case !keys.ValidName(name) || strings.ContainsRune(name, '#'):
		return bad("board name %q must be non-empty, without whitespace, braces or '#'", name)
	case !keys.ValidName(c.prefix):
		return bad("key prefix %q must be non-empty, without whitespace or braces", c.prefix)
	case c.order != HighestFirst && c.order != LowestFirst:
		return bad("unknown order %v", c.order)
	case c.policy != KeepBest && c.policy != Replace && c.policy != Accumulate:
		return bad("unknown policy %v", c.policy)
	case c.ranking != Ordinal && c.ranking != Competition:
		return bad("unknown rank mode %v", c.ranking)
	case c.tieBreak != nil && c.tieBreak.encoding() == nil:
		return bad("nil tie-break")
	}
	seen := make(map[string]bool, len(c.windows))
	for _, w := range c.windows {
		if nilWindow(w) {
			return bad("nil window")
		}
		n := w.Name()
		if !keys.ValidSegment(n) {
			return bad("window name %q must be non-empty, without whitespace, braces or ':'", n)
		}
		if seen[n] {
			return bad("two windows named %q (use Named to tell them apart)", n)
		}
		seen[n] = true
	}
	return nil
}

// nilWindow reports a window that would panic at its first call: nil, a
// nil pointer, or Named around either.
func nilWindow(w Window) bool {
	if n, ok := w.(named); ok {
		w = n.w
	}
	if w == nil {
		return true
	}
	v := reflect.ValueOf(w)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// target is one window period an operation reads or writes.
type target struct {
	window Window
	period Period
	key    string
	expire int64 // unix ms when the key expires; 0 for never
}

// target resolves the period of w holding t: from lb.current when it holds
// t, else from w (Window.Period is a function of t alone).
func (lb *Leaderboard) target(w Window, t time.Time) (target, error) {
	slot := lb.currentSlot(w)
	if slot != nil {
		if c := slot.Load(); c != nil && c.holds(t) {
			return *c, nil
		}
	}
	tg, err := lb.resolve(w, t)
	if err != nil || slot == nil {
		return tg, err
	}
	// Only a newer period replaces the cached one, so reads of older
	// periods (At) do not evict the current one.
	if c := slot.Load(); c == nil || c.period.Start.Before(tg.period.Start) {
		slot.Store(&tg)
	}
	return tg, nil
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
	p := w.Period(t)
	if !keys.ValidSegment(p.ID) {
		return target{}, fmt.Errorf("%w: window %q gave period ID %q, which must be non-empty, without whitespace, braces or ':'", ErrInvalidArgument, w.Name(), p.ID)
	}
	tg := target{window: w, period: p, key: lb.keys.Period(w.Name(), p.ID)}
	if p.End.IsZero() {
		return tg, nil
	}
	if !t.Before(p.End) || (!p.Start.IsZero() && t.Before(p.Start)) {
		return target{}, fmt.Errorf("%w: window %q gave period %q [%v, %v) for %v, which does not hold it", ErrInvalidArgument, w.Name(), p.ID, p.Start, p.End, t)
	}
	keep := lb.retention
	if !lb.retained && !p.Start.IsZero() {
		keep = p.End.Sub(p.Start)
	}
	tg.expire = p.End.Add(keep).UnixMilli()
	return tg, nil
}

// parseQueries applies a read's queries.
func parseQueries(qs []Query) (query, error) {
	var q query
	for _, fn := range qs {
		if fn == nil {
			return q, fmt.Errorf("%w: nil query", ErrInvalidArgument)
		}
		fn(&q)
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

// read resolves the period a read looks at.
func (lb *Leaderboard) read(qs []Query) (target, error) {
	q, err := parseQueries(qs)
	if err != nil {
		return target{}, err
	}
	w := lb.windows[0]
	if q.window != nil {
		if w, err = lb.window(q.window); err != nil {
			return target{}, err
		}
	}
	t := q.at
	if t.IsZero() {
		t = lb.now()
	}
	return lb.target(w, t)
}

func (lb *Leaderboard) high() bool { return lb.order == HighestFirst }

func checkMember(member string) error {
	if member == "" {
		return fmt.Errorf("%w: empty member", ErrInvalidMember)
	}
	if len(member) > MaxMemberLen {
		return fmt.Errorf("%w: member of %d bytes, limit %d", ErrInvalidMember, len(member), MaxMemberLen)
	}
	return nil
}

func checkScore(score float64) error {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return fmt.Errorf("%w: %v", ErrInvalidScore, score)
	}
	return nil
}

// formatScore renders a score so that Redis parses back the same float64.
func formatScore(f float64) string {
	if f == 0 {
		return "0" // never "-0": a stored -0 would print as "-0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// percentile is the share of the other members ranked below, 0..100.
func percentile(worse, total int64) float64 {
	if total <= 1 {
		return 100
	}
	return float64(worse) / float64(total-1) * 100
}

// standing completes a standing from a rank and, under Competition, the
// number of members strictly worse (under Ordinal it follows from the rank).
func (lb *Leaderboard) standing(member string, score float64, rank, worse, total int64) Standing {
	if lb.ranking == Ordinal {
		worse = total - rank
	}
	return Standing{
		Entry:      Entry{Member: member, Score: score, Rank: rank},
		Total:      total,
		Percentile: percentile(worse, total),
	}
}

// rankEntries numbers entries that sit at 0-based position start onwards;
// first is the rank of the first entry under Competition.
func (lb *Leaderboard) rankEntries(es []Entry, start, first int64) {
	for i := range es {
		pos := start + int64(i) + 1
		switch {
		case lb.ranking == Ordinal:
			es[i].Rank = pos
		case i == 0:
			es[i].Rank = first
		case es[i].Score == es[i-1].Score:
			es[i].Rank = es[i-1].Rank
		default:
			// Everything before a new score is strictly better, so its
			// competition rank is its position.
			es[i].Rank = pos
		}
	}
}

// errNilReply stands in for a nil reply where none was expected, so that
// rueidis.Nil never reaches a caller (who might take it for "not ranked").
var errNilReply = errors.New("unexpected nil reply")

// wrap names the operation on an error from Redis.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if rueidis.IsRedisNil(err) {
		err = errNilReply
	}
	return fmt.Errorf("leaderboard: %s: %w", op, err)
}

// execResult returns the replies of a MULTI ... EXEC pipeline's EXEC, or the
// first error of the pipeline (a queued command refused, EXEC aborted).
func execResult(res []rueidis.RedisResult) ([]rueidis.RedisMessage, error) {
	for _, r := range res[:len(res)-1] {
		if err := r.Error(); err != nil {
			return nil, err
		}
	}
	replies, err := res[len(res)-1].ToArray()
	if err != nil {
		return nil, err
	}
	for i := range replies {
		if err := replies[i].Error(); err != nil && !rueidis.IsRedisNil(err) {
			return nil, err
		}
	}
	return replies, nil
}

// optInt reads an integer reply that may be nil (a rank of an absent member).
func optInt(m *rueidis.RedisMessage) (int64, bool, error) {
	if m.IsNil() {
		return 0, false, nil
	}
	v, err := m.AsInt64()
	return v, true, err
}

// optFloat reads a score reply that may be nil.
func optFloat(m *rueidis.RedisMessage) (float64, bool, error) {
	if m.IsNil() {
		return 0, false, nil
	}
	v, err := m.AsFloat64()
	return v, true, err
}

// entries turns a flat member, stored value, member, value... reply into
// entries with plain scores.
// zEntries decodes a ZRANGE ... WITHSCORES result into entries with plain
// scores; see zMessageEntries.
func (lb *Leaderboard) zEntries(res *rueidis.RedisResult) ([]Entry, error) {
	m, err := res.ToMessage()
	if err != nil {
		return nil, err
	}
	return lb.zMessageEntries(&m)
}

// zMessageEntries decodes a ZRANGE ... WITHSCORES reply, flat member, score
// pairs (RESP2) or one [member, score] array per member (RESP3), straight
// into entries: AsZScores would allocate a slice of its own first.
func (lb *Leaderboard) zMessageEntries(m *rueidis.RedisMessage) ([]Entry, error) {
	arr, err := m.ToArray()
	if err != nil {
		return nil, err
	}
	if len(arr) == 0 || !arr[0].IsArray() {
		return lb.entries(arr)
	}
	es := make([]Entry, len(arr))
	for i := range arr {
		pair, err := arr[i].ToArray()
		if err != nil {
			return nil, err
		}
		if len(pair) != 2 {
			return nil, fmt.Errorf("member/score pair of %d values", len(pair))
		}
		member, err := pair[0].ToString()
		if err != nil {
			return nil, err
		}
		s, err := pair[1].AsFloat64()
		if err != nil {
			return nil, err
		}
		es[i] = Entry{Member: member, Score: lb.plain(s)}
	}
	return es, nil
}

func (lb *Leaderboard) entries(flat []rueidis.RedisMessage) ([]Entry, error) {
	if len(flat)%2 != 0 {
		return nil, fmt.Errorf("odd member/score reply of %d values", len(flat))
	}
	es := make([]Entry, len(flat)/2)
	for i := range es {
		m, err := flat[2*i].ToString()
		if err != nil {
			return nil, err
		}
		s, err := flat[2*i+1].AsFloat64()
		if err != nil {
			return nil, err
		}
		es[i] = Entry{Member: m, Score: lb.plain(s)}
	}
	return es, nil
}

func notRankedOr(op, member string, err error) error {
	if rueidis.IsRedisNil(err) {
		return fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	return wrap(op, err)
}

// scriptRefusal tells a script's refusal of a total that would overflow to
// ±Inf (LBOVERFLOW) or leave a tie-break's range (LBRANGE).
func scriptRefusal(err error, code string) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.Contains(re.Error(), code)
}

// slotsArg is the tie-break's slot count for the scripts; "0" for none.
func (lb *Leaderboard) slotsArg() string {
	if lb.tb == nil {
		return "0"
	}
	return strconv.FormatInt(lb.tb.slots, 10)
}
