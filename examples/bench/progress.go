package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// lineEvery is how often a load's progress is written as a line where
// stderr is no terminal: often enough to show it is alive, rarely enough
// for a log file.
const lineEvery = 5 * time.Second

// loadProgress shows how far a load of n members has come: a progress bar
// redrawn in place on a terminal, whole lines elsewhere.
type loadProgress struct {
	con   console
	what  string
	n     int64
	start time.Time
	done  atomic.Int64
	bar   *progressbar.ProgressBar // on a terminal
	stop  chan struct{}            // elsewhere: ends the line writer
	wg    sync.WaitGroup
}

func newLoadProgress(con console, what string, n int) *loadProgress {
	p := &loadProgress{con: con, what: what, n: int64(n), start: time.Now()}
	if con.tty {
		p.bar = progressbar.NewOptions64(p.n,
			progressbar.OptionSetWriter(con.w),
			progressbar.OptionSetDescription("load "+what),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("members"),
			progressbar.OptionThrottle(100*time.Millisecond),
			// Drawn now, so the bar's clock starts with the load: started
			// at the first batch's end, it showed that batch over a few
			// microseconds as its first rate (a billion members/s).
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(con.w) }),
		)
		return p
	}
	fmt.Fprintf(con.w, "bench: load %s: %s members\n", what, thousands(float64(n)))
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go p.lines()
	return p
}

// lines writes a progress line every lineEvery until stop is closed.
func (p *loadProgress) lines() {
	defer p.wg.Done()
	t := time.NewTicker(lineEvery)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			d := p.done.Load()
			fmt.Fprintf(p.con.w, "bench: load %s: %s of %s members (%.0f%%), %s members/s\n", p.what,
				thousands(float64(d)), thousands(float64(p.n)), 100*float64(d)/float64(p.n), thousands(float64(d)/time.Since(p.start).Seconds()))
		}
	}
}

// add counts k more members loaded.
func (p *loadProgress) add(k int) {
	p.done.Add(int64(k))
	if p.bar != nil {
		_ = p.bar.Add(k)
	}
}

// finish ends the display with the load's time and rate.
func (p *loadProgress) finish(elapsed time.Duration, err error) {
	if p.bar != nil {
		if err == nil {
			_ = p.bar.Finish()
		} else {
			fmt.Fprintln(p.con.w)
		}
		return
	}
	close(p.stop)
	p.wg.Wait()
	if err != nil {
		return
	}
	fmt.Fprintf(p.con.w, "bench: load %s: %s members in %.2f s, %s members/s\n", p.what,
		thousands(float64(p.n)), elapsed.Seconds(), thousands(float64(p.n)/elapsed.Seconds()))
}
