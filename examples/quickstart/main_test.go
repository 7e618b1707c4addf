package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"

	"github.com/skiprank/leaderboard/internal/redisnode"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testnet"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestMain lets a test run this binary as the program itself (main, with
// its own arguments and environment), the way a person runs it.
func TestMain(m *testing.M) {
	if os.Getenv("QUICKSTART_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs main in a child process with args and REDIS_URL.
func runMain(t *testing.T, redisURL string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	// TestMain runs main before the testing flags are parsed: args are the
	// program's alone.
	cmd := exec.CommandContext(t.Context(), os.Args[0], args...)
	cmd.Env = append(os.Environ(), "QUICKSTART_RUN_MAIN=1", "REDIS_URL="+redisURL)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// TestHelpTouchesNothing: -h prints the usage, exits 0 and never connects
// to REDIS_URL.
func TestHelpTouchesNothing(t *testing.T) {
	addr, accepted := testnet.CountingListener(t)
	for _, arg := range []string{"-h", "-help", "--help"} {
		stdout, stderr, err := runMain(t, "redis://"+addr, arg)
		if err != nil {
			t.Errorf("%s: %v\n%s", arg, err, stderr)
		}
		if !strings.Contains(stderr, "Usage: go run ./examples/quickstart") || !strings.Contains(stderr, "REDIS_URL") || !strings.Contains(stderr, "-keep") {
			t.Errorf("%s: no usage on stderr:\n%s", arg, stderr)
		}
		if stdout != "" {
			t.Errorf("%s: wrote to stdout: %q", arg, stdout)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("-h connected to REDIS_URL %d times", n)
	}
}

// TestBadArgumentsTouchNothing: an unknown flag or an argument exits 2 with
// the usage, without connecting.
func TestBadArgumentsTouchNothing(t *testing.T) {
	addr, accepted := testnet.CountingListener(t)
	for _, args := range [][]string{{"-members", "5"}, {"extra"}} {
		_, stderr, err := runMain(t, "redis://"+addr, args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%v: %v, want exit status 2", args, err)
		}
		if !strings.Contains(stderr, "Usage:") {
			t.Errorf("%v: no usage:\n%s", args, stderr)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("bad arguments connected to REDIS_URL %d times", n)
	}
}

func testProgram(getenv func(string) string) (program, *bytes.Buffer, *bytes.Buffer) {
	var r [4]byte
	_, _ = rand.Read(r[:])
	var out, errs bytes.Buffer
	return program{board: "quickstart-test-" + hex.EncodeToString(r[:]), getenv: getenv, stdout: &out, stderr: &errs}, &out, &errs
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestOutput runs the program on the embedded miniredis and reads what a
// person reads.
func TestOutput(t *testing.T) {
	p, out, _ := testProgram(env(nil))
	if err := p.run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"embedded miniredis", "Submitted 400 runs", "Top 10, all time", "Page 2", "daily board", "weekly board",
		"Ranks 4 to 8", "bracket", "would place", "The best 10%", "100% 78/78"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "(was 0)") {
		t.Errorf("a member not ranked before reads as rank 0:\n%s", s)
	}
	if !regexp.MustCompile(`(?m)^ +\d+ +player:42 +\d+ +<- you$`).MatchString(s) {
		t.Errorf("no marked row for player:42 with the mark set apart:\n%s", s)
	}
}

// TestRealRedisLeavesNoKeys runs the program on a real Redis, REDIS_URL
// given with a trailing slash as many tools print it, and checks that it
// deletes its keys, or with -keep leaves them.
func TestRealRedisLeavesNoKeys(t *testing.T) {
	b := testredis.Real(t)
	url := testredis.URL()
	if !strings.HasSuffix(url, "/") {
		url += "/"
	}
	for _, keep := range []bool{false, true} {
		p, out, _ := testProgram(env(map[string]string{"REDIS_URL": url}))
		var args []string
		if keep {
			args = []string{"-keep"}
		}
		if err := p.run(context.Background(), args); err != nil {
			t.Fatal(err)
		}
		left := b.Keys(t, p.pattern())
		if keep {
			if len(left) == 0 || !strings.Contains(out.String(), "Kept the board's keys") {
				t.Errorf("-keep: %d keys left; output:\n%s", len(left), out)
			}
			if _, err := redisnode.Unlink(context.Background(), b.Client, p.pattern()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if len(left) != 0 || !strings.Contains(out.String(), "Deleted the board's") {
			t.Errorf("left keys %v; output:\n%s", left, out)
		}
	}
}

// TestNoPasswordPrinted: a REDIS_URL with a password never shows it, whether
// it is malformed, unreachable, or works.
func TestNoPasswordPrinted(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.RequireAuth("s3cret")
	for _, tc := range []struct {
		url     string
		wantErr bool
	}{
		{"redis://user:s3cr%zzet@127.0.0.1:6379", true},
		{"redis://user:s3cr et@127.0.0.1:6379/", true},
		{"redis://user:s3cret@127.0.0.1:1", true},
		{"redis://:s3cret@" + mr.Addr() + "/", false},
	} {
		p, out, errs := testProgram(env(map[string]string{"REDIS_URL": tc.url}))
		err := p.run(context.Background(), nil)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, want error %v", redisurl.Redact(tc.url), err, tc.wantErr)
		}
		all := out.String() + errs.String()
		if err != nil {
			all += err.Error()
		}
		if strings.Contains(all, "s3cr") {
			t.Errorf("%s: the password was printed:\n%s", redisurl.Redact(tc.url), all)
		}
	}
}

// TestHelpFlag: run returns flag.ErrHelp for -h, before any connection.
func TestHelpFlag(t *testing.T) {
	addr, accepted := testnet.CountingListener(t)
	p, _, errs := testProgram(env(map[string]string{"REDIS_URL": "redis://" + addr}))
	if err := p.run(context.Background(), []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run -h = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(errs.String(), "Usage:") || accepted.Load() != 0 {
		t.Errorf("usage %q, %d connections", errs, accepted.Load())
	}
}
