package testredis

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a helper ends (Fatalf or
// Skipf) instead of ending the test that runs it.
type recorder struct {
	testing.TB
	ended, msg string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Cleanup(func())            {}
func (r *recorder) Name() string              { return "recorder" }
func (r *recorder) Fatalf(f string, a ...any) { r.end("fatal", f, a) }
func (r *recorder) Skipf(f string, a ...any)  { r.end("skip", f, a) }

func (r *recorder) end(how, format string, args []any) {
	r.ended, r.msg = how, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn with a recorder in a goroutine of its own, so that the
// recorder's Goexit ends only that goroutine.
func run(fn func(tb testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

// TestRealAcceptsTrailingSlash: redis://host:6379/ is the default database,
// as redis-cli and most tools read it.
func TestRealAcceptsTrailingSlash(t *testing.T) {
	u := URL()
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	t.Setenv("REDIS_URL", u)
	b := Real(t)
	if err := b.Client.Do(t.Context(), b.Client.B().Ping().Build()).Error(); err != nil {
		t.Fatal(err)
	}
}

// TestRealHidesThePassword: whether Real skips or fails, and whether the
// URL is malformed or only unreachable, its message never holds the
// password; it fails under CI=true and skips otherwise.
func TestRealHidesThePassword(t *testing.T) {
	for _, tc := range []struct{ url, ci, want string }{
		{"redis://user:s3cret@127.0.0.1:1", "", "skip"},
		{"redis://user:s3cret@127.0.0.1:1", "true", "fatal"},
		{"redis://user:s3cr%zzet@127.0.0.1:1", "", "fatal"}, // a malformed URL is a mistake, not a missing server
		{"redis://user:s3cr et@127.0.0.1:1/", "true", "fatal"},
	} {
		t.Setenv("REDIS_URL", tc.url)
		t.Setenv("CI", tc.ci)
		r := run(func(tb testing.TB) { Real(tb) })
		if r.ended != tc.want {
			t.Errorf("%s CI=%q: ended %q (%s), want %q", tc.url, tc.ci, r.ended, r.msg, tc.want)
		}
		if strings.Contains(r.msg, "s3cr") {
			t.Errorf("%s: message holds the password: %s", tc.url, r.msg)
		}
		if !strings.Contains(r.msg, "127.0.0.1:1") {
			t.Errorf("%s: message does not say where: %s", tc.url, r.msg)
		}
	}
}

// TestBoardNameWipes: a subtest's name may hold a glob's characters
// ([x], *, ?) and braces; the board name made of it still tags its keys
// alone and Wipe finds them, so no key is left on a shared server.
func TestBoardNameWipes(t *testing.T) {
	b := Mini(t)
	t.Run("case [a-b] *? {x} \\", func(t *testing.T) {
		name := b.BoardName(t)
		key := "lb:{" + name + "}:alltime"
		if err := b.Client.Do(t.Context(), b.Client.B().Set().Key(key).Value("1").Build()).Error(); err != nil {
			t.Fatal(err)
		}
		b.Wipe(t, name)
		if got := b.Keys(t, "*"); len(got) != 0 {
			t.Fatalf("after Wipe(%q): keys %v", name, got)
		}
	})
}
