package leaderboard

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
)

// Order says which end of the score axis ranks first.
type Order int

const (
	// HighestFirst ranks the largest score first (points, levels).
	HighestFirst Order = iota
	// LowestFirst ranks the smallest score first (golf, speed-runs).
	LowestFirst
)

// String returns the order's name.
func (o Order) String() string {
	switch o {
	case HighestFirst:
		return "HighestFirst"
	case LowestFirst:
		return "LowestFirst"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// Policy says what a submission does to a member's stored score.
type Policy int

const (
	// KeepBest keeps a personal best: the larger score on a HighestFirst
	// board, the smaller on a LowestFirst one.
	KeepBest Policy = iota
	// Replace keeps the last submission: last write wins.
	Replace
	// Accumulate adds each submitted value to the member's total, separately
	// in every window.
	Accumulate
)

// String returns the policy's name.
func (p Policy) String() string {
	switch p {
	case KeepBest:
		return "KeepBest"
	case Replace:
		return "Replace"
	case Accumulate:
		return "Accumulate"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// RankMode says how equal scores are ranked.
type RankMode int

const (
	// Ordinal ranks 1..n with no two members sharing a rank; equal scores are
	// ordered as the package documentation describes.
	Ordinal RankMode = iota
	// Competition gives equal scores the same rank and skips the ranks they
	// used up (1, 2, 2, 4): rank = 1 + the members with a strictly better score.
	Competition
)

// String returns the rank mode's name.
func (m RankMode) String() string {
	switch m {
	case Ordinal:
		return "Ordinal"
	case Competition:
		return "Competition"
	}
	return fmt.Sprintf("RankMode(%d)", int(m))
}

// Option configures a Leaderboard. Options are checked by New, which refuses
// a bad one with ErrInvalidArgument.
type Option func(*config)

type config struct {
	order        Order
	policy       Policy
	ranking      RankMode
	windows      []Window
	tieBreak     TieBreak
	now          func() time.Time
	prefix       string
	retention    time.Duration
	hasRetention bool
	shards       []float64
	shadow       []float64 // WithShadowShards
	store        Store
	dedupe       time.Duration
	skew         time.Duration
	hotTop       int // WithHotTop; 0 for none
	replicaReads bool
	aroundSteps  bool // WithTwoStepAround
	errs         []error
}

func defaultConfig() config {
	return config{
		order:   HighestFirst,
		policy:  KeepBest,
		ranking: Ordinal,
		windows: []Window{AllTime()},
		now:     time.Now,
		prefix:  "lb",
		dedupe:  24 * time.Hour,
		skew:    time.Second,
	}
}

// WithHotTop serves Top(n) for n <= k, and Range and Page within the
// first k positions, from the client's memory through rueidis's
// client-side caching (1 <= k <= MaxN, else ErrInvalidArgument in New).
// Default: off.
//
// Each window period gets a mirror of its best k members, a short string beside
// it ("lb:{name}::topk:weekly:2026-W49", in the board's slot on every kind of
// board), which those reads read with DoCache (a GET; a plain GET on a client
// without a cache, see below): Redis invalidates the
// cached copy when the mirror changes, and the mirror changes only when a write
// reaches the top k (a Submit or a Set that does not sends what it sends
// without WithHotTop, an unsharded board's Set as a Submit of policy Replace;
// see Set). A Submit or Set that reaches the top rewrites the mirror after its
// write: on an unsharded board, and on a sharded one whose keys share one node,
// in the same round trip when the board expects it to (by what this process
// last saw of the mirror), else in one more; on a sharded board on a Cluster,
// whose shards lie in other slots than the mirror, in three more (a turn on the
// mirror, the shards' first k, the put; see hot_put.lua). A Batcher's batch
// rewrites the mirrors of the periods it wrote, in its round trip where the
// batch is one script (an unsharded board, a sharded one on one node), and on a
// sharded Cluster board once for the batch, in the three more round trips (a
// rewrite that would not change a mirror writes nothing). SubmitMany, Remove,
// RemoveBetween, Reset, Delete, Rebuild and Check's repairs delete the mirrors
// they may change, in the write's own round trip (Rebuild and Check's repairs
// in one more; on a sharded Cluster board each in one more after the write,
// with a turn), and the next read builds them again: after its cached read
// finds none, one script (two round trips in all), or on a sharded Cluster
// board the three round trips above (four in all); so does the first read after a mirror
// expired (10 seconds after its last rewrite). A cached answer can trail
// a write that another process, or this one, made a moment before: Redis
// invalidates it after the write's reply, within milliseconds (BENCHMARKS.md).
// A read the cache answered is answered again for 100µs from this process's
// copy without asking the cache (whose lookup is about half of a cached
// Top's CPU under many callers): a write, this process's too, can show up to
// 100µs after its invalidation arrives (this process's writes that may
// change the top drop the copy, but a read before the invalidation takes the
// cache's again). On Windows, whose monotonic clock moves in ticks of a
// millisecond or more, every read asks the cache. A mirror a crashed process
// left behind a write expires 10 seconds after its last rewrite, and no copy
// is kept longer (but those 100µs): the bound on how old a cached Top can
// be. A mirror's rewrite or delete that fails after its write (the network,
// a ctx that ends between the write and a round trip after it) is not the
// write's failure: the write's answer is returned, and the mirror is deleted
// in one more round trip (sent even when the ctx has ended), or where that
// fails too trails the period as after a crash; so is the mirror of a write
// that fails for any other reason than Redis refusing it (its reply lost, a
// ctx that ended while it was in flight, a later step of a write of
// several), which may have applied. Never rely on reading your
// own write; Rank, Around and the other reads read the board itself.
//
// The client must track keys for the cache to serve (rueidis's default).
// A client built with DisableCache reads the mirror from Redis every time,
// still exact, with a plain GET: a board's first mirror read shows
// whether its client caches (through rueidis.MGetCache), and no later read
// gives DoCache to a client that does not, which on a Cluster (rueidis
// v1.0.79) would crash the process when Redis redirects the read with ASK,
// the mirror's slot migrating. On that first read a client that wraps
// rueidis's (a hook, a tracer) is still read through its DoMultiCache, so
// give a wrapped Cluster client with DisableCache no WithHotTop while a
// slot of the board may migrate before its first read. A client that
// caches must hear of the mirrors' changes: with ClientTrackingOptions of
// NOLOOP (no word of the changes this connection makes, the rewrites among
// them) or of BCAST with prefixes that do not cover the board's key
// prefix, a cached top trails those writes until it expires, 10 seconds. A
// client that reaches only a replica cannot build a missing mirror (a
// write), nor can any client of a Redis over its maxmemory (under
// noeviction): its Top and Page read the period itself then, after the
// cached read and the refused build (three round trips, each time until
// the mirror is built). Page still reads the period's count from Redis
// (one ZCARD, on a sharded board one a shard). Reads with IncludeData read the board. An empty period's
// mirror holds no members, and stays in place and in the cache. A mirror
// that holds members expires with its period when that is sooner than 10
// seconds, by Redis's clock: a board whose clock is behind the server's
// reads no members in a period Redis has expired, as without WithHotTop.
//
// Every process that writes the board should use WithHotTop, and the same
// k: a process without it (an admin tool, another service, the first
// processes of a rollout) neither rewrites nor deletes the mirror, so a
// cached top trails its writes by up to the mirror's 10 seconds. A mirror
// holds the k of the process that wrote it last, and a process of another
// k reads the period itself instead (exact, not cached), after the mirror (from
// memory on a client that tracks keys, else one round trip more). While processes of two
// k run (a rollout of a new k), the writes of those with the smaller k
// keep a mirror only for their k: a cached top of the larger k can trail
// them, by 10 seconds at most.
func WithHotTop(k int) Option {
	return func(c *config) {
		if k < 1 || k > MaxN {
			c.errs = append(c.errs, fmt.Errorf("WithHotTop(%d): want 1..%d", k, MaxN))
			return
		}
		c.hotTop = k
	}
}

// WithReplicaReads makes every read fit for a client that sends read-only
// commands to replicas (rueidis's SendToReplicas, on a Cluster or with a
// standalone primary's ReplicaAddress): the read scripts run as EVALSHA_RO,
// and the reads that send a MULTI of plain commands (on an unsharded board
// Rank, Ranks, Page, Range, Between, AroundScore under Ordinal ranks, a
// chunk of All; on a sharded one Between, a chunk of All, AroundScore on
// one node, and Rank under Competition ranks on a Cluster) read through a
// script instead, as a MULTI always reaches the primary. Each answer stays
// from one moment of the node that serves it (a script runs atomically on a
// replica too); Among with IncludeData reads the scores and the data in one
// pipeline, two moments. Writes always reach the primary, and so do the
// reads a write is built on (the members RemoveBetween removes, the
// partitions FillShadow copies, the standings Seal seals, a sharded hot
// top's mirror, the partitions and shards Check compares, the markers
// Present looks for, what Verify compares with the store, the other shards'
// counts a sharded Cluster Submit or batch ranks its Result by), in MULTIs
// of their own (one a run of reads of one slot), and their scripts as
// EVALSHA; over Redis's maxmemory, where Redis refuses every MULTI, reads
// too, such a MULTI's reads are read again by one script sent to the
// primary as EVALSHA (one round trip more, only while Redis is full), so
// that deletions, Verify, Check and Seal still run. A Submit's Result is
// the primary's. WithTwoStepAround's steps are not taken (Around reads by
// its one script). It takes Redis 7.0 or newer (EVALSHA_RO; an older server
// refuses every read that runs a script). A replica trails its primary: a
// read may not show a write that returned moments before (see README,
// "Read replicas").
// Default: off (EVALSHA and MULTI, Redis 6.2 or newer).
func WithReplicaReads() Option {
	return func(c *config) { c.replicaReads = true }
}

// WithTwoStepAround reads Around on an unsharded board under Ordinal ranks
// without IncludeData in two round trips of plain commands (the member's
// rank and the count in one MULTI, then the slice) instead of one script:
// it costs Redis about what the commands cost alone, where the script
// costs about 1.3x-1.5x as much (EVALSHA's own cost; BENCHMARKS.md), so
// it serves more Arounds where Redis's core is the limit, at one more
// round trip of latency each. Each step is atomic; when the board moved
// between them so that the slice no longer holds the member where the
// rank put it, Around reads again (the script after three tries). Other
// boards and reads (Competition ranks, IncludeData, WithShards) keep
// their one-step reads, and so does a board with WithReplicaReads (the
// first step's MULTI would reach the primary). Default: off (one script,
// one round trip).
func WithTwoStepAround() Option {
	return func(c *config) { c.aroundSteps = true }
}

// WithStore makes a Store the board's durable source of truth: Submit
// appends every submission to it before writing Redis, and Rebuild and
// Verify read it. A store that is a SubmissionChecker (pgstore is) refuses
// what it cannot hold before anything is sent. A write whose ctx has ended
// before it starts returns ctx's error and writes nothing, in the store or
// in Redis, whether or not the store looks at ctx. Default: none, Redis
// alone. A nil store, or a nil pointer in the interface, is refused.
func WithStore(s Store) Option {
	return func(c *config) {
		c.store = s
		if nilValue(s) {
			c.errs = append(c.errs, fmt.Errorf("WithStore: nil store"))
		}
	}
}

// WithDedupeWindow sets how long Redis remembers a WithID id, so that a
// retry within it is applied once. Default 24 hours. Redis counts it in
// whole milliseconds (a fraction of one is dropped), so a window under a
// millisecond, which Redis would count as none, is refused with
// ErrInvalidArgument, as is one that is not positive. A longer window costs
// memory per id (an entry in one sorted set per board; per partition of
// members on a sharded board). A store, when there is one, remembers ids
// as long as it keeps them, and its answer wins (see WithID).
func WithDedupeWindow(d time.Duration) Option {
	return func(c *config) {
		c.dedupe = d
		if d < time.Millisecond {
			c.errs = append(c.errs, fmt.Errorf("WithDedupeWindow: %v is under a millisecond, the precision Redis remembers ids at", d))
		}
	}
}

// WithClockSkew sets how far after the board's clock a WithTime may lie and
// still be accepted: game servers' clocks differ by tens of milliseconds,
// and a score reached "in the future" by such a margin was reached now. A
// WithTime up to d after the clock's now is treated as now (its periods and
// tie-break slot are now's); one further ahead returns ErrInvalidArgument.
// Default one second; zero accepts no time after now; negative is refused.
// The same margin makes the board's walks over its periods (Remove,
// Delete, Rebuild, Verify, FillShadow, DropShadow) take in a period that
// starts within d after now: a process whose clock runs that far ahead
// writes there already; and Seal waits that long after a period's end
// before it seals it: a process whose clock runs that far behind writes
// there still.
func WithClockSkew(d time.Duration) Option {
	return func(c *config) {
		c.skew = d
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithClockSkew: negative skew %v", d))
		}
	}
}

// WithOrder sets which end of the score axis ranks first: HighestFirst
// (the default) or LowestFirst; New refuses any other Order with
// ErrInvalidArgument.
func WithOrder(o Order) Option {
	return func(c *config) { c.order = o }
}

// WithPolicy sets what a submission does to a stored score: KeepBest (the
// default), Replace or Accumulate; New refuses any other Policy with
// ErrInvalidArgument.
func WithPolicy(p Policy) Option {
	return func(c *config) { c.policy = p }
}

// WithWindows sets the windows every submission is applied to, each keeping
// its own board per period. The first is every query's default window.
// Default: AllTime() alone; none at all is refused. Window names must be
// distinct, each non-empty printable UTF-8 of at most 200 bytes without
// whitespace, braces or ':' (a name is a segment of the period's key), and
// none may be "ids", "data", "marker" or "clock" (keys the board keeps
// beside its periods); a nil window is refused. A window whose periods around the board's clock do not hold
// their instants or do not tile is refused (see Window).
func WithWindows(w ...Window) Option {
	return func(c *config) {
		c.windows = append([]Window(nil), w...)
		if len(w) == 0 {
			c.errs = append(c.errs, fmt.Errorf("WithWindows: at least one window is needed"))
		}
	}
}

// WithTieBreak sets how equal scores are ordered. Default nil: equal scores
// are ordered by member name, as the package documentation describes.
func WithTieBreak(t TieBreak) Option {
	return func(c *config) { c.tieBreak = t }
}

// WithRanking sets how equal scores are ranked: Ordinal (the default) or
// Competition; New refuses any other RankMode with ErrInvalidArgument.
func WithRanking(m RankMode) Option {
	return func(c *config) { c.ranking = m }
}

// WithClock sets the clock that picks each window's current period and the
// keys' expiry times. Default time.Now; nil is refused. Redis expires keys by its own clock,
// so a clock far from the server's makes windowed keys live too long or die
// at once; it is meant for tests and replays. A write to a period whose
// expiry Redis's clock has passed leaves no score there: Submit and a
// Batcher report the window Closed, Set returns ErrExpired, SubmitMany
// (which reports no windows) returns no error, and Rebuild does not count
// the period. A Submit's WithData and WithID id are kept: they belong to
// the board (or the member's partition), not to a period. The board cuts
// the clock's times to the microsecond, as it does WithTime's (see
// Submission.At).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		c.now = now
		if now == nil {
			c.errs = append(c.errs, fmt.Errorf("WithClock: nil clock"))
		}
	}
}

// WithKeyPrefix sets the first segment of every key: "<prefix>:{<name>}:...".
// Default "lb". It must be non-empty printable UTF-8 of at most 200 bytes,
// with no whitespace and no braces.
func WithKeyPrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// WithRetention sets how long a closed period stays readable (with At) after
// its end; its key expires then, and a read At it returns ErrExpired. Default:
// one period length (a daily board's day stays readable for one more day; a
// period with no Start, a custom window's first, has no length and expires at
// its end; under it, Periods, Remove and Delete look back a century at most,
// for a window whose periods differ in length). Zero expires a period at its end; negative
// is refused. A window that would keep over 1,000,000 periods readable at once
// (one-millisecond periods kept an hour) is refused with ErrInvalidArgument: by
// New, from the length of its period at the board's clock, else, for a window
// whose periods change length, by the calls that list its periods (Periods,
// Remove, Delete, Rebuild, Seal, Verify).
func WithRetention(d time.Duration) Option {
	return func(c *config) {
		c.retention, c.hasRetention = d, true
		if d < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithRetention: negative retention %v", d))
		}
	}
}

// SubmitOption configures one Submit call.
type SubmitOption func(*submitConfig)

type submitConfig struct {
	id       string
	hasID    bool
	at       time.Time
	zeroTime bool // WithTime was given the zero time: refused
	data     string
}

// WithData sets the member's data (what a screen shows beside the score: a
// display name, an avatar, flags; at most MaxDataLen bytes, any bytes) in
// the same atomic write as the score, whether or not the score changes (a
// KeepBest submission that is no new best still sets it). "" leaves the
// data as it is. Data belongs to the board, not to a window or a period:
// one value per member, kept until SetData(""), Remove or Delete; reads
// return it with IncludeData. A submission that writes nothing (refused,
// a WithID duplicate, or every window closed) sets no data either. Longer
// data returns ErrInvalidArgument, and nothing is written.
func WithData(data string) SubmitOption {
	return func(c *submitConfig) { c.data = data }
}

// WithID makes a submission idempotent: a retried submission with the same
// id is applied once, so a retry after a timeout never counts twice. A retry
// that finds its id already applied writes nothing and returns the member's
// current standing with Result.Duplicate set. Replay with the original
// WithTime so tie-breaks keep the original reaching time. An id is 1 to
// MaxIDLen bytes.
//
// An id names one submission of the board: give each its own (a match's
// id and the player's), never one id to several members' submissions. On
// an unsharded board, and on any board with a store (pgstore keeps ids
// unique per board), another member's submission with an id already seen
// is a duplicate and is not applied; a sharded board without a store
// remembers ids per partition of members (4,096 partitions), so there it
// may be applied.
//
// Redis remembers an id for the board's WithDedupeWindow. With a store
// (WithStore) the store is the truth, for as long as it remembers the id
// (pgstore: for good), and Redis's memory a cache of it: a store that
// reports the id a duplicate wins over Redis, except that a retry of a
// submission the store received within the dedupe window and Redis never
// applied (ErrPending, a timeout) is applied, once, when the store is an
// IDKeeper and can say when it received the id: as the store holds it
// (its score and time, not the retry's) when the store is an IDReplayer,
// else with the retry's own, which must then be the original score and
// WithTime. Rebuild gives Redis back the ids of the window. A submission
// refused for bad input (ErrInvalidScore, ErrPrecision) records its id
// nowhere (see Retractor), so the corrected retry with the same id is
// applied.
func WithID(id string) SubmitOption {
	return func(c *submitConfig) { c.id, c.hasID = id, true }
}

// WithTime sets when the score was reached, for replays and tie-breaks. It
// picks the period of every window the submission goes to. It may lie after
// the board's clock by at most the board's WithClockSkew (default one
// second), and is then taken as the clock's now. Default: the board's clock
// at the call. The time is cut to the microsecond (see Submission.At). The
// zero time.Time (an unset variable, not a time anyone reached a score at)
// is ErrInvalidArgument.
func WithTime(t time.Time) SubmitOption {
	return func(c *submitConfig) { c.at, c.zeroTime = t, t.IsZero() }
}

// Query selects which board a read looks at.
type Query func(*query)

type query struct {
	window Window
	in     bool // In was given (its window may be nil: refused)
	at     time.Time
	zeroAt bool // At was given the zero time: refused
	data   bool
}

// IncludeData makes a read (Top, Page, Range, Around, Among, Rank, Ranks,
// Cutoff, Between, AroundScore, All) fill each entry's Data with the
// member's data (see WithData), read in the same round trip as the entries
// on an unsharded board: by the script, or in the transaction, that reads
// them. On a sharded board the data lives in the members' partitions: Rank,
// Ranks and Among read it in their round trips; Top, Page, Range, Around,
// Cutoff, Between, AroundScore and each chunk of All read it in one more,
// once they know their members, and read their entries in
// one round trip then (on one node one script reads a page across the
// shards; on a Cluster every shard's script gives an Around its slice, and
// a Page, Range or Cutoff reads its entries beside the shards' counts
// where the counts the last read saw place them, with 32 positions more
// on either side): two round trips in all. Three when such a hint misses:
// a Top whose best shard held n + 32 members or more when last seen and
// now holds fewer than n, and on a Cluster the first Page, Range or Cutoff
// of a window in a process and one whose shards' counts moved by more than
// 32 since the last read. An Around that finds a member in two shards
// while it moves reads its slice again the two-step way: four round trips
// or more. Reads without it send the same commands as before, and cost
// nothing more.
func IncludeData() Query {
	return func(q *query) { q.data = true }
}

// In reads the configured window with w's Name instead of the default one.
// A nil w (or a nil pointer) returns ErrInvalidArgument.
func In(w Window) Query {
	return func(q *query) { q.window, q.in = w, true }
}

// At reads the period of the window holding t, e.g. last week's board. A
// period whose retention is over (WithRetention) returns ErrExpired, decided
// from the board's clock without a call to Redis; a live period nobody
// played reads as empty. The zero time.Time (an unset variable, which
// would else read as no At at all, the current period) is
// ErrInvalidArgument.
func At(t time.Time) Query {
	return func(q *query) { q.at, q.zeroAt = t, t.IsZero() }
}

func (c *config) validate(client rueidis.Client, name string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
	}
	if len(c.errs) > 0 {
		return bad("%v", errors.Join(c.errs...))
	}
	switch {
	case nilValue(client):
		return bad("nil client")
	case !keys.ValidName(name) || strings.ContainsRune(name, '#'):
		return bad("board name %q must be non-empty printable UTF-8 of at most %d bytes, without whitespace, braces or '#'", name, keys.MaxNameLen)
	case !keys.ValidName(c.prefix):
		return bad("key prefix %q must be non-empty printable UTF-8 of at most %d bytes, without whitespace or braces", c.prefix, keys.MaxNameLen)
	case c.order != HighestFirst && c.order != LowestFirst:
		return bad("unknown order %v", c.order)
	case c.policy != KeepBest && c.policy != Replace && c.policy != Accumulate:
		return bad("unknown policy %v", c.policy)
	case c.ranking != Ordinal && c.ranking != Competition:
		return bad("unknown rank mode %v", c.ranking)
	case c.tieBreak != nil && c.tieBreak.encoding() == nil:
		return bad("nil tie-break")
	}
	if err := c.validateShadow(); err != nil {
		return bad("%v", err)
	}
	if err := c.reachableShards(); err != nil {
		return bad("%v", err)
	}
	seen := make(map[string]bool, len(c.windows))
	for _, w := range c.windows {
		if nilWindow(w) {
			return bad("nil window")
		}
		n := w.Name()
		if !keys.ValidSegment(n) {
			return bad("window name %q must be non-empty printable UTF-8 of at most %d bytes, without whitespace, braces or ':'", n, keys.MaxNameLen)
		}
		if keys.Reserved(n) {
			return bad("window name %q is the name of a key the board keeps beside its periods (ids, data, marker, clock)", n)
		}
		if seen[n] {
			return bad("two windows named %q (use Named to tell them apart)", n)
		}
		seen[n] = true
		p, err := c.periodsTile(w)
		if err != nil {
			return err // ErrInvalidArgument
		}
		if err := c.periodsReachable(w, p); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// periodsReachable refuses a window that would keep more periods readable
// at once than Periods, Remove, Delete, Rebuild, Seal and Verify walk
// (maxLivePeriods), by the length of its current period on the board's
// clock: its retention and the clock skew ahead over that length. A board
// of one-millisecond periods kept an hour would otherwise take writes
// that no Delete could reach. A window whose periods change length may
// still meet the bound later: those calls refuse it then.
func (c *config) periodsReachable(w Window, p Period) error {
	d := p.End.Sub(p.Start)
	if p.Start.IsZero() || p.End.IsZero() || d <= 0 {
		return nil // a window that never resets, or one resolve refuses
	}
	keep := d
	if c.hasRetention {
		keep = c.retention
	}
	// Each bound as the walks apply it: the closed periods kept back (up
	// to keep/d of them, rounded up, a part of one counting whole) beside
	// the current one, and those ahead within the skew (separately; the
	// walks list them apart).
	closed := keep / d
	if keep%d != 0 {
		closed++
	}
	if closed >= maxLivePeriods || c.skew/d >= maxLivePeriods {
		return fmt.Errorf("window %q: periods of %v kept %v (with %v of clock skew ahead) make over %d periods readable at once, more than Periods, Remove and Delete reach: use longer periods, a shorter retention or less skew",
			w.Name(), d, keep, c.skew, maxLivePeriods)
	}
	return nil
}

// periodsTile asks w for the period holding the board's now (cut to the
// microsecond, as the board's clock is), the one holding its End and the
// one holding the instant before its Start, and refuses w unless each has
// a valid ID and holds its instant, and the three tile: the next starts at
// the End, the one before ends at the Start, each under another ID. Every
// built-in window passes at every instant; a window that fails would take
// a Submit here that the walks over its periods (Remove, Delete, Rebuild,
// Verify, Periods) refuse, or one that lands where they never look. A
// window that goes wrong only far from now is still refused by the call
// that meets it. It returns the period holding now.
func (c *config) periodsTile(w Window) (Period, error) {
	now := c.now().Truncate(time.Microsecond)
	p := w.Period(now)
	if err := checkPeriod(w, p, now); err != nil {
		return p, err
	}
	if !p.End.IsZero() {
		n := w.Period(p.End)
		if err := checkPeriod(w, n, p.End); err != nil {
			return p, err
		}
		if !n.Start.Equal(p.End) || n.ID == p.ID {
			return p, fmt.Errorf("%w: window %q: period %q [%v, %v), holding %v, is followed by period %q [%v, %v): periods must tile, the next starting at the End under another ID",
				ErrInvalidArgument, w.Name(), p.ID, p.Start, p.End, now, n.ID, n.Start, n.End)
		}
	}
	if !p.Start.IsZero() {
		t := p.Start.Add(-time.Nanosecond)
		b := w.Period(t)
		if err := checkPeriod(w, b, t); err != nil {
			return p, err
		}
		if !b.End.Equal(p.Start) || b.ID == p.ID {
			return p, fmt.Errorf("%w: window %q: period %q [%v, %v), holding %v, follows period %q [%v, %v): periods must tile, the one before ending at the Start under another ID",
				ErrInvalidArgument, w.Name(), p.ID, p.Start, p.End, now, b.ID, b.Start, b.End)
		}
	}
	return p, nil
}

// nilWindow reports a window that would panic at its first call: nil, a
// nil pointer, or Named around either.
func nilWindow(w Window) bool {
	if n, ok := w.(named); ok {
		w = n.w
	}
	return nilValue(w)
}

// nilValue reports whether x is nil, or a nil pointer, map, slice, func or
// channel in an interface: a window, store or client whose methods would
// panic.
func nilValue(x any) bool {
	if x == nil {
		return true
	}
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// WithShards splits the score axis at k strictly ascending, finite bounds
// into k+1 shards, so that one board can outgrow one Redis node: shard i
// holds the members whose plain score has exactly i bounds at or below it,
// and each shard of each window period is a sorted set with a hash tag of
// its own ("lb:{name#s3.k2x9a1~41}:weekly:2026-W49": the shard's number,
// a name of the bounds, and a salt that places the shards on slots spaced
// evenly over the Cluster's 16384, so that nodes owning equal slot ranges
// hold equal numbers of shards).
// Default: no bounds, one sorted set per period.
//
// Every answer stays exact: a global rank is the member count of the better
// shards plus the rank inside the member's own shard, read in one DoMulti
// that rueidis sends to the nodes in parallel (under Competition ranks on
// a Cluster, the counts beside the member's partition, then its shard). Top(n) reads the best shard
// alone (one ZRANGE, as on an unsharded board) while it holds n members or
// more, else every shard; a Page inside the best shard is read beside the
// counts. Round trips: Rank, Top, Count and Among cost one (Rank two under
// Competition ranks on a Cluster: the member's partition beside every
// shard's count, then one MULTI on the member's shard, its script with
// WithReplicaReads, where one round trip would run a script on every
// shard; Top two when it finds the best shard holding fewer than n
// members: on a window's first
// such Top, and when the shard has dropped below n since the last one);
// Page one inside the best shard (under Competition ranks, the first page
// only), else two; Around, Submit, SubmitMany and Remove two on a Cluster
// (Rank and Around one for a member without a score, which the first step
// finds; a SubmitMany that changes nothing one, with no shard to write; a
// Remove or SubmitMany of many members more: see Remove and
// SubmitMany) and one on a single node (standalone or Sentinel), where one
// script reaches every shard (and a write applies the whole call
// atomically). The
// reads by score (Between, CountBetween, AroundScore) cost one: a shard
// holds one range of scores, so they read the shards they span, one script
// or ZCOUNT each, beside the counts of the better ones (Between without
// data nor WithReplicaReads reads its best shard by a MULTI instead, which
// on a Cluster goes in a pipeline of its own, sent at the same time as the
// other shards': two calls to the client in one round trip, as rueidis
// cannot pipeline a MULTI beside other slots' commands; AroundScore reads
// the score's shard and every other shard's count, and a second round trip
// when its slice reaches past that shard into another: see AroundScore);
// Range reads as
// Page, Cutoff as Page past the best shard (one on a single node, one
// script); All one a chunk (two when the chunk's MULTI finds the entry it
// resumes after moved; on a Cluster, under Ordinal ranks without data, a
// chunk that resumes inside a shard sends that MULTI as Between does: two
// calls at once); Set as Submit; RemoveBetween reads a chunk's
// members, then removes them as Remove. With IncludeData see IncludeData.
// On a Cluster, a SubmitMany on an Accumulate board with a tie-break whose
// members span several partition groups takes three: see below.
//
// # Partitions
//
// Beside its shards, a sharded board keeps every member's stored value (the
// truth the shards are built from) in one of 4096 partitions, hashes chosen
// by a hash of the member's name, 32 under each of 128 hash tags one every
// 128 slots ("lb:{name#p~1234}:17:weekly:2026-W49"): no key holds every
// member, no key takes every write, and a write of many members (a
// Batcher's batch, SubmitMany, Remove) on a Cluster reaches the
// partitions of a tag in one call. A
// partition of up to 512 members a period (about 2 million members a
// period in all) stays a compact listpack. WithID ids live in the member's
// partition too, so a retried submission is recognized for the same
// member.
//
// # Consistency
//
// On a single node every write is one script over the member's partition
// and every shard: nothing can come between its parts. On a Cluster a
// write first applies the policy in the member's partition, in one script,
// which serializes all writes to a member (no increment or best is lost,
// whichever shards it moves between) and gives the change a version (its
// node's clock in milliseconds, and a counter); then it puts the member
// into its new shard and, when it crossed a bound, deletes it from the old
// one. A shard applies a member's writes only in version order and
// remembers the versions it applied for a minute or so (two sets of small
// hashes that take turns, expiring), so late or repeated writes are ignored and every
// shard converges to the partitions; a write that reaches its shard more
// than 10 seconds after its version was given is refused by the shard and
// sent again with a new version (two round trips more, and a Submit a
// third to read its standing afresh, for a process that paused between its
// steps). A write that changes nothing (a KeepBest score below the best, an
// Accumulate of 0) tells what a crashed write left behind (a shard behind
// the partition, a copy in another shard) from what a write racing it
// brought, by the versions: it repairs or drops the first, and leaves the
// second, newer, to its write. This needs the Cluster nodes' clocks to agree
// within 15 seconds (NTP does far better).
//
// Each shard is read atomically (one command, transaction or script),
// but for a member's place under Ordinal ranks (Rank and Around on a
// Cluster, Ranks on any sharded board): its shard's count, the member's
// position and its score are three commands of one pipeline, which Redis
// runs back to back as below (should a write run between them, the count
// is taken as at least the place read, so that a rank never passes its
// total); and a read that spans shards is not a
// snapshot of all of them. On one node a read's commands go in one
// pipeline, which Redis runs back to back when it reads the pipeline at
// once (nearly always; a pipeline split between two reads of the socket
// may let another connection's write run between two of its commands, and
// a test double such as miniredis runs each command on its own): then a
// member that moved between two shards in that instant is counted twice
// or not at all, as below. On a Cluster, while a member crosses a bound
// (between the two shard writes of its Submit, typically under a
// millisecond) a read may find it in both shards or in neither: reads keep
// one copy, the one in the shard its partition's value belongs to (one
// more round trip for a range that finds a member twice), so a read never
// returns a member twice (All's chunks are reads of their own: see All),
// but Count, every Total and the ranks of other members may be off by that
// one member for that instant. Among's scores come from the partitions and
// are exact.
//
// A read by position in two round trips (on a Cluster Cutoff, Around and the
// locating of a member by Rank and Around; on any sharded board Page and Range
// past the best shard) counts the shards, then reads by position: members
// crossing a bound in between shift the positions. So each checks what it read
// (a shard holding fewer than counted, an Around without its member or short of
// entries, a member in no shard while its partition holds it) and reads again,
// Around from the member's own shard, at most five times in all, the last
// answer standing: two round trips more a try, which only a storm of moves
// across one bound under load needs. A process that dies between a write's two
// round trips on a Cluster (or whose second step fails, as while the shard's
// slot migrates: the write returns that error though its partition holds it)
// leaves the member's shard entry behind its partition (and Count with it; a
// read that finds only that copy returns it) until the member's next Submit,
// or its next write through a Batcher, whose batch does the same for all
// its members at once (which looks for stale copies in every shard and
// sweeps them, and, when it
// changes nothing, as a WithID retry of a write whose first try died between
// its steps, checks its own shard's copy against the partition; at the cost of
// one round trip more when it finds a copy in another shard, three more when
// its own shard's copy is behind: a repair, then a read of the member's
// standing), its next Remove (which sweeps every shard in its second step:
// see Remove) or a Check with repair. SubmitMany does not sweep. A Reset (or Delete) that
// runs between a write's two steps leaves the member in a shard and in no
// partition, or the other way round, until a Check with repair (on one node a
// Reset is one UNLINK, which no write straddles).
//
// A SubmitMany whose members span several partition groups (32 partitions
// under one hash tag) is one script per group on a Cluster, each atomic: a
// total that one group refuses (an Accumulate total beyond a tie-break's
// MaxScore, or an overflowing one) would leave the others written, so on
// an Accumulate board that can refuse one (with a tie-break, or with an
// increment of 2^970 or more) a dry run of every group comes first, and
// one refusal writes nothing. Only a concurrent write that pushes a total
// past the limit between the dry run and the write can still refuse one
// group alone; a store (a Retractor) then takes back that group's
// submissions alone, and keeps the others', which Redis applied. When
// beside it another group's call failed (a timeout, a ctx that ended
// while its slot migrated), the error
// matches ErrPending too: the store keeps that group's submissions, which
// reach Redis at the next Rebuild.
//
// Choose bounds from a histogram of your scores so the shards hold similar
// numbers of members (README: "Sharding"; ProposeBounds proposes them from a
// live board, and WithShadowShards moves a live board to new ones). Bounds
// that are NaN, ±Inf, unsorted or repeated are refused by New with
// ErrInvalidArgument, and so, with a tie-break (WithTieBreak), are bounds
// that leave a shard no score the tie-break stores: a bound above its
// MaxScore, one at or below -MaxScore, or two with no score of its
// Decimals between them. A bound is compared with plain scores, so one
// between two storable scores (10.5 with 0 decimals) bounds as the next
// storable score above it does.
func WithShards(bounds ...float64) Option {
	return func(c *config) {
		c.shards = append([]float64(nil), bounds...)
		c.errs = append(c.errs, boundsErrs("WithShards", bounds)...)
	}
}

// boundsErrs lists what is wrong with the bounds given to option.
func boundsErrs(option string, bounds []float64) []error {
	var errs []error
	for i, b := range bounds {
		if math.IsNaN(b) || math.IsInf(b, 0) {
			errs = append(errs, fmt.Errorf("%s: bound %v is not finite", option, b))
		} else if i > 0 && !(bounds[i-1] < b) {
			errs = append(errs, fmt.Errorf("%s: bounds must be strictly ascending: %v then %v", option, bounds[i-1], b))
		}
	}
	return errs
}

// reachableShards refuses WithShards or WithShadowShards bounds that leave
// a shard no score the board's tie-break can store: one above the largest
// score it stores, at or below the smallest, or two with no storable score
// between them (it keeps Decimals fraction digits). Such a shard could
// never hold a member. Without a tie-break every finite bound bounds
// scores a board stores.
func (c *config) reachableShards() error {
	if c.tieBreak == nil {
		return nil
	}
	tb := c.tieBreak.encoding()
	for _, l := range []struct {
		option string
		bounds []float64
	}{{"WithShards", c.shards}, {"WithShadowShards", c.shadow}} {
		for i := range len(l.bounds) + 1 {
			if tb.holdsScoreIn(l.bounds, i) {
				continue
			}
			span := fmt.Sprintf("scores below %v", l.bounds[0])
			switch {
			case i == len(l.bounds):
				span = fmt.Sprintf("scores of %v and above", l.bounds[i-1])
			case i > 0:
				span = fmt.Sprintf("scores from %v below %v", l.bounds[i-1], l.bounds[i])
			}
			return fmt.Errorf("%s: shard %d holds %s, of which the tie-break (MaxScore %v, %d decimals) stores none: every bound must lie above -MaxScore and at most MaxScore, with a score of %d decimals from each bound below the next",
				l.option, i, span, tb.order.MaxScore, tb.order.Decimals, tb.order.Decimals)
		}
	}
	return nil
}
