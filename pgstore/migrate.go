package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/: NNNN_name.sql, applied in version
// order, each in its own transaction.
type migration struct {
	version int64
	name    string
	sql     string // with {{prefix}} still in it
}

// loadMigrations reads the embedded migrations in version order.
func loadMigrations() ([]migration, error) {
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int64]string{}
	for _, e := range entries {
		file := e.Name()
		if e.IsDir() || !strings.HasSuffix(file, ".sql") {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(file, ".sql"), "_")
		version, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || version <= 0 {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", file)
		}
		if other, dup := seen[version]; dup {
			return nil, fmt.Errorf("migration files %q and %q share version %d", other, file, version)
		}
		seen[version] = file
		body, err := migrationFiles.ReadFile(path.Join("migrations", file))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: version, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// Migrate creates or upgrades the store's tables. It is idempotent and safe
// to run from several processes at once: each migration runs in its own
// transaction holding a transaction-level advisory lock keyed by the table
// prefix, and is recorded in the <prefix>schema_migrations table, so every
// migration is applied exactly once. Run it at start-up, before the first
// Append.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("pgstore: migrate: %w", err)
	}
	for _, m := range ms {
		if err := s.migrateOne(ctx, m); err != nil {
			return fmt.Errorf("pgstore: migrate: %d_%s: %w%s", m.version, m.name, err, migrateHint(err))
		}
	}
	return nil
}

func (s *Store) migrateOne(ctx context.Context, m migration) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Serialises Migrate runs on the same prefix until this transaction
		// ends, including the CREATE TABLE IF NOT EXISTS below (which two
		// sessions can otherwise race into a unique violation).
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.lockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.tMigrations+` (
	version    bigint      PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return err
		}
		var applied bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+s.tMigrations+" WHERE version = $1)", m.version).Scan(&applied); err != nil {
			return err
		}
		if applied {
			return nil
		}
		// Several statements: the simple protocol runs them in order.
		sql := strings.ReplaceAll(m.sql, "{{prefix}}", s.prefix)
		if _, err := tx.Conn().PgConn().Exec(ctx, sql).ReadAll(); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "INSERT INTO "+s.tMigrations+" (version, name) VALUES ($1, $2)", m.version, m.name)
		return err
	})
}

// advisoryLockKey is the pg_advisory_xact_lock key of Migrate on prefix.
func advisoryLockKey(prefix string) int64 {
	h := fnv.New64a()
	h.Write([]byte("github.com/skiprank/leaderboard/pgstore migrate " + prefix))
	return int64(h.Sum64())
}

// migrateHint says what to do about an error a user's setup causes.
func migrateHint(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "3F000" { // invalid_schema_name
		return " (create the schema the pool's search_path names first: Migrate creates tables, not schemas)"
	}
	return ""
}
