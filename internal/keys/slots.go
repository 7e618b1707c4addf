package keys

import (
	"math"
	"strconv"
	"strings"
)

// Slots is the number of hash slots of Redis Cluster.
const Slots = 16384

// crcTable is CRC-16/XMODEM (polynomial 0x1021), the CRC Redis Cluster
// hashes keys with.
var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc16(s string) uint16 { return crcMore(0, s) }

// crcMore continues the CRC c over s.
func crcMore[T string | []byte](c uint16, s T) uint16 {
	for i := 0; i < len(s); i++ {
		c = c<<8 ^ crcTable[byte(c>>8)^s[i]]
	}
	return c
}

// Slot is the Redis Cluster hash slot of key: the CRC of its hash tag (the
// text between the first '{' and the first '}' after it, when not empty),
// or of the whole key.
func Slot(key string) int {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j > i+1 {
					key = key[i+1 : j]
				}
				return int(crc16(key)) % Slots
			}
		}
		break
	}
	return int(crc16(key)) % Slots
}

// Shards returns the key bases of the len(bounds)+1 shards of a board
// sharded by bounds, each under a hash tag of its own,
// "lb:{weekly-race#s3.k2x9a1~41}": the shard's number, the layout (Layout of
// the bounds: boards with other bounds, such as the two layouts of a live
// move to new bounds, never share a key) and a salt, the smallest that puts
// the tag within shardReach slots of one of n places spaced evenly over the
// 16384 slots, at the odd multiples of 16384/(2n). Which shard takes which
// place turns with the board's own slot, so that boards put their best
// shards on different nodes. A Cluster whose nodes own contiguous slot
// ranges of equal size, as `redis-cli --cluster create` makes them, then
// holds n/nodes shards per node, rounded up or down: by construction, not
// by the luck of a hash. (The one exception: a place within shardReach of a
// range's edge, which needs an even number of nodes and a place at an exact
// multiple of 16384/nodes, may fall on either side.) Finding a salt takes
// about 16384/(2*shardReach+1) CRCs of a short salt a shard, some 3,300:
// about a millisecond for 8 shards.
func (b Board) Shards(bounds []float64) []Board {
	tag := b.Tag()
	name := tag[1 : len(tag)-1]
	layout := Layout(bounds)
	n := len(bounds) + 1
	out := make([]Board, n)
	for i := range out {
		place := b.shardPlace(i, n)
		prefix := name + "#s" + strconv.Itoa(i) + "." + layout + "~"
		c := crc16(prefix)
		var digits []byte
		for salt := 0; ; salt++ {
			digits = strconv.AppendInt(digits[:0], int64(salt), 10)
			if slotDistance(int(crcMore(c, digits))%Slots, place) <= shardReach {
				out[i] = Board{base: b.base[:len(b.base)-len(tag)] + "{" + prefix + string(digits) + "}"}
				break
			}
		}
	}
	return out
}

// Layout names a set of bounds in a shard's key: six base-36 digits of
// FNV-1a (64 bits) over the bounds' IEEE 754 bits, so that two sets of
// bounds share a name with odds of about one in two billion (New refuses a
// live move between two that do). A bound of -0 is named as 0, the same
// bound (-0 == 0: both put a score of 0 above them): bounds that shard
// alike name one layout.
func Layout(bounds []float64) string {
	h := uint64(14695981039346656037)
	for _, f := range bounds {
		if f == 0 {
			f = 0 // -0's bits are not 0's
		}
		bits := math.Float64bits(f)
		for k := 0; k < 64; k += 8 {
			h ^= bits >> k & 0xff
			h *= 1099511628211
		}
	}
	s := strconv.FormatUint(h%layoutNames, 36)
	return strings.Repeat("0", 6-len(s)) + s
}

// layoutNames is how many names Layout gives: 36^6.
const layoutNames = 36 * 36 * 36 * 36 * 36 * 36

// shardReach is how far from its place a shard's slot may fall.
const shardReach = 2

// shardPlace is the slot Shards aims shard i of n at.
func (b Board) shardPlace(i, n int) int {
	turn := Slot(b.base) % n
	return (2*((i+turn)%n) + 1) * Slots / (2 * n)
}

// slotDistance is the distance between two slots on the ring of slots.
func slotDistance(a, b int) int {
	d := a - b
	if d < 0 {
		d = -d
	}
	return min(d, Slots-d)
}

// Partitions is the number of partitions of a sharded board (see
// Board.Partitions). A partition's hash stays a compact listpack up to
// Redis's hash-max-listpack-entries (512 by default), so about 2 million
// members a period before its hashes turn into hash tables.
const Partitions = 4096

// PartitionGroups is the number of hash tags a sharded board's partitions
// share: 32 partitions a tag, one tag every 128 slots. A write of many
// members (a Batcher's batch, SubmitMany, Remove) reaches the partitions
// of a group in one call, where it took one a partition.
const PartitionGroups = 128

// perGroup is the number of partitions in a group.
const perGroup = Partitions / PartitionGroups

// GroupOf returns partition p's group: the partitions p / 32 * 32 to
// p / 32 * 32 + 31 share one hash tag.
func GroupOf(p int) int { return p / perGroup }

// PartitionSet is the key bases of a board's partitions (see
// Board.Partitions), kept as their groups' salts.
type PartitionSet struct {
	head  string // the base up to the salt: "lb:{weekly-race#p~"
	salts []uint32
}

// Len is the number of partitions, Partitions.
func (s PartitionSet) Len() int { return Partitions }

// Of returns partition i's key base, "lb:{weekly-race#p~1234}:17": its
// group's hash tag, then its number.
func (s PartitionSet) Of(i int) Board {
	return Board{base: s.tag(GroupOf(i)) + ":" + strconv.Itoa(i)}
}

// GroupClock returns the key of group g's version clock, the last version
// it gave a write on a Cluster: "lb:{weekly-race#p~1234}:clock". Every
// write to a member of the group's partitions takes its versions from it.
func (s PartitionSet) GroupClock(g int) string { return s.tag(g) + ":clock" }

// GroupMarker returns the key of group g's share of the board's Rebuild
// marker (see Board.Marker): "lb:{weekly-race#p~1234}:marker", in the
// group's slot, so that a node that lost the group's partitions and clock
// lost it too.
func (s PartitionSet) GroupMarker(g int) string { return s.tag(g) + ":marker" }

// tag is group g's key base up to its hash tag's end.
func (s PartitionSet) tag(g int) string {
	return s.head + strconv.FormatUint(uint64(s.salts[g]), 10) + "}"
}

// Partitions returns the key bases of the partitions that serialize a
// sharded board's writes, "lb:{weekly-race#p~1234}:17", 32 under each
// hash tag: group g's tag hashes to a slot in [128g, 128g+128), so that
// any Cluster holds a share of them in proportion to the slots it owns, by
// construction, and the 32 partitions of a group share one slot. The salts
// are found by trying salts in turn and giving each group the first that
// lands in its slots: some 700 CRCs of a short string.
func (b Board) Partitions() PartitionSet {
	head, salts := b.partitionSalts(PartitionGroups)
	return PartitionSet{head: head, salts: salts}
}

// LegacyPartitions returns the key bases the 4096 partitions had before
// they shared tags, each under a tag of its own on four slots of its own
// ("lb:{weekly-race#p~1234}", keys "lb:{weekly-race#p~1234}:alltime"):
// Check looks for them to tell a board written under that layout. Some
// 36,000 CRCs, under a millisecond; only Check's rare path pays them.
func (b Board) LegacyPartitions() []Board {
	head, salts := b.partitionSalts(Partitions)
	out := make([]Board, len(salts))
	for i, salt := range salts {
		out[i] = Board{base: head + strconv.FormatUint(uint64(salt), 10) + "}"}
	}
	return out
}

// partitionSalts cuts the slots into n equal ranges and returns, for each,
// the first salt whose partition tag lands in it, and the key base up to
// the salt ("lb:{weekly-race#p~").
func (b Board) partitionSalts(n int) (head string, salts []uint32) {
	tag := b.Tag()
	prefix := tag[1:len(tag)-1] + "#p~"
	c := crc16(prefix)
	salts = make([]uint32, n)
	found := make([]bool, n)
	left := n
	var digits []byte
	for salt := 0; left > 0; salt++ {
		digits = strconv.AppendInt(digits[:0], int64(salt), 10)
		i := int(crcMore(c, digits)) % Slots * n / Slots
		if !found[i] {
			found[i], salts[i] = true, uint32(salt)
			left--
		}
	}
	return b.base[:len(b.base)-len(tag)] + "{" + prefix, salts
}

// PartitionOf returns the partition of member: FNV-1a of its bytes, modulo
// Partitions. It decides where a member's writes are serialized, so it
// never changes.
func PartitionOf(member string) int {
	return int(fnv1a(member) % Partitions)
}

// fnv1a is the 32-bit FNV-1a hash of s.
func fnv1a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
