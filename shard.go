package leaderboard

// WithShards splits the score axis at k ascending bounds into k+1 shards, each
// its own sorted set with its own hash tag, so that one board can spread over
// the nodes of a Redis Cluster while every rank stays exact.
//
// Not yet supported: New refuses a board with bounds with ErrInvalidArgument.
// WithShards() with no bounds is the default, unsharded board.
func WithShards(bounds ...float64) Option {
	return func(c *config) { c.shards = append([]float64(nil), bounds...) }
}
