package leaderboard

// MaxShardOps and MaxRoundOps bound a sharded Cluster write's second step:
// the ops of one shard script call, and of one round trip.
const (
	MaxShardOps = maxShardOps
	MaxRoundOps = maxRoundOps
)
