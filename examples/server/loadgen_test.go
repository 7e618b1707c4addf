package main

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestLoadgen builds examples/loadgen and runs it for a few seconds against
// this service: its own signing code must satisfy the server, and every
// answer must be 2xx or an intended 429. The rate limit is set low so that
// 429s do happen.
func TestLoadgen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a binary for a few seconds")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		if testredis.InCI() {
			t.Fatal("no go command on PATH to build loadgen with")
		}
		t.Skip("no go command on PATH to build loadgen with")
	}
	bin := filepath.Join(t.TempDir(), "loadgen")
	build := exec.Command(goBin, "build", "-o", bin, "github.com/skiprank/leaderboard/examples/loadgen")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build loadgen: %v\n%s", err, out)
	}

	b := testredis.Mini(t)
	f := newFixture(t, b, func(c *config) { c.Rate, c.Burst, c.MaxScore = 5, 3, 10_000 })
	// miniredis holds its clock still, which would freeze every bucket;
	// this keeps it moving for the rate limit.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			b.Mini.SetTime(time.Now())
			time.Sleep(10 * time.Millisecond)
		}
	}()
	ts := httptest.NewServer(f.h) // on 127.0.0.1
	defer ts.Close()

	cmd := exec.Command(bin, "-url", ts.URL, "-players", "8", "-duration", "3s", "-max-requests", "20000", "-reads", "0.3")
	cmd.Env = append(os.Environ(), "SIGNING_KEYS=gs2:"+string(testKeys["gs2"])+",gs1:"+string(testKeys["gs1"]))
	out, err := cmd.CombinedOutput()
	t.Logf("loadgen:\n%s", out)
	if err != nil {
		t.Fatalf("loadgen: %v", err)
	}
	text := string(out)
	if !strings.Contains(text, "ok: every response was 2xx or an intended 429") {
		t.Fatal("loadgen did not report success")
	}
	// It submitted, was rate limited, and read.
	m := regexp.MustCompile(`(?m)^\s*submit\s+(\d+).*200:(\d+) 429:(\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("no submit row with both 200s and 429s")
	}
	if ok, _ := strconv.Atoi(m[2]); ok < 24 {
		t.Fatalf("only %d accepted submits", ok)
	}
	if !strings.Contains(text, "top10") {
		t.Fatal("no reads")
	}
	// The board holds the eight players.
	if n, err := f.srv.board.Count(context.Background()); err != nil || n != 8 {
		t.Fatalf("board has %d players (%v), want 8", n, err)
	}
}
