package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// chromium returns the browser to drive: CHROME_PATH, or Debian's package.
// Without it the test fails under CI=true (scripts/need-chromium.sh installs
// it) and is skipped elsewhere.
func chromium(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROME_PATH")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no Chromium at %s (install Debian's chromium: scripts/need-chromium.sh, or set CHROME_PATH): %v", path, err)
		if testredis.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// TestBrowserLivePage opens the page in headless Chromium, submits scores
// through the API, and watches the top 10 and a searched player change
// without a reload. It saves a screenshot in the test's temp dir (and in
// $SCREENSHOT_DIR when set, to look at).
func TestBrowserLivePage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exec := chromium(t)
	f := newFixture(t, testredis.Mini(t))
	ts := httptest.NewServer(f.h)
	defer ts.Close()

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exec),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// This machine has no network beyond loopback: nothing may phone home.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithLogf(t.Logf))
	defer cancelTab()

	// Twelve players before the page opens.
	for i := 1; i <= 12; i++ {
		f.submit(fmt.Sprintf("player-%03d", i), float64(1000*i))
	}

	// waitFor waits until the JavaScript expression is true.
	waitFor := func(what, expr string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`))
			t.Fatalf("waiting for %s: %v\npage:\n%s", what, err, dump)
		}
	}
	topRows := `[...document.querySelectorAll('#top-body tr')].map(r => r.innerText.replace(/\s+/g, ' ').trim())`

	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	waitFor("the top 10", `document.querySelectorAll('#top-body tr').length === 10 &&
		document.querySelector('#top-body tr .player').textContent === 'player-012'`)
	waitFor("the live stream", `document.getElementById('live').classList.contains('on')`)
	// A mark that a reload would wipe.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__sameDocument = true`)); err != nil {
		t.Fatal(err)
	}

	// Search a player: standing and neighbours.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#player`), "player-005"),
		chromedp.Click(chromedp.CSS(`#search button`)), // as a person does: the page's handler runs
	); err != nil {
		t.Fatalf("search: %v", err)
	}
	waitFor("player-005's standing", `document.getElementById('player-standing').innerText.includes('#8 of 12')`)
	waitFor("player-005's neighbours", `document.querySelectorAll('#neighbours-body tr').length === 7 &&
		document.querySelector('#neighbours-body tr.me .player').textContent === 'player-005'`)

	// Scores arrive: a newcomer takes the lead, under a display name that
	// tries to be HTML (shown as text, run never), and player-005 climbs.
	f.submitNamed("newcomer", 50_000, `Ana <img src=x onerror="window.__xss=1"> & Bo`)
	waitFor("the newcomer on top, by name", `document.querySelector('#top-body tr .player').textContent === 'Ana <img src=x onerror="window.__xss=1"> & Bo' &&
		document.querySelector('#top-body tr .player').title === 'newcomer'`)
	waitFor("no markup from a name", `document.querySelectorAll('#top-body img').length === 0 && window.__xss === undefined`)
	f.submit("player-005", 11_500)
	waitFor("player-005's new standing", `document.getElementById('player-standing').innerText.includes('#3 of 13')`)
	waitFor("player-005 in the top 10", `[...document.querySelectorAll('#top-body tr.me .player')].some(p => p.textContent === 'player-005')`)
	waitFor("the latest score line", `document.getElementById('latest').innerText.includes('player-005')`)
	waitFor("the chart's note", `document.getElementById('chart-note').innerText.includes('all 13 players')`)

	same, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__sameDocument === true`))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](topRows))
	if err != nil {
		t.Fatal(err)
	}
	if !same {
		t.Fatal("the page was reloaded")
	}
	if len(rows) != 10 || !strings.HasPrefix(rows[0], `1 Ana <img src=x onerror="window.__xss=1"> & Bo 50,000`) || !strings.HasPrefix(rows[2], "3 player-005 11,500") {
		t.Fatalf("top 10 rows %q", rows)
	}
	// The chart was drawn: some pixels of the canvas are not blank.
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const c = document.getElementById('chart');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true;
		return false;
	})()`))
	if err != nil || !drawn {
		t.Fatalf("chart not drawn (%v)", err)
	}

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	shot := filepath.Join(t.TempDir(), "leaderboard.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
	if dir := os.Getenv("SCREENSHOT_DIR"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "leaderboard.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
