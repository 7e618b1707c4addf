package leaderboard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/rueidis"
)

// errNilReply stands in for a nil reply where none was expected, so that
// rueidis.Nil never reaches a caller (who might take it for "not ranked").
var errNilReply = errors.New("unexpected nil reply")

// wrap names the operation on an error from Redis.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if rueidis.IsRedisNil(err) {
		err = errNilReply
	}
	return &opError{op: op, err: err}
}

// opError is an error of the operation op. The package's prefix opens
// its message once: an error of an inner step (one wrapped already, or a
// sentinel's) reads "leaderboard: set: submit: ...", not "leaderboard:
// set: leaderboard: submit: ...".
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	return "leaderboard: " + e.op + ": " + unprefixed(e.err)
}

// unprefixed is err's text without the package's prefix, for an error
// that names the package itself (opError, pendingError).
func unprefixed(err error) string {
	return strings.TrimPrefix(err.Error(), "leaderboard: ")
}

func (e *opError) Unwrap() error { return e.err }

// execResult returns the replies of a MULTI ... EXEC pipeline's EXEC, or the
// first error of the pipeline (a queued command refused, EXEC aborted). It
// checks that EXEC answered each command queued, so that callers index the
// replies by the commands they built: a server that answers fewer is an
// error here, not an index out of range there.
func execResult(res []rueidis.RedisResult) ([]rueidis.RedisMessage, error) {
	if len(res) == 0 {
		return nil, fmt.Errorf("transaction: no replies")
	}
	for _, r := range res[:len(res)-1] {
		if err := r.Error(); err != nil {
			return nil, err
		}
	}
	replies, err := res[len(res)-1].ToArray()
	if err != nil {
		return nil, err
	}
	queued := 0
	for i := len(res) - 2; i >= 0; i-- {
		if s, err := res[i].ToString(); err != nil || s != "QUEUED" {
			break
		}
		queued++
	}
	if len(replies) != queued {
		return nil, fmt.Errorf("transaction: EXEC answered %d commands of %d queued", len(replies), queued)
	}
	for i := range replies {
		if err := replies[i].Error(); err != nil && !rueidis.IsRedisNil(err) {
			return nil, err
		}
	}
	return replies, nil
}

// optInt reads an integer reply that may be nil (a rank of an absent member).
func optInt(m *rueidis.RedisMessage) (int64, bool, error) {
	if m.IsNil() {
		return 0, false, nil
	}
	v, err := m.AsInt64()
	return v, true, err
}

// optFloat reads a score reply that may be nil.
func optFloat(m *rueidis.RedisMessage) (float64, bool, error) {
	if m.IsNil() {
		return 0, false, nil
	}
	v, err := m.AsFloat64()
	return v, true, err
}

// zEntries decodes a ZRANGE ... WITHSCORES result into entries with plain
// scores; see zMessageEntries.
func (lb *Leaderboard) zEntries(res *rueidis.RedisResult) ([]Entry, error) {
	m, err := res.ToMessage()
	if err != nil {
		return nil, err
	}
	return lb.zMessageEntries(&m)
}

// zMessageEntries decodes a ZRANGE ... WITHSCORES reply, flat member, score
// pairs (RESP2) or one [member, score] array per member (RESP3), straight
// into entries: AsZScores would allocate a slice of its own first.
func (lb *Leaderboard) zMessageEntries(m *rueidis.RedisMessage) ([]Entry, error) {
	return lb.zDecode(m, false)
}

// zStored is zEntries with each stored value itself in Score (a
// tie-break's composite, not its plain score): what a sharded Cluster
// board's top mirror is put from.
func (lb *Leaderboard) zStored(res *rueidis.RedisResult) ([]Entry, error) {
	m, err := res.ToMessage()
	if err != nil {
		return nil, err
	}
	return lb.zDecode(&m, true)
}

// zDecode is zMessageEntries, with raw the stored values in Score.
func (lb *Leaderboard) zDecode(m *rueidis.RedisMessage, raw bool) ([]Entry, error) {
	arr, err := m.ToArray()
	if err != nil {
		return nil, err
	}
	if len(arr) == 0 || !arr[0].IsArray() {
		return lb.entriesDecoded(arr, false, raw)
	}
	es := make([]Entry, len(arr))
	for i := range arr {
		pair, err := arr[i].ToArray()
		if err != nil {
			return nil, err
		}
		if len(pair) != 2 {
			return nil, fmt.Errorf("member/score pair of %d values", len(pair))
		}
		member, err := pair[0].ToString()
		if err != nil {
			return nil, err
		}
		s, err := pair[1].AsFloat64()
		if err != nil {
			return nil, err
		}
		if !raw {
			s = lb.plain(s)
		}
		es[i] = Entry{Member: member, Score: s}
	}
	return es, nil
}

// entries turns a flat member, stored value, member, value... reply into
// entries with plain scores.
func (lb *Leaderboard) entries(flat []rueidis.RedisMessage) ([]Entry, error) {
	return lb.entriesDecoded(flat, false, false)
}

// entriesWith is entries, with data a member, value, data... reply (data
// nil for none), as the read scripts give with IncludeData.
func (lb *Leaderboard) entriesWith(flat []rueidis.RedisMessage, data bool) ([]Entry, error) {
	return lb.entriesDecoded(flat, data, false)
}

// entriesDecoded is entriesWith, with raw the stored values in Score.
func (lb *Leaderboard) entriesDecoded(flat []rueidis.RedisMessage, data, raw bool) ([]Entry, error) {
	per := 2
	if data {
		per = 3
	}
	if len(flat)%per != 0 {
		return nil, fmt.Errorf("entry reply of %d values, not a multiple of %d", len(flat), per)
	}
	es := make([]Entry, len(flat)/per)
	for i := range es {
		m, err := flat[per*i].ToString()
		if err != nil {
			return nil, err
		}
		s, err := flat[per*i+1].AsFloat64()
		if err != nil {
			return nil, err
		}
		if !raw {
			s = lb.plain(s)
		}
		es[i] = Entry{Member: m, Score: s}
		if data {
			if es[i].Data, _, err = optString(&flat[per*i+2]); err != nil {
				return nil, err
			}
		}
	}
	return es, nil
}

func notRankedOr(op, member string, err error) error {
	if rueidis.IsRedisNil(err) {
		return fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	return wrap(op, err)
}

// scriptRefusal tells a script's refusal of a total that would overflow to
// ±Inf (LBOVERFLOW) or leave a tie-break's range (LBRANGE).
func scriptRefusal(err error, code string) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && strings.Contains(re.Error(), code)
}

// rangeReply decodes range.lua's reply into ranked entries and the total,
// with data when the call read it.
func (lb *Leaderboard) rangeReply(res rueidis.RedisResult, data bool) ([]Entry, int64, error) {
	r, err := res.ToArray()
	if err != nil {
		return nil, 0, err
	}
	if len(r) < 3 {
		return nil, 0, fmt.Errorf("script returned %d values, want at least 3", len(r))
	}
	var v [3]int64
	for i := range v {
		if v[i], err = r[i].AsInt64(); err != nil {
			return nil, 0, err
		}
	}
	es, err := lb.entriesWith(r[3:], data)
	if err != nil {
		return nil, 0, err
	}
	lb.rankEntries(es, v[1], v[2])
	return es, v[0], nil
}

// submitReplies decodes six values a window of what submit.lua (and
// shard_local.lua) return into out, and their closing duplicate flag.
func (lb *Leaderboard) submitReplies(replies []rueidis.RedisMessage, member string, live []target, where []int, out []WindowResult) (duplicate bool, err error) {
	const perWindow = 6
	if len(replies) == perWindow*len(live)+1 {
		flag, err := replies[len(replies)-1].AsInt64()
		if err != nil {
			return false, wrap("submit", err)
		}
		duplicate = flag == 1
		replies = replies[:len(replies)-1]
	}
	if len(replies) != perWindow*len(live) {
		return false, wrap("submit", fmt.Errorf("script returned %d values, want %d", len(replies), perWindow*len(live)))
	}
	for j := range live {
		r := replies[perWindow*j : perWindow*(j+1)]
		wr := &out[where[j]]
		var v [4]int64 // previous rank, rank, total, worse
		for k, at := range [4]int{1, 3, 4, 5} {
			if v[k], err = r[at].AsInt64(); err != nil {
				return false, wrap("submit", err)
			}
		}
		prevRank, rank, total, worse := v[0], v[1], v[2], v[3]
		prev, had, err := optFloat(&r[0])
		if err != nil {
			return false, wrap("submit", err)
		}
		after, ranked, err := optFloat(&r[2])
		if err != nil {
			return false, wrap("submit", err)
		}
		if had {
			wr.Previous = Entry{Member: member, Score: lb.plain(prev), Rank: prevRank}
		}
		switch {
		case !ranked && duplicate:
			// A duplicate WithID retry for a member removed since: nothing
			// was written, and the member has no standing.
			wr.Standing = Standing{Entry: Entry{Member: member}, Total: total}
			continue
		case !ranked:
			// Written, and ranked by nobody after it: Redis deleted the
			// period's key as the write set an expiry its clock had passed.
			closeWindow(wr, member)
			continue
		}
		wr.Changed = !duplicate && (!had || lb.plain(prev) != lb.plain(after))
		wr.Standing = lb.standing(member, lb.plain(after), rank, worse, total)
	}
	return duplicate, nil
}

func optString(m *rueidis.RedisMessage) (string, bool, error) {
	if m.IsNil() {
		return "", false, nil
	}
	s, err := m.ToString()
	return s, true, err
}

// entriesOf decodes the replies of several ZRANGE ... WITHSCORES into one
// list, in their order.
func (lb *Leaderboard) entriesOf(res []rueidis.RedisResult) ([]Entry, error) {
	var out []Entry
	for i := range res {
		es, err := lb.zEntries(&res[i])
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}

// int64s reads one integer reply of each result.
func int64s(res []rueidis.RedisResult) ([]int64, error) {
	out := make([]int64, len(res))
	for i, r := range res {
		var err error
		if out[i], err = r.AsInt64(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
