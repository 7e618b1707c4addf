package main

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisurl"
)

// The addresses of Redis and PostgreSQL come from the environment and may
// hold passwords. They are parsed before anything connects; what is
// printed is built from the parsed parts with the password masked, and an
// error that may hold part of the value (a parse error quotes its input)
// is replaced by one that does not. Every error the program prints also
// goes through secrets.scrub, for what a library might quote.

// redisTarget is a parsed REDIS_URL; zero means an embedded miniredis.
type redisTarget struct {
	opt   rueidis.ClientOption
	shown string // the URL with its password masked
	set   bool
}

// parseRedisURL parses REDIS_URL (empty: an embedded miniredis) with the
// repository's one reader of it, internal/redisurl: a trailing slash is
// database 0, and neither its errors nor what is shown hold the password.
func parseRedisURL(raw string) (redisTarget, error) {
	if raw == "" {
		return redisTarget{shown: "embedded miniredis"}, nil
	}
	opt, err := redisurl.Parse(raw)
	if err != nil {
		return redisTarget{}, fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.DisableCache = true
	return redisTarget{opt: opt, shown: redisurl.Redact(raw), set: true}, nil
}

// connect connects to the target, or starts an embedded miniredis; stop
// stops what it started.
func (r redisTarget) connect() (client rueidis.Client, stop func(), err error) {
	if !r.set {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, nil, fmt.Errorf("embedded miniredis: %w", err)
		}
		// ForceSingleClient: miniredis answers CLUSTER commands, which would
		// otherwise make rueidis build a cluster client.
		client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			mr.Close()
			return nil, nil, fmt.Errorf("embedded miniredis: %w", err)
		}
		return client, func() { client.Close(); mr.Close() }, nil
	}
	client, err = rueidis.NewClient(r.opt)
	if err != nil {
		return nil, nil, fmt.Errorf("redis at %s (is Redis running? set REDIS_URL): %w", r.shown, err)
	}
	return client, client.Close, nil
}

// pgTarget is a parsed DATABASE_URL.
type pgTarget struct {
	cfg   *pgxpool.Config
	shown string // postgres://user@host:port/database, no password
}

// parsePostgres parses DATABASE_URL: a postgres:// URL or key=value
// settings, as pgx reads them.
func parsePostgres(dsn string) (pgTarget, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return pgTarget{}, errors.New("DATABASE_URL cannot be parsed (want postgres://user[:password]@host:port/database?sslmode=... " +
			"or key=value settings; the value is not shown, as it may hold a password)")
	}
	c := cfg.ConnConfig
	shown := (&url.URL{Scheme: "postgres", User: url.User(c.User), Host: c.Host + ":" + strconv.Itoa(int(c.Port)), Path: "/" + c.Database}).String()
	return pgTarget{cfg: cfg, shown: shown}, nil
}

// secrets are the passwords of the configuration, to mask wherever a
// message might quote them.
type secrets []string

func newSecrets(r redisTarget, p pgTarget) secrets {
	var s secrets
	add := func(pw string) {
		if pw != "" {
			s = append(s, pw, url.QueryEscape(pw), url.PathEscape(pw))
		}
	}
	add(r.opt.Password)
	if p.cfg != nil {
		add(p.cfg.ConnConfig.Password)
	}
	return s
}

// scrub masks every secret in msg.
func (s secrets) scrub(msg string) string {
	for _, pw := range s {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}
