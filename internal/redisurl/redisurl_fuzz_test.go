package redisurl

import (
	"strings"
	"testing"
)

// FuzzNoSecret builds URLs around a password that starts with a marker no
// other part holds, and holds Parse's errors and Redact's output to showing
// none of it, whatever the password, the user, the host and the query
// hold (unescaped '@', '/', '?', '#', '%', spaces, secret-named
// parameters).
func FuzzNoSecret(f *testing.F) {
	f.Add("redis", "user", "s3cret", "127.0.0.1:6379", "0", "db=1", "")
	f.Add("rediss", "", "pa?ss", "h:6380", "", "password=x&token", "frag")
	f.Add("unix", "u", "a@b/c#d", "/run/redis.sock", "", "", "")
	f.Add("redis", "a?b", "%zz", "h", "x", "", "@")
	f.Fuzz(func(t *testing.T, scheme, user, pass, host, db, query, frag string) {
		const mark = "S3KR"
		clean := func(s string) string { return strings.ReplaceAll(s, mark, "") }
		scheme, user, host, db, query, frag = clean(scheme), clean(user), clean(host), clean(db), clean(query), clean(frag)
		raw := scheme + "://" + user + ":" + mark + pass + "@" + host
		if db != "" {
			raw += "/" + db
		}
		if query != "" {
			raw += "?" + query
		}
		if frag != "" {
			raw += "#" + frag
		}
		if got := Redact(raw); strings.Contains(got, mark) {
			t.Fatalf("Redact(%q) = %q shows the password", raw, got)
		}
		if _, err := Parse(raw); err != nil && strings.Contains(err.Error(), mark) {
			t.Fatalf("Parse(%q): error %q shows the password", raw, err)
		}
	})
}
