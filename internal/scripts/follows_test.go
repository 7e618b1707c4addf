package scripts

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWithFollowers: the commands to send again gain the followers after
// the first of them, in index order, each once; none without followers.
func TestWithFollowers(t *testing.T) {
	f := []bool{false, true, false, true, true, false}
	for _, tc := range []struct {
		again   []int
		follows []bool
		want    []int
	}{
		{nil, f, nil},
		{[]int{0}, nil, []int{0}},
		{[]int{0}, f, []int{0, 1, 3, 4}},
		{[]int{2}, f, []int{2, 3, 4}},
		{[]int{2, 3, 5}, f, []int{2, 3, 4, 5}},
		{[]int{4}, f, []int{4}},
		{[]int{5}, f, []int{5}},
	} {
		require.Equal(t, tc.want, WithFollowers(tc.again, tc.follows), "again %v", tc.again)
	}
}
