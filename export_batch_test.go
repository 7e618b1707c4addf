package leaderboard

// BatchJoined reports how many submissions have joined a batch of b: tests
// wait on it to know the order in which concurrent submissions joined.
func BatchJoined(b *Batcher) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.joined
}

// TraceBatch makes b report, for each submission that joins a batch from
// now on, the sequence number of the write it joined (writes are applied
// in that order): a test cannot tell from outside whether a submission
// folded into a batch sent and still waiting.
func TraceBatch(b *Batcher, fn func(seq int)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.traced = fn
}

// BatchAlone reports whether a submission of member written on its own
// (WithID) is in flight in b: counted in, so that Close waits for it, and
// waiting for what comes before it or being written.
func BatchAlone(b *Batcher, member string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.after[member] != nil
}

// BatchAfter is the mark of member's newest submission written on its own
// in b (nil for none): it changes when another one starts.
func BatchAfter(b *Batcher, member string) any {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.after[member]; c != nil {
		return c
	}
	return nil
}

// BatchWatched reports whether the batch collecting in b watches a ctx
// that several of its callers share (sharedWake), rather than each caller
// selecting on it.
func BatchWatched(b *Batcher) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur != nil && b.cur.watch != nil
}
