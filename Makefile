# `make test` is the project's test command: it starts what the tests need
# (see scripts/test.sh) and runs every check against miniredis and real Redis.
.PHONY: test run
test:
	./scripts/test.sh

run:
	go run ./examples/quickstart
