package leaderboard

// BatchJoined reports how many submissions have joined a batch of b: tests
// wait on it to know the order in which concurrent submissions joined.
func BatchJoined(b *Batcher) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.joined
}
