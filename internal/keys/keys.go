// Package keys builds every Redis key the leaderboard uses. Keeping the one
// builder here is what guarantees that all keys of a board carry the same hash
// tag, so a transaction or script touching several of them stays in one slot
// on Redis Cluster.
package keys

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Board is the hash-tagged base of every key of one board: "lb:{weekly-race}".
type Board struct {
	base string
}

// NewBoard returns the key base for a board; prefix and name must have passed
// ValidName, and name must not hold '#', which separates a shard's number
// (see Shards).
func NewBoard(prefix, name string) Board {
	return Board{base: prefix + ":{" + name + "}"}
}

// IDs returns the key of the board's WithID ids: a sorted set of id -> unix
// ms when it is forgotten.
func (b Board) IDs() string { return b.base + ":ids" }

// Data returns the key of the members' data (WithData): a hash of member ->
// data, the board's (or, on a sharded board, a partition's) and no
// window's.
func (b Board) Data() string { return b.base + ":data" }

// Marker returns the key whose presence says Redis holds the board as last
// rebuilt (see Leaderboard.Present). Of a shard's key base (see Shards) it
// is that shard's share of it, in the shard's slot: a sharded board keeps
// one in every hash tag its keys use (with PartitionSet.GroupMarker), so
// that a node that lost its part of the board lost one too.
func (b Board) Marker() string { return b.base + ":marker" }

// RecentParts is how many pieces a shard's recent versions are cut into,
// by member. Each piece is a hash Redis frees when it expires: a few
// thousand writes to a shard a second leave about a hundred members a
// piece, a compact listpack (hash-max-listpack-entries is 512 by default)
// freed at once, where one hash of them all held every write of the last
// half minute and stalled Redis for tens of milliseconds as it expired
// (about 47 ms for 100,000 members on Redis 7.0; see BENCHMARKS.md).
const RecentParts = 1024

// Recent returns the keys of the two pieces of recent versions kept beside
// a shard's sorted set on a Cluster that hold member's: member -> version
// of the last write the shard applied to it, for the writes of the last
// minute or so (the two take turns, each expiring; see versions.lua).
// They share the shard's hash tag.
func Recent(shard, member string) [2]string {
	p := strconv.Itoa(recentPart(member))
	return [2]string{shard + ":v0:" + p, shard + ":v1:" + p}
}

// AllRecent appends to ks the keys of every piece of a shard's recent
// versions (see Recent).
func AllRecent(ks []string, shard string) []string {
	for p := range RecentParts {
		n := strconv.Itoa(p)
		ks = append(ks, shard+":v0:"+n, shard+":v1:"+n)
	}
	return ks
}

// recentPart is member's piece of the recent versions: FNV-1a's bits
// above the ones PartitionOf takes, so that a partition's members spread
// over the pieces too.
func recentPart(member string) int {
	return int(fnv1a(member) >> 12 % RecentParts)
}

// Tag returns the part of every key that Redis Cluster hashes: "{name}".
func (b Board) Tag() string {
	i := strings.IndexByte(b.base, '{')
	return b.base[i:]
}

// Pattern returns a SCAN glob matching every key of the board.
func (b Board) Pattern() string {
	return escapeGlob(b.base) + ":*"
}

// Period returns the key of one window's period: "lb:{name}:weekly:2026-W49".
// A period whose ID equals its window's name (the all-time board) is not
// repeated: "lb:{name}:alltime".
func (b Board) Period(window, period string) string {
	if period == window {
		return b.base + ":" + window
	}
	return b.base + ":" + window + ":" + period
}

// Hot returns the key of a period's top mirror (WithHotTop), a string of
// its best members (mirror.lua): "lb:{name}::topk:weekly:2026-W49". The
// empty segment keeps it apart from every period's key, whatever the
// windows' names. ("::top", the name before the mirror was a string, held
// a sorted set: a new name, so that an SDK of either kind never meets the
// other's type.)
func (b Board) Hot(window, period string) string {
	return b.HotOf(b.Period(window, period))
}

// HotOf is Hot of the period whose key is key.
func (b Board) HotOf(key string) string {
	return b.base + "::topk" + strings.TrimPrefix(key, b.base)
}

// HotTurn returns the key of a sharded Cluster board's mirror's turn
// counter (see hot_put.lua): "lb:{name}::turn:weekly:2026-W49", in the
// mirror's slot.
func (b Board) HotTurn(window, period string) string {
	return b.base + "::turn" + strings.TrimPrefix(b.Period(window, period), b.base)
}

// MaxNameLen is the most bytes ValidName takes: a store keeps a board's
// name, its windows' names and their periods' IDs beside a member of up to
// 512 bytes in one index entry (PostgreSQL's btree holds at most 2,704
// bytes an entry), and a shorter name keeps every key short.
const MaxNameLen = 200

// ValidName reports whether s may appear in a key: non-empty, at most
// MaxNameLen bytes of valid UTF-8, printable, with no whitespace and no
// braces (a brace would move the hash tag).
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameLen || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '{' || r == '}' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Reserved reports whether a window may not be named s: the last segment
// of a key the board (or a partition) keeps beside its periods ("ids",
// "data", "marker", "clock"), which a period whose ID is its window's name
// (see Period) would collide with.
func Reserved(s string) bool {
	switch s {
	case "ids", "data", "marker", "clock":
		return true
	}
	return false
}

// ValidSegment is ValidName for a window name or period ID, which also must
// not hold ':' so that keys split back into their parts unambiguously.
func ValidSegment(s string) bool {
	return ValidName(s) && !strings.ContainsRune(s, ':')
}

func escapeGlob(s string) string {
	var sb strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
