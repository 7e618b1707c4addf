package leaderboard_test

import (
	"testing"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/durabletest"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestFaultModelRebuild: see durabletest.FaultModel; pgstore runs the same
// test against PostgreSQL.
func TestFaultModelRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		durabletest.FaultModel(t, b, func() lb.Store { return newMemStore() })
	})
}
