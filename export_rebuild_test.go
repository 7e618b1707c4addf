package leaderboard

// NameRebuildCopies makes every rebuild build its copies under the suffix
// token (":rebuild:" + token), which a test can then find, until the
// function it returns is called.
func NameRebuildCopies(token string) (restore func()) {
	was := newFreshKeys
	newFreshKeys = func() freshKeys { return freshKeys(token) }
	return func() { newFreshKeys = was }
}
