package keys

import "strconv"

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

// Shards returns the key bases of the n shards of a sharded board, each
// under a hash tag of its own, "lb:{weekly-race#s3~41}": the shard's number
// and a salt, the smallest that puts the tag within shardReach slots of one
// of n places spaced evenly over the 16384 slots, at the odd multiples of
// 16384/(2n). Which shard takes which place turns with the board's own slot,
// so that boards put their best shards on different nodes. A Cluster whose
// nodes own contiguous slot ranges of equal size, as `redis-cli --cluster
// create` makes them, then holds n/nodes shards per node, rounded up or
// down: by construction, not by the luck of a hash. (The one exception: a
// place within shardReach of a range's edge, which needs an even number of
// nodes and a place at an exact multiple of 16384/nodes, may fall on either
// side.) Finding a salt takes about 16384/(2*shardReach+1) CRCs of a short
// salt a shard, some 3,300: about a millisecond for 8 shards.
func (b Board) Shards(n int) []Board {
	tag := b.Tag()
	name := tag[1 : len(tag)-1]
	out := make([]Board, n)
	for i := range out {
		place := b.shardPlace(i, n)
		prefix := name + "#s" + strconv.Itoa(i) + "~"
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
