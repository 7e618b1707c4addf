// Package leaderboard runs real-time leaderboards on Redis sorted sets.
//
// A Leaderboard is a named board with an order (HighestFirst or LowestFirst),
// a policy (KeepBest, Replace or Accumulate), a rank mode (Ordinal or
// Competition) and one or more windows (all-time, daily, weekly, monthly, or
// your own). Each window keeps its own sorted set per period, and every
// submission goes to all of them at once.
//
// # Round trips and atomicity
//
// On an unsharded board, Submit, SubmitMany, Set, Remove, SetData, Reset,
// Delete and every read (Top, Rank, Ranks, Around, Page, Range, Among, Cutoff,
// Between, CountBetween, AroundScore, Count, Periods) cost one round trip to
// Redis (Around two with WithTwoStepAround): one Do or one DoMulti on the
// rueidis client you pass in (with WithReplicaReads, the reads that must
// reach the primaries go in MULTIs of their own, one a slot, sent at once:
// several calls in one round trip, as on a sharded Cluster board the MULTI
// that Between and a chunk of All send beside other shards' reads, which
// rueidis cannot pipeline with them: see WithShards); All one a chunk of
// up to MaxN entries
// (two for a chunk whose MULTI finds that the entry it resumes after has
// moved: the chunk is then read by script), RemoveBetween one a chunk of up
// to MaxN members (two with a store that records removals). A round trip
// that runs a script a Redis has not loaded yet takes one more, the first
// time (EVALSHA, then EVAL for the scripts NOSCRIPT refused, together),
// and a read that is a MULTI one more while Redis is over its maxmemory (it
// is read again by script: oom.go). A
// sharded board (WithShards) spends up to two, more only where its doc comment
// says (on a Cluster: a Submit that finds a member's copy in another shard,
// which a crashed or racing write left, or reaches a shard late, a read that
// finds a member in two shards while it moves, a SubmitMany run dry first, a
// chunk of RemoveBetween, a SubmitMany or Remove whose shard writes (a
// Remove's sweeps of every shard included) pass 100,000 ops; with
// IncludeData, the reads IncludeData names; on any sharded board ProposeBounds,
// three, a Delete that names more than about 500,000 keys (see Delete), and a
// read by position that reads again when members crossed a bound between its
// two round trips: see WithShards). With WithHotTop the writes and reads of
// the mirror take what WithHotTop says (on a sharded Cluster board, a write
// that deletes the mirror one more, a rewrite three more). Rebuild, Verify,
// Seal, Check and FillShadow take as many as their data needs, and
// DropShadow one a period. A pipeline of more than 1,000 commands that are
// not all reads (Rebuild's copies of a sharded board's 4,096 id sets; on a
// Cluster the writes and deletes of a sharded board with about a thousand
// shards or more) goes in DoMultis of at most 1,000 commands, one after
// another, a round trip each: rueidis sends a pipeline of 2,000 commands
// or more (its BlockingPipeline) on a connection of its dedicated pool, and
// one that Redis closed while it sat idle there (a restart, Redis's
// timeout, a proxy) fails its next write, which rueidis does not send
// again. A transaction is never split: those that could grow past 1,500
// commands take another form beyond (a SubmitMany under Accumulate the
// script, Ranks of more than 748 members its script, rank.lua, as under
// Competition ranks, Remove on a board keeping more than 1,496 readable
// periods a script of its ZREMs, a SubmitMany of hundreds of thousands of
// members larger ZADDs). A Batcher (NewBatcher) writes a batch of folded
// Submits as one script, in one round trip on an unsharded board and on a
// sharded one whose keys share one node,
// and in Submit's two steps, each one round trip for the batch, on a sharded
// board on a Cluster (where a member's further writes in the batch, to other
// periods or under Accumulate scores that did not fold into its first, and
// the writes of a partition group's call Redis refused take a Submit each
// after it); a folded Accumulate write Redis refuses takes a Submit
// more for each submission in it.
//
// Submit applies the policy to every window in one MULTI/EXEC transaction of
// plain commands, or in one Lua script where the write must branch on what is
// stored: under Competition ranks (which count members by the stored score),
// with WithID, for KeepBest under LaterFirst (which compares plain scores, not
// composites), for Accumulate on a tie-broken board (the total must stay within
// MaxScore) and for an Accumulate increment of 2^970 or more (the only ones
// that could overflow a float64 total, refused before anything is written).
// Under Ordinal ranks without WithID, then, Replace, KeepBest without a
// tie-break or under EarlierFirst, and Accumulate without a tie-break
// (ZINCRBY, for increments below 2^970) are transactions.
// Reads that combine several replies (Rank, Ranks, Page, Range) read them in
// one transaction, or in one script where the read needs what it reads first:
// Rank and Ranks under Competition ranks, and with IncludeData for Top, Page
// and Range (the data of exactly the members read); Ranks of more than 748
// members is one script too, as its transaction would be too long. Under
// Competition ranks a page or range past the first position is one MULTI of
// its plain ZRANGE beside
// a small script that gives the members strictly better than its first entry
// (from the entry before it; a count only when the two tie), so that the
// entries never pass through Lua (from the first position the first rank is 1,
// and the page reads as under Ordinal ranks); Cutoff is one script (a count
// gives the position), Between one with IncludeData or WithReplicaReads (else a
// MULTI of the count better than the range and the range), AroundScore one
// under Competition ranks, with IncludeData or WithReplicaReads (else a MULTI
// of the count better than the score and the entries either side of it by
// score), and a chunk of All under Ordinal ranks without IncludeData one MULTI
// by position beside the last entry's score and rank (the first chunk a plain
// ZRANGE), the script when that entry moved, under Competition ranks after the
// first chunk, or with IncludeData. So a rank and a total always come from the
// same moment (but in a Page within a hot top, whose entries come from the
// client's memory and its total from Redis: see WithHotTop). Around reads
// the member's rank and the slice around it in one
// script, never rank-then-range, unless WithTwoStepAround asks for two steps. A
// sharded board's operations are atomic per step; see WithShards. With
// WithReplicaReads no read sends a MULTI (those reads run their script instead)
// and read scripts run as EVALSHA_RO, so that a client may send every read to a
// replica; only the reads a write or a repair is built on go to the primaries,
// in MULTIs: those WithReplicaReads lists (RemoveBetween's members,
// FillShadow's partitions, Seal's standings, a sharded hot top's mirror,
// Check, Present, Verify, a sharded Cluster Submit's or batch's Result) and a
// repair's fresh read.
//
// # How it is built
//
// Every exported method is a thin front: it checks its arguments (bad input
// returns a sentinel and writes nothing), encodes scores under a tie-break,
// resolves the window periods it touches (period.go: each window's current
// period is computed once per period), reaches the store first where there is
// one (writethrough.go), and then makes one call to the board's backend (one
// a chunk, a window or a period for those that walk them: All,
// RemoveBetween, Check, FillShadow, DropShadow, Rebuild, Verify, Seal). The
// backend (backend.go) is chosen once, in New: plainBackend (plain.go), one
// sorted set per window period; or shardedBackend (sharded.go,
// sharded_submit.go, sharded_batch.go, sharded_batch_cluster.go,
// sharded_hot.go, check.go), shards beside partitions of the members' stored
// values, which also decides once whether a write is one script (every key on
// one node) or two steps (a Cluster), and which may hold a second
// shardedBackend, the shadow layout every write also keeps while the board
// moves to new bounds (shadow.go, WithShadowShards). No front branches on the
// kind of board, and every backend must implement every operation.
//
// Lua runs only where a transaction cannot do the job (see Round trips and
// atomicity). The
// scripts live in internal/scripts, each behind a typed Go builder; every
// script's arguments open with one header that common.lua reads in one
// place. Replies are decoded in reply.go. With a store (WithStore), Submit,
// a Batcher's batches and SubmitMany write the store first and Redis
// second, and so do Set, Remove, RemoveBetween, Reset and Delete when the
// store records them (a Corrector, a Remover, a PeriodDeleter, a
// BoardDeleter: pgstore is each); a Redis refusal of a submission retracts
// what the store took (a Retractor), any other Redis failure returns
// ErrPending (but a Set's ErrExpired). Rebuild (rebuild.go, pipeline.go),
// Verify (verify.go) and Seal (seal.go) read the store back.
//
// # Keys
//
// Every key of an unsharded board shares one hash tag, the board's name:
//
//	lb:{name}:alltime
//	lb:{name}:daily:2026-11-30
//	lb:{name}:weekly:2026-W49
//	lb:{name}:monthly:2026-11
//
// so every transaction and script runs unchanged on Redis Cluster (all keys of
// the board live in one slot). A sharded board gives each shard a hash tag of
// its own ("lb:{name#s3.k2x9a1~41}:alltime", on slots spaced evenly over the
// Cluster's), so that Redis Cluster spreads them over its nodes, and keeps
// its members' stored values in 4096 partitions, 32 under each of 128 hash
// tags one every 128 slots ("lb:{name#p~1234}:17:alltime"; see
// WithShards). The prefix "lb" is set with WithKeyPrefix. A board name is
// printable UTF-8 of at most 200 bytes without whitespace, braces or '#';
// New refuses others with ErrInvalidArgument.
//
// While a Cluster moves a board's slot to another node (resharding), Redis
// refuses a script or a MULTI whose keys are split between the two with
// TRYAGAIN, before running it: the board sends it again (a MULTI whole),
// as one refused with CLUSTERDOWN or LOADING, after a short pause until
// Redis runs it or the call's ctx ends (see New), so that a call rides
// through a resharding.
//
// # Expiry
//
// A windowed key expires at an absolute time: its period's end plus the
// retention (WithRetention; default one period length), set with PEXPIREAT on
// every write. Writing again never pushes the expiry out, unlike a sliding
// EXPIRE. The all-time key never expires. Redis expires keys by its own
// clock: a write to a period whose expiry that clock has passed (a board
// clock far behind the server's, WithClock) leaves nothing there, and
// Submit reports the window Closed (see WithClock).
//
// # Ties
//
// With a tie-break (WithTieBreak, EarlierFirst, LaterFirst), equal scores are
// ordered by when they were reached; see TieBreak for the encoding and its
// limits. Without one, members with equal scores are ordered by their names
// compared as bytes, in the board's direction: on a HighestFirst board the name
// that sorts LAST ranks first ("bob" above "alice"), which is the order of
// ZREVRANGE; on a LowestFirst board the name that sorts first ranks first.
// Every read (Top, Page, Range, Around, Rank, Among, Between, AroundScore, All)
// follows this order, so pages never skip or repeat a member. Under Competition
// ranks, equal scores share a rank whatever their order.
//
// # Requirements
//
// Redis 6.2 or newer (ZADD GT/LT, ZRANGE ... REV, ZMSCORE), standalone,
// Sentinel or Cluster, through any rueidis client; Go 1.25 or newer.
package leaderboard
