package keys

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPeriodKeys(t *testing.T) {
	b := NewBoard("lb", "race")
	require.Equal(t, "lb:{race}:alltime", b.Period("alltime", "alltime"))
	require.Equal(t, "lb:{race}:weekly:2026-W49", b.Period("weekly", "2026-W49"))
	require.Equal(t, "{race}", b.Tag())
	require.Equal(t, "lb:{race}::topk:weekly:2026-W49", b.Hot("weekly", "2026-W49"))
	require.Equal(t, "lb:{race}::turn:weekly:2026-W49", b.HotTurn("weekly", "2026-W49"))
	require.Equal(t, "lb:{race}::turn:alltime", b.HotTurn("alltime", "alltime"))
	require.Equal(t, `lb:{race\*}:*`, NewBoard("lb", "race*").Pattern())
	require.Regexp(t, `^lb:\{race#s3\.[0-9a-z]{6}~\d+\}:weekly:2026-W49$`, b.Shards([]float64{1, 2, 3, 4})[3].Period("weekly", "2026-W49"))
	parts := b.Partitions()
	part := parts.Of(17)
	require.Regexp(t, `^lb:\{race#p~\d+\}:17:weekly:2026-W49$`, part.Period("weekly", "2026-W49"))
	require.Regexp(t, `^lb:\{race#p~\d+\}:clock$`, parts.GroupClock(GroupOf(17)))
	require.Regexp(t, `^lb:\{race#p~\d+\}:marker$`, parts.GroupMarker(GroupOf(17)))
	require.Equal(t, "lb:{race}:marker", b.Marker())
	require.Regexp(t, `^lb:\{race#s3\.[0-9a-z]{6}~\d+\}:marker$`, b.Shards([]float64{1, 2, 3, 4})[3].Marker())
	require.Regexp(t, `^lb:\{race#p~\d+\}:17:ids$`, part.IDs())
	require.Regexp(t, `^lb:\{race#p~\d+\}:17:data$`, part.Data())
	r := Recent("lb:{race#s3~1}:daily", "player:1")
	p := strconv.Itoa(recentPart("player:1"))
	require.Equal(t, [2]string{"lb:{race#s3~1}:daily:v0:" + p, "lb:{race#s3~1}:daily:v1:" + p}, r)
	all := AllRecent(nil, "lb:{race#s3~1}:daily")
	require.Len(t, all, 2*RecentParts)
	require.Contains(t, all, r[0])
	require.Contains(t, all, r[1])
	for _, k := range all {
		require.Equal(t, Slot("lb:{race#s3~1}:daily"), Slot(k), k)
	}
}

// TestPartitions checks that every group's tag lands in its own 128
// slots, that the 32 partitions of a group and its clock share its slot
// and no other partition's key, for boards of any name and prefix, and
// that members spread evenly.
func TestPartitions(t *testing.T) {
	for _, b := range []Board{NewBoard("lb", "race"), NewBoard("g:7", "weekly-race"), NewBoard("lb", "ü#x")} {
		parts := b.Partitions()
		require.Equal(t, Partitions, parts.Len())
		seen := map[string]bool{}
		for i := range parts.Len() {
			p := parts.Of(i)
			slot := Slot(p.Period("alltime", "alltime"))
			require.Equal(t, GroupOf(i), slot/(Slots/PartitionGroups), "partition %d of %s at slot %d", i, b.base, slot)
			require.Equal(t, slot, Slot(parts.Of(GroupOf(i)*32).Data()), "partition %d beside its group's first", i)
			require.Equal(t, slot, Slot(parts.GroupClock(GroupOf(i))))
			require.Equal(t, slot, Slot(parts.GroupMarker(GroupOf(i))), "partition %d beside its group's marker", i)
			require.True(t, strings.HasPrefix(p.base, b.base[:len(b.base)-len(b.Tag())]), p.base)
			require.False(t, seen[p.base])
			seen[p.base] = true
		}
		require.Equal(t, 31, GroupOf(1023))
		require.Equal(t, 32, GroupOf(1024))
	}
	counts := make([]int, Partitions)
	for i := range 200 * Partitions {
		counts[PartitionOf("player-"+strconv.Itoa(i))]++
	}
	for i, c := range counts {
		// 200 a partition on average; a Poisson tail this far out is
		// below one in a billion for a hash that spreads well.
		require.InDelta(t, 200, c, 100, "partition %d holds %d", i, c)
	}
	require.Equal(t, PartitionOf("abc"), PartitionOf("abc"))
	require.Equal(t, 0x1a47e90b%Partitions, PartitionOf("abc")) // FNV-1a 32 of "abc": never changes
}

// TestMarkers: a sharded board's markers (the board's, each shard's, each
// partition group's) are one in every hash tag its keys use, each in its
// tag's slot and apart from the tag's other keys, so that a node that lost
// any part of the board lost a marker (see Leaderboard.Present).
func TestMarkers(t *testing.T) {
	b := NewBoard("lb", "race")
	shards := b.Shards([]float64{1, 2, 3, 4})
	parts := b.Partitions()
	tags := map[string]string{b.Tag(): b.Marker()} // hash tag -> its marker
	for _, s := range shards {
		tags[s.Tag()] = s.Marker()
	}
	for g := range PartitionGroups {
		m := parts.GroupMarker(g)
		tags[m[strings.IndexByte(m, '{'):strings.IndexByte(m, '}')+1]] = m
	}
	require.Len(t, tags, 1+len(shards)+PartitionGroups, "one marker a tag")
	// Every kind of key the board keeps has its tag's marker beside it.
	var all []string
	for _, s := range shards {
		all = append(all, s.Period("alltime", "alltime"), s.Period("daily", "2026-11-30"), Recent(s.Period("alltime", "alltime"), "m")[0])
	}
	for i := range parts.Len() {
		p := parts.Of(i)
		all = append(all, p.Period("alltime", "alltime"), p.IDs(), p.Data(), parts.GroupClock(GroupOf(i)))
	}
	all = append(all, b.Period("alltime", "alltime"), b.IDs(), b.Data(), b.Hot("alltime", "alltime"), b.HotTurn("daily", "2026-11-30"))
	for _, k := range all {
		tag := k[strings.IndexByte(k, '{') : strings.IndexByte(k, '}')+1]
		m, ok := tags[tag]
		require.True(t, ok, "%s: a tag without a marker", k)
		require.NotEqual(t, m, k)
		require.Equal(t, Slot(k), Slot(m), "%s beside its marker %s", k, m)
	}
}

func TestValidName(t *testing.T) {
	for _, s := range []string{"race", "a:b", "üben", "player-42", strings.Repeat("ü", MaxNameLen/2)} {
		require.True(t, ValidName(s), s)
	}
	for _, s := range []string{"", "a b", "a{b", "a}b", "a\tb", "a\nb", "a\x00b", "a\xffb", "\xc3", strings.Repeat("n", MaxNameLen+1)} {
		require.False(t, ValidName(s), "%q", s)
	}
	require.False(t, ValidSegment("a:b"))
	b := NewBoard("lb", "race")
	for _, n := range []string{"ids", "data", "marker", "clock"} {
		require.True(t, Reserved(n), n)
		// Each is a key of the board or of a partition, which a window so
		// named would collide with ("clock": a partition group's clock,
		// which a board's own keys stay clear of too).
		require.Contains(t, []string{b.IDs(), b.Data(), b.Marker(), b.base + ":clock"}, b.Period(n, n))
	}
	require.False(t, Reserved("daily"))
	require.True(t, ValidSegment("2026-W49"))
}

func TestSlot(t *testing.T) {
	// Values from Redis's CLUSTER KEYSLOT and its specification's CRC check.
	require.Equal(t, 0x31C3, int(crc16("123456789")))
	require.Equal(t, 12182, Slot("foo"))
	require.Equal(t, Slot("user1000"), Slot("{user1000}.following"))
	require.Equal(t, Slot("foo{}{bar}"), int(crc16("foo{}{bar}"))%Slots, "an empty tag hashes the whole key")
	require.Equal(t, Slot("bar"), Slot("foo{bar}{zap}"))
	require.Equal(t, Slot("foo{bar"), int(crc16("foo{bar"))%Slots)
}

// TestShardsSpread: a board's shard tags sit on an even spacing of the
// slots, starting at the board's own slot, so that the nodes of a Cluster
// made by redis-cli --cluster create (equal contiguous ranges) hold n/nodes
// shards each, rounded up or down.
func TestShardsSpread(t *testing.T) {
	for _, name := range []string{"race", "weekly-race", "üben", "a", "player:board:7"} {
		for _, n := range []int{2, 3, 4, 5, 8, 16, 33, 64} {
			b := NewBoard("lb", name)
			bounds := make([]float64, n-1)
			for i := range bounds {
				bounds[i] = float64(i)
			}
			shards := b.Shards(bounds)
			require.Len(t, shards, n)
			seen := map[string]bool{}
			for i, s := range shards {
				key := s.Period("alltime", "alltime")
				require.Regexp(t, `^lb:\{`+regexp.QuoteMeta(name)+`#s`+strconv.Itoa(i)+`\.`+Layout(bounds)+`~\d+\}:alltime$`, key)
				require.False(t, seen[s.Tag()], "%s: two shards share a tag", key)
				seen[s.Tag()] = true
				require.LessOrEqual(t, slotDistance(Slot(key), b.shardPlace(i, n)), shardReach, "%s (n=%d)", key, n)
			}
			require.Equal(t, shards, b.Shards(bounds), "Shards is deterministic")
			for nodes := 1; nodes <= 6; nodes++ {
				per := make([]int, nodes)
				for _, s := range shards {
					per[nodeOf(Slot(s.Tag()), nodes)]++
				}
				lo, hi := n/nodes, (n+nodes-1)/nodes
				if nodes%2 == 1 {
					// No place can sit on a range's edge (see Shards).
					require.Equal(t, hi, slices.Max(per), "%s n=%d nodes=%d: %v", name, n, nodes, per)
					require.Equal(t, lo, slices.Min(per), "%s n=%d nodes=%d: %v", name, n, nodes, per)
				} else {
					require.LessOrEqual(t, slices.Max(per), hi+1, "%s n=%d nodes=%d: %v", name, n, nodes, per)
					require.GreaterOrEqual(t, slices.Min(per), lo-1, "%s n=%d nodes=%d: %v", name, n, nodes, per)
				}
			}
		}
	}
}

// nodeOf is the node owning slot among nodes equal contiguous ranges, as
// redis-cli --cluster create assigns them: node k from round(k*16384/nodes).
func nodeOf(slot, nodes int) int {
	per := float64(Slots) / float64(nodes)
	k := nodes - 1
	for k > 0 && float64(slot) < math.Round(float64(k)*per) {
		k--
	}
	return k
}

// TestLayout: the layout name is a function of the bounds alone, six
// base-36 digits, and differs between bounds that differ, even by one
// float64 step or by their order of shards.
func TestLayout(t *testing.T) {
	require.Equal(t, Layout([]float64{0, 100}), Layout([]float64{0, 100}))
	require.Regexp(t, `^[0-9a-z]{6}$`, Layout(nil))
	seen := map[string][]float64{}
	add := func(bounds ...float64) {
		name := Layout(bounds)
		require.Regexp(t, `^[0-9a-z]{6}$`, name)
		prev, dup := seen[name]
		require.False(t, dup, "%v and %v share layout %s", prev, bounds, name)
		seen[name] = bounds
	}
	add()
	add(0)
	add(math.Nextafter(0, 1))
	add(0, 100)
	add(0, math.Nextafter(100, 200))
	add(0, 100, 1000)
	for i := 1; i < 5000; i++ {
		add(float64(i), float64(2*i))
	}
	b := NewBoard("lb", "race")
	require.NotEqual(t, b.Shards([]float64{0, 100})[0].Tag(), b.Shards([]float64{0, 200})[0].Tag())
}

// TestRecentParts checks that members spread evenly over the pieces of a
// shard's recent versions, and that the members of one partition do too
// (the piece takes other bits of the hash than the partition).
func TestRecentParts(t *testing.T) {
	const n = 1 << 20
	count := make([]int, RecentParts)
	inPart0 := map[int]bool{}
	part0 := 0
	for i := range n {
		m := "player:" + strconv.Itoa(i)
		p := recentPart(m)
		require.True(t, p >= 0 && p < RecentParts, "piece %d", p)
		count[p]++
		if PartitionOf(m) == 0 {
			part0++
			inPart0[p] = true
		}
	}
	mean := n / RecentParts
	require.Greater(t, slices.Min(count), mean*3/4)
	require.Less(t, slices.Max(count), mean*5/4)
	// About 256 members in partition 0: nearly each in a piece of its own.
	require.Greater(t, len(inPart0), part0*3/4, "%d members of partition 0 in %d pieces", part0, len(inPart0))
}

// TestLegacyPartitions: the partitions of the layout before partitions
// shared tags each land in their own four slots, as that layout placed
// them, and each group's tag is one of them (the first salt in its 128
// slots).
func TestLegacyPartitions(t *testing.T) {
	for _, b := range []Board{NewBoard("lb", "race"), NewBoard("g:7", "weekly-race")} {
		old := b.LegacyPartitions()
		require.Len(t, old, Partitions)
		bases := map[string]bool{}
		for i, p := range old {
			require.Equal(t, i, Slot(p.base)/(Slots/Partitions), "old partition %d at slot %d", i, Slot(p.base))
			require.Regexp(t, `^`+regexp.QuoteMeta(b.base[:len(b.base)-len(b.Tag())])+`\{.+#p~\d+\}$`, p.base)
			bases[p.base] = true
		}
		parts := b.Partitions()
		for g := range PartitionGroups {
			require.True(t, bases[parts.tag(g)], "group %d's tag %s is an old partition's", g, parts.tag(g))
		}
	}
}
