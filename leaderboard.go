package leaderboard

import (
	"errors"
	"fmt"
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
	// ErrInvalidMember means a member is empty or longer than MaxMemberLen,
	// or one the board's store cannot hold (see SubmissionChecker: pgstore
	// takes members of valid UTF-8 without NUL bytes).
	ErrInvalidMember = errors.New("leaderboard: invalid member")
	// ErrPrecision means a composite (tie-break) score would not be exact in
	// float64.
	ErrPrecision = errors.New("leaderboard: precision")
	// ErrInvalidArgument means n, radius, a page number or size is out of
	// range, or an option is bad.
	ErrInvalidArgument = errors.New("leaderboard: invalid argument")
	// ErrExpired means a read At a time whose period's retention is over
	// (WithRetention): its keys are gone, which is not the same as a period
	// nobody played. Decided from the board's clock, with no call to Redis.
	// A Set returns it too when Redis's own clock had passed the period's
	// retention (a board clock behind the server's, see WithClock).
	ErrExpired = errors.New("leaderboard: period expired")
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
	// MaxDataLen is the most bytes of data a member holds (WithData,
	// SetData).
	MaxDataLen = 4096
)

// ErrPending means a submission (or a removal) reached the store but
// perhaps not Redis: it is durable, and reaches Redis at the next Rebuild,
// or when retried with the same WithID within the dedupe window on a store
// that is an IDKeeper (pgstore is; see WithID), or, for Remove, when run
// again. Member data lives in Redis alone: a Rebuild does not take it, so
// after a Remove or a Delete that returned it, run that again to remove the
// data too.
var ErrPending = errors.New("leaderboard: stored, not yet in Redis")

// ErrNotPresent means Redis does not hold the board as last rebuilt
// (Present reports false: a wipe, or a board never rebuilt): Seal refuses
// to seal what Redis holds then, which may be part of the standings.
// Rebuild first.
var ErrNotPresent = errors.New("leaderboard: board not present in Redis (Rebuild first)")

// Leaderboard is one named board: a sorted set per window period in Redis.
// Build one with New; the zero value is not usable.
// It holds no state of its own beyond its configuration, each window's
// current period (computed once per period), a sharded board's hints of
// where positions lie (a few counts a window) and WithHotTop's snapshots of
// the top mirrors of periods still readable; it is safe for concurrent use.
type Leaderboard struct {
	client       rueidis.Client
	be           backend // the kind of board, chosen once in New
	keys         keys.Board
	order        Order
	policy       Policy
	ranking      RankMode
	windows      []Window
	now          func() time.Time
	retention    time.Duration
	retained     bool       // retention was set; otherwise one period length
	tb           *composite // nil: no tie-break
	bounds       []float64  // shard bounds; none: unsharded
	shadowBounds []float64  // WithShadowShards' bounds; none: no shadow layout
	name         string
	store        Store             // nil: Redis alone
	checker      SubmissionChecker // store as a SubmissionChecker; nil when it is not one
	dedupe       time.Duration
	skew         time.Duration
	hot          *hotTop // WithHotTop; nil for none
	replicaReads bool    // WithReplicaReads
	aroundSteps  bool    // WithTwoStepAround
	cfg          config  // what New built it from (see primaryView)
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
	// Data is the member's data (names, avatars, flags: see WithData),
	// filled only when the read asks with IncludeData(); "" when none.
	Data string
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
	// already expired, so nothing of the submission is left in it: by the
	// board's clock (a late WithTime replay; nothing was written), or by
	// Redis's, which deleted the period's key as the write set its expiry
	// (a board clock behind the server's, see WithClock). Standing is then
	// the zero Standing, and Previous holds the member's name alone.
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
// ("lb:{name}:weekly:2026-W49"), so it must be non-empty printable UTF-8 of
// at most 200 bytes, with no whitespace, no braces and no '#' (which
// separates a shard's number). Every option is checked; a bad one returns
// ErrInvalidArgument.
//
// A command Redis answers it did not run, before running it, is sent
// again after a short pause (1 ms, doubling up to 100 ms) until Redis
// runs it or the call's ctx ends (a Batcher's batch, which no caller's
// ctx ends, until Redis runs it): TRYAGAIN, a script's or a MULTI's keys
// split between two nodes while a Cluster migrates their slot
// (resharding; a MULTI is sent again whole), CLUSTERDOWN and LOADING.
// The upkeep a write sends even after its ctx ended (a hot top's mirrors
// dropped) is sent once. The upkeep a write's round trip sends after it (a
// hot top's mirror rewritten or deleted, a shadow layout's share), which
// ran before a write that was sent again, is sent again after it. rueidis
// follows MOVED and ASK itself, and sends reads again itself (unless
// ClientOption.DisableRetry). A command that failed on the network may
// have run, and is never sent again.
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
	return build(resending{client}, name, c), nil
}

// build is the board New makes of a validated configuration.
func build(client rueidis.Client, name string, c config) *Leaderboard {
	var tb *composite
	if c.tieBreak != nil {
		tb = c.tieBreak.encoding()
	}
	lb := &Leaderboard{
		client:       client,
		keys:         keys.NewBoard(c.prefix, name),
		order:        c.order,
		policy:       c.policy,
		ranking:      c.ranking,
		windows:      c.windows,
		now:          microClock(c.now),
		retention:    c.retention,
		retained:     c.hasRetention,
		tb:           tb,
		bounds:       c.shards,
		shadowBounds: c.shadow,
		name:         name,
		store:        c.store,
		dedupe:       c.dedupe,
		skew:         c.skew,
		current:      make([]atomic.Pointer[target], len(c.windows)),
		replicaReads: c.replicaReads,
		aroundSteps:  c.aroundSteps,
		cfg:          c,
	}
	if c.hotTop > 0 {
		lb.hot = &hotTop{k: c.hotTop, now: hotMonotonic}
	}
	lb.checker, _ = c.store.(SubmissionChecker)
	lb.be = newBackend(lb)
	if !c.replicaReads {
		lb.be = &oomReads{backend: lb.be, lb: lb}
	}
	return lb
}

// microClock is now cut to the microsecond: every time the board picks a
// period or a tie-break slot from, and hands a store, is then one the
// store keeps exactly (see Submission.At).
func microClock(now func() time.Time) func() time.Time {
	return func() time.Time { return now().Truncate(time.Microsecond) }
}
