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
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
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
	level, _ := parseLevel(cfg.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	var log *slog.Logger
	if cfg.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(stderr, opts))
	} else {
		log = slog.New(slog.NewTextHandler(stderr, opts))
	}

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
		return err
	}
	hs := &http.Server{
		Handler: srv.handler(),
		// Bounds on what a slow or idle client can hold; event streams set
		// their own write deadlines.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(srv.close)

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

// connect dials REDIS_URL, or starts an embedded miniredis when it is empty.
func connect(url string) (rueidis.Client, string, func(), error) {
	if url != "" {
		opt, err := rueidis.ParseURL(url)
		if err != nil {
			return nil, "", nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		opt.DisableCache = true // no client-side caching: reads must be live
		c, err := rueidis.NewClient(opt)
		if err != nil {
			return nil, "", nil, fmt.Errorf("redis at %s: %w", redact(url), err)
		}
		return c, redact(url), c.Close, nil
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
	return c, "embedded miniredis at " + mr.Addr(), func() { c.Close(); mr.Close() }, nil
}

// redact drops a password from a Redis URL before it is printed.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	return scheme + "://" + rest
}

// banner tells a person where to look, and in development mode how to sign.
func banner(w io.Writer, cfg config, where, addr string) {
	host, port, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/"
	fmt.Fprintf(w, "Leaderboard service on %s\n  page:  %s\n  redis: %s\n", url, url, where)
	if cfg.Dev {
		fmt.Fprintf(w, "  No REDIS_URL: scores live in memory until this process exits.\n")
		fmt.Fprintf(w, "  Development signing key, for loadgen or curl (see README.md):\n\n")
		fmt.Fprintf(w, "    export SIGNING_KEYS=dev:%s\n", cfg.Keys["dev"])
		fmt.Fprintf(w, "    go run ./examples/loadgen -url %s -players 20 -duration 30s\n\n", strings.TrimSuffix(url, "/"))
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level %q: want debug, info, warn or error", s)
	}
	return l, nil
}
