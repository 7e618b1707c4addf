package leaderboard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The model tests (model_test.go, tiebreak_board_test.go, sharded_test.go)
// share this harness: a seeded random workload of weighted operations,
// checked against a model every so often, with the operations up to a
// failure printed when the test fails. Each test brings its own model and
// its own operations; a failure names the combo, the seed and the step, so
// that it can be replayed.

// modelHarness is one seeded run of a model test.
type modelHarness struct {
	t   *testing.T
	ctx context.Context
	rng *rand.Rand
	// label names the run in every failure message: combo, seed, backend.
	label string
	// step counts operations from 1; run sets it.
	step int
	// log holds the operations so far, printed when the test fails.
	log []string
}

// newModelHarness seeds the run's random source with seed and seed^stream
// (each model test its own stream) and prints the operations up to a
// failure when t fails.
func newModelHarness(t *testing.T, label string, seed, stream uint64) *modelHarness {
	if n := modelSeedShift(t); n != 0 {
		seed += n
		label += fmt.Sprintf(" LB_MODEL_SEED=%d", n)
	}
	h := &modelHarness{
		t: t, ctx: context.Background(), label: label,
		rng: rand.New(rand.NewPCG(seed, seed^stream)),
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s, operations up to the failure:\n%s", label, strings.Join(h.log, "\n"))
		}
	})
	return h
}

// modelSeedShift is LB_MODEL_SEED, 0 when unset.
func modelSeedShift(t *testing.T) uint64 {
	v := os.Getenv("LB_MODEL_SEED")
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("LB_MODEL_SEED=%q: want a whole number: %v", v, err)
	}
	return n
}

// where prefixes failure messages.
func (h *modelHarness) where() string { return fmt.Sprintf("[%s step=%d]", h.label, h.step) }

// logf records an operation for the failure log.
func (h *modelHarness) logf(format string, args ...any) {
	h.log = append(h.log, fmt.Sprintf("step %d: ", h.step)+fmt.Sprintf(format, args...))
}

// pick draws one of xs.
func pick[T any](h *modelHarness, xs []T) T { return xs[h.rng.IntN(len(xs))] }

// members draws 1 to most names, each one time in four from unknown (names
// never submitted) and otherwise from pool.
func (h *modelHarness) members(pool, unknown []string, most int) []string {
	n := 1 + h.rng.IntN(most)
	ms := make([]string, 0, n)
	for range n {
		if h.rng.IntN(4) == 0 {
			ms = append(ms, pick(h, unknown))
		} else {
			ms = append(ms, pick(h, pool))
		}
	}
	return ms
}

// modelOp is one kind of operation of a workload, drawn weight times in
// the sum of the weights.
type modelOp struct {
	weight int
	run    func()
}

// modelLoop is a workload: steps operations, and a check after every
// checkEvery of them.
type modelLoop struct {
	steps      int
	checkEvery int
	// before, if set, runs before each step's operation (moving a clock).
	before func()
	ops    []modelOp
	// check compares the board with the model; last is true after the
	// final step, where checks that are too slow for every round run.
	check func(last bool)
}

// run drives the workload.
func (h *modelHarness) run(l modelLoop) {
	total := 0
	for _, op := range l.ops {
		total += op.weight
	}
	for h.step = 1; h.step <= l.steps; h.step++ {
		if l.before != nil {
			l.before()
		}
		x := h.rng.IntN(total)
		for _, op := range l.ops {
			if x < op.weight {
				op.run()
				break
			}
			x -= op.weight
		}
		if h.step%l.checkEvery == 0 {
			l.check(h.step == l.steps)
		}
	}
}
