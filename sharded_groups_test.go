package leaderboard

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard/internal/keys"
)

// TestByGroup checks the order part_write.lua takes members in: every
// member once, the groups in the order first met, and within a group each
// partition's members together, in their own order.
func TestByGroup(t *testing.T) {
	members := make([]string, 3000)
	for i := range members {
		members[i] = "player:" + strconv.Itoa(i%2500) // some twice
	}
	groups, at := byGroup(members)
	require.Len(t, at, len(groups))
	seen := make([]bool, len(members))
	firstGroup := map[int]int{}
	for j, m := range members {
		if _, ok := firstGroup[keys.GroupOf(keys.PartitionOf(m))]; !ok {
			firstGroup[keys.GroupOf(keys.PartitionOf(m))] = j
		}
	}
	for g, js := range at {
		if g > 0 {
			require.Less(t, firstGroup[groups[g-1]], firstGroup[groups[g]], "groups in the order first met")
		}
		done := map[int]bool{}
		for k, j := range js {
			require.False(t, seen[j], "position %d twice", j)
			seen[j] = true
			p := keys.PartitionOf(members[j])
			require.Equal(t, groups[g], keys.GroupOf(p))
			if k > 0 && keys.PartitionOf(members[js[k-1]]) != p {
				require.False(t, done[p], "partition %d split in group %d", p, groups[g])
				done[keys.PartitionOf(members[js[k-1]])] = true
			}
			if k > 0 && keys.PartitionOf(members[js[k-1]]) == p {
				require.Less(t, js[k-1], j, "a partition's members in their order")
			}
		}
	}
	require.NotContains(t, seen, false, "every member placed")
}
