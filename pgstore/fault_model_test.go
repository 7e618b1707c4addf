package pgstore

import (
	"testing"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/durabletest"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestFaultModelRebuild: see durabletest.FaultModel, on PostgreSQL's kept
// standings, removals, resets and corrections.
func TestFaultModelRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		s := newStore(t)
		durabletest.FaultModel(t, b, func() leaderboard.Store { return s })
	})
}
