// Package redisurl reads the REDIS_URL of the examples and the test
// harness. It exists for two things rueidis.ParseURL does not do: it takes
// redis://host:6379/ (a trailing slash, as many tools print the URL) as the
// default database instead of refusing an empty database number, and no
// error or printable form it returns holds the URL's password, which
// url.Parse's errors quote, nor a secret in its query or fragment.
package redisurl

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/redis/rueidis"
)

// ErrInvalid is what every error of Parse matches (errors.Is).
var ErrInvalid = errors.New("invalid Redis URL")

// want is the form Parse accepts, for its error messages.
const want = "want redis://[user:password@]host:port[/db], rediss://… or unix://…"

// Parse turns a Redis URL into rueidis client options. Its errors name
// the URL only in Redact's form.
func Parse(raw string) (rueidis.ClientOption, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's error quotes the URL, or the piece it choked on,
		// which may be the password: neither is repeated here.
		return rueidis.ClientOption{}, fmt.Errorf("%w %s: not a URL; %s", ErrInvalid, Redact(raw), want)
	}
	if p := strings.TrimRight(u.Path, "/"); u.Scheme != "unix" && p != u.Path {
		// redis://host:6379/ names no database (and .../0/ database 0):
		// rueidis would read an empty database number and refuse it.
		u.Path, u.RawPath = p, ""
		raw = u.String()
	}
	opt, err := rueidis.ParseURL(raw)
	if err != nil {
		// rueidis's errors quote parts of the URL (scheme, path, query
		// values); replaced like url.Parse's so none can carry a secret.
		return rueidis.ClientOption{}, fmt.Errorf("%w %s: %s, with a database number as the path, if any", ErrInvalid, Redact(raw), want)
	}
	return opt, nil
}

// secretParam matches the query parameters Redact hides the value of, by
// name.
var secretParam = regexp.MustCompile(`(?i)pass|pwd|secret|token|auth|key|cred`)

// Redact returns raw as errors and logs may show it, also when raw does not
// parse as a URL: its user part (name and password) replaced by "xxxxx",
// the value of every query parameter named like a secret (?password=,
// ?token=…) too, and its fragment, which rueidis ignores but a URL copied
// from another client's settings may carry.
//
// The user part ends at the last '@' before the query and the fragment. A
// '/' does not end it, as it ends url.Parse's authority: a Redis URL's path
// (a database number) holds no '@', so one there means a password holding
// an unescaped '/', hidden whole. A URL with an '@' after its first '?' or
// '#' is ambiguous: the '@' may be a query value's (?password=abc@def) or
// end a password holding an unescaped '?' or '#' (u:pa#ss@host), whatever
// '@'s come before it (a user name may hold one too), so all of it but the
// scheme is hidden. Without an '@', a port that is not a number is
// hidden: it may be a password whose host was left out
// ("redis://default:secret").
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if ok {
		scheme += "://"
	} else {
		scheme, rest = "", raw
	}
	hier, tail := rest, ""
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		hier, tail = rest[:i], rest[i:]
	}
	if strings.Contains(tail, "@") {
		return scheme + "xxxxx"
	}
	if at := strings.LastIndex(hier, "@"); at >= 0 {
		hier = "xxxxx@" + hier[at+1:]
	} else {
		hier = redactPort(hier)
	}
	return scheme + hier + redactTail(tail)
}

// redactPort hides the port of an authority without a user part unless it
// is a number: "redis://default:secret", a URL whose host was left out,
// has its password where the port goes. The port starts at the first ':'
// (after the ']' of an IPv6 literal), so that none of a password holding
// a ':' shows, and the path goes with it, as a password may hold a '/'.
func redactPort(hier string) string {
	authority := hier
	if i := strings.IndexByte(hier, '/'); i >= 0 {
		authority = hier[:i]
	}
	from := 0
	if strings.HasPrefix(authority, "[") {
		if end := strings.IndexByte(authority, ']'); end >= 0 {
			from = end
		}
	}
	colon := strings.IndexByte(authority[from:], ':')
	if colon < 0 {
		return hier
	}
	host, port := authority[:from+colon], authority[from+colon+1:]
	if strings.Trim(port, "0123456789") == "" {
		return hier
	}
	return host + ":xxxxx"
}

// redactTail hides, in the query and fragment of a URL ("?a=1&b=2#f", or
// ""), the values of the parameters named like a secret and the fragment,
// keeping the rest as it was written.
func redactTail(tail string) string {
	query, _, hasFrag := strings.Cut(tail, "#")
	var b strings.Builder
	if q, ok := strings.CutPrefix(query, "?"); ok {
		b.WriteByte('?')
		for q != "" {
			param, sep := q, ""
			if i := strings.IndexAny(q, "&;"); i >= 0 {
				param, sep, q = q[:i], q[i:i+1], q[i+1:]
			} else {
				q = ""
			}
			name, _, _ := strings.Cut(param, "=")
			if n, err := url.QueryUnescape(name); err == nil && secretParam.MatchString(n) ||
				secretParam.MatchString(name) {
				param = name + "=xxxxx"
			}
			b.WriteString(param + sep)
		}
	}
	if hasFrag {
		b.WriteString("#xxxxx")
	}
	return b.String()
}
