package scripts

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"
)

// Header opens every script's arguments, in the one order common.lua reads
// them: a wrong position is a compile error here, never a wrong rank.
// Every script takes its board part (High, Competition, Slots); the
// scripts that apply submissions take the whole of it.
type Header struct {
	// High is true when higher scores rank first.
	High bool
	// Competition is true for competition ranks.
	Competition bool
	// Slots is the tie-break's time slots; 0 for none.
	Slots int64
	// Policy is a write's policy: "GT" or "LT" (KeepBest), "SET"
	// (Replace), "INCR" (Accumulate); "" for a read.
	Policy string
	// Slot is a write's time slot under a tie-break.
	Slot int64
	// Reversed is true when the tie part is Slots-1-Slot.
	Reversed bool
	// MaxS is the largest |scaled score| a tie-break holds.
	MaxS int64
	// ID is a write's WithID id; "" for none.
	ID string
	// Now is the board's clock in unix ms, for the id set.
	Now int64
	// Forget is when the id is forgotten, in unix ms.
	Forget int64
	// Applied reports that the store holds the id from before Redis's
	// window: the scripts take it as seen whatever Redis remembers (sent
	// as Forget "store", see seen_before in writes.lua).
	Applied bool
	// Data is a write's member data (WithData); "" leaves it. A write that
	// carries data takes the data hash as a key (see withData).
	Data string
	// ReadOnly is no argument: it asks that a read script run as
	// EVALSHA_RO (WithReplicaReads), so that a client may send it to a
	// replica. A write script ignores it.
	ReadOnly bool
}

// call is a run of s with keys and args, read-only when h asks and s is a
// read script.
func (h Header) call(s *Script, keys, args []string) Call {
	return Call{Script: s, Keys: keys, Args: args, ReadOnly: h.ReadOnly && s.read}
}

// The header's lengths: its board part, and the whole of it (common.lua:
// REST - 1 before and after write_header).
const (
	boardHeaderLen = 3
	writeHeaderLen = 11
)

// args starts an argument list with the header's board part, with room
// for n more.
func (h Header) args(n int) []string {
	a := make([]string, 0, boardHeaderLen+n)
	return append(a, flag(h.High), flag(h.Competition), itoa(h.Slots))
}

// writeArgs starts an argument list with the whole header, with room for
// n more.
func (h Header) writeArgs(n int) []string {
	a := make([]string, 0, writeHeaderLen+n)
	return append(a, flag(h.High), flag(h.Competition), itoa(h.Slots), h.Policy, itoa(h.Slot),
		flag(h.Reversed), itoa(h.MaxS), h.ID, itoa(h.Now), h.forget(), h.Data)
}

// forget is the header's last value: when the id is forgotten, or "store".
func (h Header) forget() string {
	if h.Applied {
		return "store"
	}
	return itoa(h.Forget)
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Exec runs one call in one round trip once the server has its script, or
// its plain command.
func (call Call) Exec(ctx context.Context, c rueidis.Client) rueidis.RedisResult {
	if call.Script == nil {
		return c.Do(ctx, call.Cmd())
	}
	if call.ReadOnly {
		return call.Script.ro.Exec(ctx, c, call.Keys, call.Args)
	}
	return call.Script.lua.Exec(ctx, c, call.Keys, call.Args)
}

// withData appends the members' data hash to keys when the header carries
// data: the key before the id set (see data_key in writes.lua).
func withData(h Header, keys []string, data string) []string {
	if h.Data != "" {
		return append(keys, data)
	}
	return keys
}

// withIDs appends the board's id set to keys when the header carries an id.
func withIDs(h Header, keys []string, ids string) []string {
	if h.ID != "" {
		return append(keys, ids)
	}
	return keys
}

func expiries(args []string, expires []int64) []string {
	for _, e := range expires {
		args = append(args, itoa(e))
	}
	return args
}

// SubmitCall applies one submission to window keys (one expiry each); data
// is the board's data hash, used when h.Data is set, ids its id set, used
// when h.ID is. See submit.lua.
func SubmitCall(h Header, keys []string, data, ids, member, value string, expires []int64) Call {
	args := expiries(append(h.writeArgs(2+len(expires)), member, value), expires)
	return h.call(Submit, withIDs(h, withData(h, keys, data), ids), args)
}

// ManyCall applies a batch (members[i] gets values[i]) to window keys.
// See many.lua.
func ManyCall(h Header, keys []string, expires []int64, members, values []string) Call {
	args := expiries(h.writeArgs(len(expires)+2*len(members)), expires)
	for i, m := range members {
		args = append(args, m, values[i])
	}
	return h.call(Many, keys, args)
}

// BatchWrite is one folded submission of a BatchCall: Keys index the
// call's keys, one expiry each.
type BatchWrite struct {
	Member, Value string
	Slot          int64
	Data          string
	Keys          []int
	Expires       []int64
}

// BatchCall applies writes to the window period keys they index, then
// data the board's data hash. See batch.lua.
func BatchCall(h Header, keys []string, data string, writes []BatchWrite) Call {
	n := 0
	for _, w := range writes {
		n += 5 + 2*len(w.Keys)
	}
	args := h.writeArgs(n)
	for _, w := range writes {
		args = append(args, w.Member, w.Value, itoa(w.Slot), w.Data, itoa(int64(len(w.Keys))))
		for j, k := range w.Keys {
			args = append(args, itoa(int64(k+1)), itoa(w.Expires[j]))
		}
	}
	return h.call(Batch, append(keys[:len(keys):len(keys)], data), args)
}

// ShardBatchWrite is one folded submission of a ShardBatchCall, on a
// sharded board: per window period (Periods, numbered from 0 in the order
// the call's shard keys hold them), the index in the call's keys of the
// member's partition hash there (Parts) and the period's expiry; DataKey
// is the index of its partition's data hash, -1 for none.
type ShardBatchWrite struct {
	Member, Value string
	Slot          int64
	Data          string
	DataKey       int
	Periods       []int
	Parts         []int
	Expires       []int64
}

// ShardBatchCall applies writes to a sharded board whose keys share one
// node: keys are every shard of each period the writes name (nshards
// keys a period, in period order), then the partition and data hashes
// they name by index; scale is 10^decimals of the tie-break ("1" for
// none), bounds the shard bounds. See shard_batch.lua.
func ShardBatchCall(h Header, keys []string, scale string, bounds []string, writes []ShardBatchWrite) Call {
	n := 2 + len(bounds)
	for _, w := range writes {
		n += 6 + 3*len(w.Periods)
	}
	args := append(h.writeArgs(n), scale, strconv.Itoa(len(bounds)+1))
	args = append(args, bounds...)
	for _, w := range writes {
		args = append(args, w.Member, w.Value, itoa(w.Slot), w.Data, itoa(int64(w.DataKey+1)), itoa(int64(len(w.Periods))))
		for j, p := range w.Periods {
			args = append(args, itoa(int64(p+1)), itoa(int64(w.Parts[j]+1)), itoa(w.Expires[j]))
		}
	}
	return h.call(ShardBatch, keys, args)
}

// RankCall reads the competition standings of members, and with a data
// hash (not "") their data. See rank.lua.
func RankCall(h Header, key, data string, members ...string) Call {
	return h.call(Rank, readKeys(key, data), append(h.args(len(members)), members...))
}

// readKeys is a read's sorted set, and its data hash when not "".
func readKeys(key, data string) []string {
	if data == "" {
		return []string{key}
	}
	return []string{key, data}
}

// AroundCall reads the slice around member, and with a data hash (not "")
// its members' data. See range.lua.
func AroundCall(h Header, key, data, member string, radius int) Call {
	return h.call(Range, readKeys(key, data), append(h.args(3), "around", member, strconv.Itoa(radius)))
}

// PageCall reads count entries from position start (0-based) with the
// first one's competition rank, and with a data hash (not "") their data.
// See range.lua.
func PageCall(h Header, key, data string, start int64, count int) Call {
	return h.call(Range, readKeys(key, data), append(h.args(3), "page", itoa(start), strconv.Itoa(count)))
}

// PartKeys is one partition's keys in a PartWriteCall: its hash of each
// window period (one expiry each, in the call's order), and its data hash,
// used when h.Data is set and by "remove".
type PartKeys struct {
	Periods []string
	Data    string
}

// PartWriteCall applies mode ("submit", "check", "remove", "evict",
// "touch") to partitions of one group of a sharded board on a Cluster:
// counts[k] members of parts[k], in the order given, take their versions
// from clock, the group's clock key; members[i] gets values[i] under
// "submit" and "check", and under "evict" values are the stored bounds
// lo, hi its members must still lie within; ids is the id set of a
// one-member call's partition, used when h.ID is set. See part_write.lua.
func PartWriteCall(h Header, mode string, parts []PartKeys, counts []int, clock, ids string, expires []int64, members, values []string) Call {
	args := append(h.writeArgs(2+len(counts)+len(expires)+2*len(members)), mode, strconv.Itoa(len(parts)))
	for _, n := range counts {
		args = append(args, strconv.Itoa(n))
	}
	args = expiries(args, expires)
	for i, m := range members {
		args = append(args, m)
		if mode == "submit" || mode == "check" {
			args = append(args, values[i])
		}
	}
	if mode == "evict" {
		args = append(args, values...) // lo, hi
	}
	withData := h.Data != "" || mode == "remove"
	keys := make([]string, 0, len(parts)*(len(expires)+1)+2)
	for _, p := range parts {
		keys = append(keys, p.Periods...)
		if withData {
			keys = append(keys, p.Data)
		}
	}
	return h.call(PartWrite, withIDs(h, append(keys, clock), ids), args)
}

// ShardOp is one versioned write to a shard: "put" (with Value), "del",
// "keep" (report only; the shard's copy checked against Value) or "sweep".
type ShardOp struct {
	Op, Member string
	Version    int64
	Value      string
	// Recent are the two pieces of the shard's recent versions that hold
	// Member's (keys.Recent).
	Recent [2]string
}

// ShardWriteCall applies ops to one shard on a Cluster: key is its sorted
// set. The reply holds each op's late flag and, with report, its ranks,
// before the shard's count. See shard_write.lua.
func ShardWriteCall(h Header, key string, expire int64, report bool, ops []ShardOp) Call {
	args := append(h.args(2+4*len(ops)), itoa(expire), flag(report))
	ks := make([]string, 1, 1+2*len(ops))
	ks[0] = key
	for _, o := range ops {
		args = append(args, o.Op, o.Member, itoa(o.Version), o.Value)
		ks = append(ks, o.Recent[0], o.Recent[1])
	}
	return h.call(ShardWrite, ks, args)
}

// ShardRankCall reads member's place in one shard, key. See
// shard_read.lua.
func ShardRankCall(h Header, key, member string) Call {
	return h.call(ShardRead, []string{key}, append(h.args(2), "rank", member))
}

// ShardAroundCall reads member's place in one shard, key, and the stretches
// of it an Around of count entries may need. See shard_read.lua.
func ShardAroundCall(h Header, key, member string, count int) Call {
	return h.call(ShardRead, []string{key}, append(h.args(3), "around", member, strconv.Itoa(count)))
}

// ShardRangeCall reads count entries of one shard, key, from position
// start. See shard_read.lua.
func ShardRangeCall(h Header, key string, start, count int64) Call {
	return h.call(ShardRead, []string{key}, append(h.args(3), "range", itoa(start), itoa(count)))
}

// FirstBetterCall counts the members of key strictly better than the
// entry at 0-based position start (at least 1). See first_better.lua.
func FirstBetterCall(h Header, key string, start int64) Call {
	return h.call(FirstBetter, []string{key}, append(h.args(2), itoa(start-1), itoa(start)))
}

// ShardLocateCall finds member on a sharded board whose keys share one
// node, and with radius 0 or more reads the slice around it: keys are its
// partition's hash, then every shard's sorted set; scale and bounds as
// ShardLocalCall's. See shard_locate.lua.
func ShardLocateCall(h Header, keys []string, member, scale string, radius int, bounds []string) Call {
	return h.call(ShardLocate, keys, append(append(h.args(3+len(bounds)), member, scale, strconv.Itoa(radius)), bounds...))
}

// CutoffCall reads the entry at position ceil(members * percent / 100),
// at least 1, and with a data hash (not "") its data. See range.lua.
func CutoffCall(h Header, key, data string, percent float64) Call {
	return h.call(Range, readKeys(key, data), append(h.args(3), "cutoff", fmtPercent(percent), ""))
}

// ShardCutoffCall is CutoffCall on a sharded board whose keys share one
// node: keys are every shard's sorted set. See shard_page.lua.
func ShardCutoffCall(h Header, keys []string, percent float64) Call {
	return h.call(ShardPage, keys, append(h.args(2), "cutoff", fmtPercent(percent)))
}

// fmtPercent prints a percent so that Lua reads back the same double.
func fmtPercent(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) }

// ShardPageCall reads count entries from board position start (0-based)
// of a sharded board whose keys share one node: keys are every shard's
// sorted set. See shard_page.lua.
func ShardPageCall(h Header, keys []string, start int64, count int) Call {
	return h.call(ShardPage, keys, append(h.args(2), itoa(start), strconv.Itoa(count)))
}

// ShardLocalCall submits to a sharded board whose keys share one node:
// scale is 10^decimals of the tie-break ("1" for none), bounds the shard
// bounds, one expiry per window; data is the partition's data hash, used
// when h.Data is set. See shard_local.lua.
func ShardLocalCall(h Header, keys []string, data, ids, member, value, scale string, bounds []string, expires []int64) Call {
	args := append(h.writeArgs(4+len(bounds)+len(expires)), member, value, scale, strconv.Itoa(len(bounds)+1))
	args = expiries(append(args, bounds...), expires)
	return h.call(ShardLocal, withIDs(h, withData(h, keys, data), ids), args)
}

// ShardLocalManyCall applies mode ("submit": members[i] gets values[i];
// "remove"; "evict": values are the stored bounds lo, hi its members must
// still lie within; "repair") to a sharded board whose keys share one node: keys
// are per window every shard's sorted set, then nparts partition hashes,
// and for "remove" then the nparts partitions' data hashes; member i is in
// partition part[i] (1 to nparts); scale and bounds as ShardLocalCall's,
// one expiry per window. See shard_local_many.lua.
func ShardLocalManyCall(h Header, mode string, keys []string, scale string, bounds []string, nparts int, expires []int64, part []int, members, values []string) Call {
	args := append(h.writeArgs(4+len(bounds)+len(expires)+3*len(members)), mode, scale, strconv.Itoa(len(bounds)+1))
	args = expiries(append(append(args, bounds...), strconv.Itoa(nparts)), expires)
	for i, m := range members {
		args = append(args, strconv.Itoa(part[i]), m)
		if mode == "submit" {
			args = append(args, values[i])
		}
	}
	if mode == "evict" {
		args = append(args, values...) // lo, hi
	}
	return h.call(ShardLocalMany, keys, args)
}

// BetweenCall reads the best n entries whose stored values lie within lo..hi
// (stored bounds, inclusive), with the members strictly better than them,
// and with a data hash (not "") their data. See range.lua.
func BetweenCall(h Header, key, data, lo, hi string, n int) Call {
	return h.call(Range, readKeys(key, data), append(h.args(4), "between", lo, hi, strconv.Itoa(n)))
}

// ScoreCall reads the place of a score whose stored bound toward the
// better end is b, and the radius entries either side of it, with a data
// hash (not "") their data. See range.lua.
func ScoreCall(h Header, key, data, b string, radius int) Call {
	return h.call(Range, readKeys(key, data), append(h.args(3), "score", b, strconv.Itoa(radius)))
}

// AfterCall reads the n entries after the entry (value, member) in board
// order ("" "" for the first n), and with a data hash (not "") their
// data. See range.lua and after in order.lua.
func AfterCall(h Header, key, data, value, member string, n int) Call {
	return h.call(Range, readKeys(key, data), append(h.args(4), "after", value, member, strconv.Itoa(n)))
}

// ShardBetweenCall is BetweenCall on one shard, key. See shard_read.lua.
func ShardBetweenCall(h Header, key, lo, hi string, n int) Call {
	return h.call(ShardRead, []string{key}, append(h.args(4), "between", lo, hi, strconv.Itoa(n)))
}

// ShardScoreCall is ScoreCall on one shard, key. See shard_read.lua.
func ShardScoreCall(h Header, key, b string, radius int) Call {
	return h.call(ShardRead, []string{key}, append(h.args(3), "score", b, strconv.Itoa(radius)))
}

// ShardAfterCall is AfterCall on one shard, key. See shard_read.lua.
func ShardAfterCall(h Header, key, value, member string, n int) Call {
	return h.call(ShardRead, []string{key}, append(h.args(4), "after", value, member, strconv.Itoa(n)))
}

// RemoveBetweenCall removes the best n members whose stored values lie
// within lo..hi from one period, key. See remove_between.lua.
func RemoveBetweenCall(h Header, key, lo, hi string, n int) Call {
	return h.call(RemoveBetween, []string{key}, append(h.args(3), lo, hi, strconv.Itoa(n)))
}

// RemoveCall removes members from the periods, data and deletes the top
// mirrors hot, of an unsharded board. See remove.lua.
func RemoveCall(h Header, periods []string, data string, hot, members []string) Call {
	keys := append(append(append(make([]string, 0, len(periods)+1+len(hot)), periods...), data), hot...)
	return h.call(Remove, keys, append(append(h.args(1+len(members)), strconv.Itoa(len(periods))), members...))
}

// EvictBetweenCall removes from one period, key, those of members whose
// stored values still lie within lo..hi. See remove_between.lua.
func EvictBetweenCall(h Header, key, lo, hi string, members []string) Call {
	return h.call(RemoveBetween, []string{key}, append(append(h.args(3+len(members)), lo, hi, "0"), members...))
}

// HotTopCall rewrites mirror, a period's top mirror, with the period's
// first k entries, read from its sorted sets (its own, or its shards best
// first), expiring ttl milliseconds later. See hot_top.lua.
func HotTopCall(h Header, mirror string, sets []string, k int, ttl int64) Call {
	ks := make([]string, 0, 1+len(sets))
	return h.call(HotTop, append(append(ks, mirror), sets...), append(h.args(2), strconv.Itoa(k), itoa(ttl)))
}

// HotPutCall puts members with their stored values (board order) into
// mirror, a sharded Cluster board's top mirror of k entries, expiring ttl
// milliseconds later or at the period's expire (unix ms; 0 for none) if
// sooner, unless the counter turn has moved past the reader's turn. See
// hot_put.lua.
func HotPutCall(h Header, mirror, turn string, reader, ttl int64, k int, expire int64, members, values []string) Call {
	args := append(h.args(4+2*len(members)), itoa(reader), itoa(ttl), strconv.Itoa(k), itoa(expire))
	for i, m := range members {
		args = append(args, m, values[i])
	}
	return h.call(HotPut, []string{mirror, turn}, args)
}

// TopDataCall reads the first n entries of key and their members' data from
// the hash data. See top_data.lua.
func TopDataCall(h Header, key, data string, n int) Call {
	return h.call(TopData, []string{key, data}, append(h.args(1), strconv.Itoa(n)))
}

// PrimaryReadCall runs reads, each of one key of one slot (its name, the
// key, then its arguments, as rueidis built it), by primary_read.lua: on
// the primary, atomically, where Redis runs it while a MULTI of them is
// refused (over maxmemory). See primary_read.lua.
func PrimaryReadCall(reads [][]string) Call {
	var keys []string
	args := Header{}.args(0)
	for _, r := range reads {
		keys = append(keys, r[1])
		args = append(append(args, itoa(int64(len(r)-2)), r[0]), r[2:]...)
	}
	return Call{Script: PrimaryRead, Keys: keys, Args: args}
}
