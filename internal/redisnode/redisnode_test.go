package redisnode_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard/internal/redisnode"
)

// TestUnlink: the keys matching an escaped pattern go, a key that only a
// glob would match stays, over more than one SCAN page.
func TestUnlink(t *testing.T) {
	s := miniredis.RunT(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr()}, DisableCache: true, ForceSingleClient: true})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	for i := range 2500 {
		require.NoError(t, s.Set(fmt.Sprintf("lb:{a*}:k%d", i), "x"))
	}
	require.NoError(t, s.Set("lb:{ab}:k0", "x"))
	require.True(t, redisnode.IsPrimary(ctx, c))
	require.Equal(t, []string{s.Addr()}, redisnode.Primaries(ctx, c))
	n, err := redisnode.Unlink(ctx, c, "lb:{"+redisnode.GlobEscape("a*")+"}:*")
	require.NoError(t, err)
	require.Equal(t, int64(2500), n)
	require.Equal(t, []string{"lb:{ab}:k0"}, s.Keys())
}
