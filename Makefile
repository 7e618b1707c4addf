# `make test` is the project's test command: it installs and starts what the
# tests need when it is missing (it prints what before doing it; README "The
# two commands", scripts/test.sh) and runs every check against miniredis,
# real Redis, a Redis Cluster and PostgreSQL.
# `make test-local` is the same with NO_INSTALL=1: it installs nothing and
# changes nothing on the machine, and the tests that need a missing part skip.
.PHONY: test test-local run
test:
	./scripts/test.sh

test-local:
	NO_INSTALL=1 ./scripts/test.sh

run:
	go run ./examples/quickstart
