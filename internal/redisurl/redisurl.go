// Package redisurl reads the REDIS_URL of the examples and the test
// harness. It exists for two things rueidis.ParseURL does not do: it takes
// redis://host:6379/ (a trailing slash, as many tools print the URL) as the
// default database instead of refusing an empty database number, and no
// error or printable form it returns holds the URL's password, which
// url.Parse's errors quote.
package redisurl

import (
	"errors"
	"fmt"
	"net/url"
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

// Redact returns raw with its user part (name and password) replaced by
// "xxxxx", also when raw does not parse as a URL: everything between the
// scheme and the last '@' goes. A URL without '@' is returned as it is.
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	rest = "xxxxx@" + rest[at+1:]
	if !ok {
		return rest
	}
	return scheme + "://" + rest
}
