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
// Every operation costs one round trip to Redis: one Do or one DoMulti on the
// rueidis client you pass in. Submit applies the policy to every window in one
// MULTI/EXEC transaction (KeepBest and Replace under Ordinal ranks) or one Lua
// script (Accumulate, which must refuse an overflowing total before writing,
// Competition ranks, which count members by the stored score, and KeepBest
// under LaterFirst, which compares plain scores). Reads that
// combine several replies (Rank, Page) read them in one transaction or script,
// so a rank and a total always come from the same moment. Around reads the
// member's rank and the slice around it in one script, never rank-then-range.
//
// # Keys
//
// Every key of a board shares one hash tag, the board's name:
//
//	lb:{name}:alltime
//	lb:{name}:daily:2026-11-30
//	lb:{name}:weekly:2026-W49
//	lb:{name}:monthly:2026-11
//
// so every transaction and script runs unchanged on Redis Cluster (all keys of
// a board live in one slot). The prefix "lb" is set with WithKeyPrefix.
//
// # Expiry
//
// A windowed key expires at an absolute time: its period's end plus the
// retention (WithRetention; default one period length), set with PEXPIREAT on
// every write. Writing again never pushes the expiry out, unlike a sliding
// EXPIRE. The all-time key never expires.
//
// # Ties
//
// With a tie-break (WithTieBreak, EarlierFirst, LaterFirst), equal scores are
// ordered by when they were reached; see TieBreak for the encoding and its
// limits. Without one, members with equal scores are ordered by their names
// compared as bytes, in the board's direction: on a HighestFirst board the
// name that sorts LAST ranks first ("bob" above "alice"), which is the order
// of ZREVRANGE; on a LowestFirst board the name that sorts first ranks first.
// Every read (Top, Page, Around, Rank, Among) follows this order, so pages
// never skip or repeat a member. Under Competition ranks, equal scores share a
// rank whatever their order.
//
// # Requirements
//
// Redis 6.2 or newer (ZADD GT/LT, ZRANGE ... REV, ZMSCORE), standalone,
// Sentinel or Cluster.
package leaderboard
