package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// meter is a progress bar on a terminal, and nothing elsewhere: redrawn
// with carriage returns, a bar in a log file would be a flood of them, and
// the step's summary line says what it did anyway.
//
// It starts the bar's clock when the work starts (StartWithoutRender): left
// to itself the bar starts it at its first step and divides that step by
// the nanoseconds since, a rate of a billion a second. It draws only steps
// that advance, so it never shows the rate of no progress ("0 members/hr"),
// and a new description waits for the next step that does.
type meter struct {
	mu      sync.Mutex
	bar     *progressbar.ProgressBar // nil: not a terminal
	n       int64
	desc    string // to show from the next step
	current string
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newMeter is a bar of max steps (unit) on out, when show; its clock starts
// now.
func newMeter(out io.Writer, show bool, max int64, description, unit string) *meter {
	if !show || max <= 0 {
		return &meter{}
	}
	bar := progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(out),
		progressbar.OptionSetDescription(description),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionThrottle(65*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }),
	)
	bar.StartWithoutRender()
	return &meter{bar: bar, current: description}
}

// add moves the bar d steps on.
func (m *meter) add(d int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.moveTo(m.n + d)
}

// set moves the bar to n steps, if that is further.
func (m *meter) set(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.moveTo(n)
}

func (m *meter) moveTo(n int64) {
	if m.bar == nil || n <= m.n {
		return
	}
	m.n = n
	_ = m.bar.Set64(n)
	// A finished bar has printed its last line: describing it would draw
	// it again below.
	if m.desc != "" && m.desc != m.current && !m.bar.IsFinished() {
		m.current = m.desc
		m.bar.Describe(m.desc)
	}
}

// describe shows description from the next step on.
func (m *meter) describe(description string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.desc = description
}

// finish fills the bar and ends its line.
func (m *meter) finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bar != nil {
		_ = m.bar.Finish()
	}
}
