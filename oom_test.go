package leaderboard

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOOMCheck: every read of a board without WithReplicaReads asks
// isOOM of its error (oomReads), so a read without one must cost nothing
// (it allocated the errors.As target each time); only a Redis error reply
// is an OOM (TestReadsAtMaxmemory has Redis send one).
func TestOOMCheck(t *testing.T) {
	require.Zero(t, testing.AllocsPerRun(1000, func() { _ = isOOM(nil) }))
	require.False(t, isOOM(errors.New("OOM command not allowed")), "not a Redis reply")
	require.False(t, isOOM(fmt.Errorf("rank: %w", errors.New("OOM"))))
}
