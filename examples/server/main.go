// Command server is a leaderboard service on the SDK: a JSON API with signed,
// rate-limited score submission, public reads, Prometheus metrics, and a live
// page. See README.md.
//
//	go run ./examples/server                                  # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379 SIGNING_KEYS=gs1:... go run ./examples/server
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisurl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends, then shuts down gracefully: it stops accepting
// connections, ends the event streams, and waits up to the shutdown timeout
// for requests in flight.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)

	if len(cfg.Keys) == 0 && cfg.RedisURL != "" {
		return errors.New("SIGNING_KEYS is required with REDIS_URL (id:secret,... with secrets of 32 bytes or more)")
	}
	client, where, closeRedis, err := connect(cfg.RedisURL)
	if err != nil {
		return err
	}
	defer closeRedis()
	if len(cfg.Keys) == 0 {
		// A development key lives only as long as the embedded Redis does.
		var b [32]byte
		_, _ = rand.Read(b[:])
		cfg.Keys = map[string][]byte{"dev": []byte(hex.EncodeToString(b[:]))}
		cfg.Dev = true
	}

	srv, err := newServer(cfg, client, log, time.Now)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen address %q (ADDR, -addr): %w", cfg.Addr, err)
	}
	hs := newHTTPServer(srv, log)

	bg, stopBg := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); srv.run(bg) }()
	defer func() { stopBg(); wg.Wait() }()

	banner(stdout, cfg, where, ln.Addr().String())
	log.Info("listening", "addr", ln.Addr().String(), "redis", where, "board", cfg.Board)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// Bounds on what a slow or idle client can hold.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second // the whole request, body included
	// writeMargin is the time left to write an answer once the body is
	// read and Redis has answered or timed out.
	writeMargin = 5 * time.Second
)

// newHTTPServer serves srv with bounds on what a slow or idle client can
// hold; event streams set their own write deadlines. net/http counts the
// write timeout from the end of the request's headers, and a request may
// then spend up to readTimeout reading its body and REDIS_TIMEOUT waiting
// for Redis: the write timeout covers both and writeMargin on top, so that
// the 503 for a slow Redis still reaches a client whose body came slowly,
// instead of the connection being dropped without an answer.
func newHTTPServer(srv *server, log *slog.Logger) *http.Server {
	hs := &http.Server{
		Handler:           srv.handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      readTimeout + srv.cfg.RedisTimeout + writeMargin,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(srv.close)
	return hs
}

// newLogger logs to w at the configured level and format, which
// loadConfig has checked.
func newLogger(cfg config, w io.Writer) *slog.Logger {
	level, _ := parseLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// connect dials REDIS_URL, or starts an embedded miniredis when it is empty.
func connect(rawURL string) (rueidis.Client, string, func(), error) {
	if rawURL != "" {
		opt, err := redisurl.Parse(rawURL)
		if err != nil {
			// Parse's error is its own wording; the setting is named here,
			// the URL shown in Redact's form (no password, secret-named
			// query value or fragment).
			return nil, "", nil, fmt.Errorf("REDIS_URL: %w %s: want redis://[user:password@]host:port[/db], rediss://… or unix://…",
				redisurl.ErrInvalid, redisurl.Redact(rawURL))
		}
		opt.DisableCache = true // no client-side caching: reads must be live
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return nil, "", nil, fmt.Errorf("redis at %s: %w", redisurl.Redact(rawURL), err)
		}
		return c, redisurl.Redact(rawURL), c.Close, nil
	}
	mr, err := miniredis.Run()
	if err != nil {
		return nil, "", nil, err
	}
	// miniredis answers CLUSTER commands as a one-node cluster; without
	// ForceSingleClient rueidis would build a cluster client for it.
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		mr.Close()
		return nil, "", nil, err
	}
	stopClock := keepTime(mr)
	return c, "embedded miniredis at " + mr.Addr(), func() { stopClock(); c.Close(); mr.Close() }, nil
}

// embeddedTick is how often keepTime moves the embedded Redis's clock: how
// late, at most, one of its keys expires.
const embeddedTick = 250 * time.Millisecond

// keepTime moves mr's key expiries along with the real time until the
// function it returns is called. miniredis expires keys only when told to
// (FastForward): without this, the nonce and rate-limit keys of the
// embedded mode would never expire and would pile up with every request.
func keepTime(mr *miniredis.Miniredis) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(embeddedTick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now := time.Now()
			mr.FastForward(now.Sub(last))
			last = now
		}
	}()
	return func() { close(done); wg.Wait() }
}

// banner tells a person where to look, and how to sign: in development mode
// with the key it prints, else with the keys of SIGNING_KEYS, named by id
// only.
func banner(w io.Writer, cfg config, where, addr string) {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/"
	fmt.Fprintf(w, "Leaderboard service on %s\n  page:  %s\n  redis: %s\n", url, url, where)
	if !cfg.Dev {
		ids := slices.Sorted(maps.Keys(cfg.Keys))
		fmt.Fprintf(w, "  signing key ids (SIGNING_KEYS): %s\n", strings.Join(ids, ", "))
		return
	}
	fmt.Fprintf(w, "  No REDIS_URL: scores live in memory until this process exits.\n")
	fmt.Fprintf(w, "  Development signing key, for loadgen or curl (see README.md):\n\n")
	fmt.Fprintf(w, "    export SIGNING_KEYS=dev:%s\n", cfg.Keys["dev"])
	fmt.Fprintf(w, "    go run ./examples/loadgen -url %s -players 20 -duration 30s\n\n", strings.TrimSuffix(url, "/"))
}

// parseLevel takes the four levels README lists, and only them:
// slog.Level's own parser would also take "INFO", "debug+3" or "warn-4",
// levels nobody documented.
func parseLevel(s string) (slog.Level, error) {
	switch s {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("log level %q (LOG_LEVEL, -log-level): want debug, info, warn or error", s)
}
