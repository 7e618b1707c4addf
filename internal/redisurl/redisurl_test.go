package redisurl

import (
	"errors"
	"strings"
	"testing"
)

func TestParseTrailingSlash(t *testing.T) {
	for raw, want := range map[string]struct {
		addr string
		db   int
	}{
		"redis://127.0.0.1:6379":     {"127.0.0.1:6379", 0},
		"redis://127.0.0.1:6379/":    {"127.0.0.1:6379", 0},
		"redis://127.0.0.1:6379//":   {"127.0.0.1:6379", 0},
		"redis://127.0.0.1:6379/3":   {"127.0.0.1:6379", 3},
		"redis://127.0.0.1:6379/3/":  {"127.0.0.1:6379", 3},
		"redis://:pw@10.0.0.1:6380/": {"10.0.0.1:6380", 0},
	} {
		opt, err := Parse(raw)
		if err != nil {
			t.Errorf("Parse(%q): %v", raw, err)
			continue
		}
		if len(opt.InitAddress) != 1 || opt.InitAddress[0] != want.addr || opt.SelectDB != want.db {
			t.Errorf("Parse(%q) = %v db %d, want %s db %d", raw, opt.InitAddress, opt.SelectDB, want.addr, want.db)
		}
	}
	opt, err := Parse("redis://u:pw@10.0.0.1:6380/")
	if err != nil || opt.Username != "u" || opt.Password != "pw" {
		t.Errorf("credentials: %q %q, %v", opt.Username, opt.Password, err)
	}
}

// TestParseErrorsHoldNoSecret feeds URLs that url.Parse or rueidis refuse,
// each with a password, and checks that the errors match ErrInvalid and hold
// no piece of the password.
func TestParseErrorsHoldNoSecret(t *testing.T) {
	for _, raw := range []string{
		"redis://user:s3cr%zzet@127.0.0.1:6379", // bad escape: url.Parse quotes "%zz" and more
		"redis://user:s3cr et@127.0.0.1:6379",   // space in userinfo
		"redis://user:s3cr/et@127.0.0.1:6379",   // '/' in the password: a bad port
		"redis://user:s3cret@127.0.0.1:6379/x",  // a database that is no number
		"redis://user:s3cret@127.0.0.1:6379/1/2",
		"http://user:s3cret@127.0.0.1:6379",
		":s3cret@",
		"redis://user:s3cr?et@127.0.0.1:6379", // '?' in the password: a bad port
		"redis://user:s3cr#et@127.0.0.1:6379", // '#' in the password: a bad port
		"redis://127.0.0.1:6379/x?password=s3cr@et",
		"redis://127.0.0.1:6379/x#s3cr@et",
	} {
		_, err := Parse(raw)
		if err == nil {
			t.Errorf("Parse(%q): no error", raw)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q): %v does not match ErrInvalid", raw, err)
		}
		for _, piece := range []string{"s3cr", "et@", "zz"} {
			if strings.Contains(err.Error(), piece) {
				t.Errorf("Parse(%q): error %q holds %q", raw, err, piece)
			}
		}
	}
}

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://127.0.0.1:6379/":              "redis://127.0.0.1:6379/",
		"redis://user:secret@10.0.0.1:6379":    "redis://xxxxx@10.0.0.1:6379",
		"redis://:secret@10.0.0.1:6379/2":      "redis://xxxxx@10.0.0.1:6379/2",
		"rediss://u:p@ss:w@rd@h:6380":          "rediss://xxxxx@h:6380",
		"redis://u:se cr%zzet@h:6379":          "redis://xxxxx@h:6379",
		"user:secret@h:6379":                   "xxxxx@h:6379",
		"unix://u:secret@/run/redis.sock?db=1": "unix://xxxxx@/run/redis.sock?db=1",
		// Cases the example server tested on its own copy of this.
		"redis://127.0.0.1:6379":           "redis://127.0.0.1:6379",
		"unix:///run/redis.sock":           "unix:///run/redis.sock",
		"redis://default:secret@localhost": "redis://xxxxx@localhost",
		"redis://u:pa/ss@host:6379":        "redis://xxxxx@host:6379",
		"redis:/u:secret@host":             "xxxxx@host",
		"redis://u:secret@host:63 79":      "redis://xxxxx@host:63 79",
		// No '@': the host left out, so that the password reads as a
		// port, which is hidden unless it is a number.
		"redis://default:secret": "redis://default:xxxxx",
		"redis://:secret/0?db=1": "redis://:xxxxx?db=1",
		"k:sec/ret":              "k:xxxxx",
		"default:secret":         "default:xxxxx",
		"redis://[::1]:6379/0":   "redis://[::1]:6379/0",
		"redis://[::1]":          "redis://[::1]",
		"redis://h:":             "redis://h:",
		"redis://[::1]:se]cret":  "redis://[::1]:xxxxx",
		// An '@' in the query or fragment may be theirs or end a
		// password holding an unescaped '?' or '#', which look the same,
		// also with an '@' before it: all is hidden.
		"redis://127.0.0.1:1/?password=abc@TAIL":     "redis://xxxxx",
		"redis://127.0.0.1:1/#frag@TAIL":             "redis://xxxxx",
		"redis://u:p@h:6379/?password=abc@TAIL&db=1": "redis://xxxxx",
		"redis://u:p@h:6379/#frag@TAIL":              "redis://xxxxx",
		"redis://u:pa?ss@h:6379":                     "redis://xxxxx",
		"redis://u:pa#ss@h:6379":                     "redis://xxxxx",
		"redis://u@x:pa#ss@h:6379":                   "redis://xxxxx",
		"redis://@:S3KR#@h/0?0#0":                    "redis://xxxxx",
		// Secret-named query values (by their unescaped name, any case),
		// and the fragment.
		"redis://h:6379?password=pw":                     "redis://h:6379?password=xxxxx",
		"redis://h:6379/?db=0&Pass=pw;client_name=x":     "redis://h:6379/?db=0&Pass=xxxxx;client_name=x",
		"redis://h:6379?%70assword=pw&token&x=1":         "redis://h:6379?%70assword=xxxxx&token=xxxxx&x=1",
		"redis://h:6379?x=1#pw":                          "redis://h:6379?x=1#xxxxx",
		"redis://h:6379#pw":                              "redis://h:6379#xxxxx",
		"unix:///run/redis.sock?db=1&auth_token=pw#frag": "unix:///run/redis.sock?db=1&auth_token=xxxxx#xxxxx",
	} {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}
