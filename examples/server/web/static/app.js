// The live leaderboard page: plain JavaScript, no build step. It reads the
// public API and refreshes whenever the service announces new scores over
// server-sent events (/api/v1/events), polling slowly while that stream is
// down. Player names are only ever set as text, never as markup.
'use strict';

(() => {
  const WINDOWS = {
    alltime: 'All time',
    daily: 'Today (UTC)',
    weekly: 'This week (ISO, UTC)',
    monthly: 'This month (UTC)',
  };
  const $ = (id) => document.getElementById(id);
  const num = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });
  const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

  const state = { window: 'alltime', player: '', live: false, lastTop: new Map(), bins: null };

  // --- data -------------------------------------------------------------

  async function getJSON(path, params) {
    const url = path + '?' + new URLSearchParams(params).toString();
    const res = await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' });
    let body = {};
    try {
      body = await res.json();
    } catch (_) {
      // a non-JSON answer (a proxy's error page): status alone tells
    }
    return { status: res.status, body };
  }

  function row(e, opts) {
    const tr = document.createElement('tr');
    if (opts.me) tr.classList.add('me');
    if (opts.flash) tr.classList.add('flash');
    // A player's display name when they gave one, else their id; always as
    // text (textContent), never as HTML: names come from players.
    const cells = [['rank', String(e.rank)], ['player', e.name || e.userId], ['score', num.format(e.score)]];
    for (const [cls, text] of cells) {
      const td = document.createElement('td');
      td.className = cls;
      td.textContent = text;
      if (cls === 'player' && e.name) td.title = e.userId;
      tr.append(td);
    }
    return tr;
  }

  async function loadTop() {
    const { status, body } = await getJSON('/api/v1/leaderboard', { window: state.window, limit: 10 });
    if (status !== 200) throw new Error(body.error || 'top 10: HTTP ' + status);
    // Rows whose score changed since the last refresh flash once.
    const seen = state.lastTop;
    state.lastTop = new Map(body.entries.map((e) => [e.userId, e.score]));
    $('top-body').replaceChildren(...body.entries.map((e) => row(e, {
      me: e.userId === state.player,
      flash: seen.size > 0 && seen.get(e.userId) !== e.score,
    })));
    $('top-empty').hidden = body.entries.length > 0;
    $('top-total').textContent = body.total > 0
      ? `${num.format(body.total)} player${body.total === 1 ? '' : 's'} in this board`
      : '';
    $('period').textContent = body.window === 'alltime' ? 'Since the start' : 'Period ' + body.period;
  }

  async function loadPlayer() {
    const player = state.player;
    $('player-hint').hidden = player !== '';
    if (!player) {
      $('standing').hidden = true;
      $('player-missing').hidden = true;
      return;
    }
    const { status, body } = await getJSON('/api/v1/leaderboard', { window: state.window, userId: player, range: 3 });
    if (player !== state.player) return; // a newer search has started
    if (status !== 200) {
      $('standing').hidden = true;
      $('player-missing').hidden = false;
      $('player-missing').textContent = status === 404
        ? `${player} has no score in this board yet.`
        : `Cannot show ${player}: ${body.error || 'HTTP ' + status}.`;
      return;
    }
    $('player-missing').hidden = true;
    $('standing').hidden = false;
    const p = $('player-standing');
    const rank = document.createElement('strong');
    rank.textContent = '#' + body.userRank;
    const ahead = body.total > 1 ? ` — ahead of ${num.format(body.percentile)}% of the others` : '';
    p.replaceChildren(
      document.createTextNode(player + ' is '), rank,
      document.createTextNode(` of ${num.format(body.total)} with ${num.format(body.userScore)}${ahead}.`),
    );
    $('neighbours-body').replaceChildren(...body.entries.map((e) => row(e, { me: e.userId === player })));
  }

  async function loadChart() {
    const { status, body } = await getJSON('/api/v1/distribution', { window: state.window });
    if (status !== 200) throw new Error(body.error || 'distribution: HTTP ' + status);
    state.bins = body.bins;
    drawChart();
    $('chart-note').textContent = body.sampled === 0
      ? 'No scores yet.'
      : body.sampled < body.total
        ? `Players per score range, among the best ${num.format(body.sampled)} of ${num.format(body.total)}.`
        : `Players per score range, all ${num.format(body.total)} players.`;
  }

  // --- chart ------------------------------------------------------------

  function drawChart() {
    const canvas = $('chart');
    const bins = state.bins || [];
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const css = getComputedStyle(document.documentElement);
    const accent = css.getPropertyValue('--accent').trim();
    const muted = css.getPropertyValue('--muted').trim();
    const line = css.getPropertyValue('--line').trim();
    ctx.font = '12px system-ui, sans-serif';
    const left = 40;
    const bottom = 24;
    const top = 8;
    const plotW = w - left - 18;
    const plotH = h - bottom - top;
    const maxCount = niceCeil(Math.max(2, ...bins.map((b) => b.count)));

    // Horizontal guides at 0, half and the largest count.
    ctx.strokeStyle = line;
    ctx.fillStyle = muted;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const f of [0, 0.5, 1]) {
      const y = top + plotH * (1 - f);
      ctx.beginPath();
      ctx.moveTo(left, y + 0.5);
      ctx.lineTo(left + plotW, y + 0.5);
      ctx.stroke();
      ctx.fillText(compact.format(Math.round(maxCount * f)), left - 6, y);
    }
    if (bins.length === 0) return;

    const slot = plotW / bins.length;
    const gap = Math.min(4, slot * 0.2);
    ctx.fillStyle = accent;
    bins.forEach((b, i) => {
      const bh = (b.count / maxCount) * plotH;
      ctx.fillRect(left + i * slot + gap / 2, top + plotH - bh, slot - gap, bh);
    });

    // Score labels under the bars, as many as fit.
    ctx.fillStyle = muted;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const every = Math.max(1, Math.ceil(bins.length / Math.max(1, Math.floor(plotW / 70))));
    for (let i = 0; i <= bins.length; i += every) {
      const v = i < bins.length ? bins[i].from : bins[bins.length - 1].to;
      ctx.fillText(compact.format(v), left + i * slot, top + plotH + 6);
    }
  }

  // niceCeil rounds n up to 1, 2 or 5 times a power of ten, so that the
  // chart's guides fall on round counts.
  function niceCeil(n) {
    const p = Math.pow(10, Math.floor(Math.log10(n)));
    for (const m of [1, 2, 5, 10]) {
      if (m * p >= n) return m * p;
    }
    return 10 * p;
  }

  // --- refresh ------------------------------------------------------------

  // One refresh at a time; a change announced during one runs another after.
  let running = false;
  let again = false;
  async function refresh() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await Promise.all([loadTop(), loadPlayer(), loadChart()]);
      const u = $('updated');
      u.classList.remove('error');
      u.textContent = 'Updated ' + new Date().toLocaleTimeString();
    } catch (err) {
      const u = $('updated');
      u.classList.add('error');
      u.textContent = 'Could not refresh: ' + err.message;
    } finally {
      running = false;
      if (again) {
        again = false;
        refresh();
      }
    }
  }

  function setLive(on) {
    state.live = on;
    const el = $('live');
    el.className = 'live ' + (on ? 'on' : 'off');
    el.textContent = on ? 'live' : 'reconnecting…';
  }

  function listen() {
    const es = new EventSource('/api/v1/events');
    es.addEventListener('hello', () => {
      setLive(true);
      refresh(); // anything missed while the stream was down
    });
    es.addEventListener('scores', (ev) => {
      setLive(true);
      try {
        const c = JSON.parse(ev.data);
        if (c.userId) {
          const more = c.count > 1 ? ` (+${c.count - 1} more)` : '';
          $('latest').textContent = `Latest: ${c.userId} scored ${num.format(c.score)}${more}`;
        }
      } catch (_) {
        // the refresh below is what matters
      }
      refresh();
    });
    es.onerror = () => {
      setLive(false);
      // EventSource reconnects by itself after a network error, but gives
      // up after an error status (429, or 503 while Redis is down): then a
      // new one is opened after a pause, the slow poll filling in meanwhile.
      if (es.readyState === EventSource.CLOSED) setTimeout(listen, 5000);
    };
  }

  // --- state in the address, so a view can be shared --------------------

  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    if (WINDOWS[h.get('window')]) state.window = h.get('window');
    state.player = (h.get('player') || '').trim();
  }

  function writeHash() {
    const h = new URLSearchParams();
    if (state.window !== 'alltime') h.set('window', state.window);
    if (state.player) h.set('player', state.player);
    const s = h.toString();
    history.replaceState(null, '', s ? '#' + s : location.pathname);
  }

  function showWindow() {
    for (const b of document.querySelectorAll('#windows button')) {
      b.setAttribute('aria-pressed', String(b.dataset.window === state.window));
    }
    $('top-title').textContent = 'Top 10 · ' + WINDOWS[state.window];
  }

  function start() {
    readHash();
    $('player').value = state.player;
    showWindow();
    $('windows').addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-window]');
      if (!b || b.dataset.window === state.window) return;
      state.window = b.dataset.window;
      state.lastTop = new Map();
      showWindow();
      writeHash();
      refresh();
    });
    $('search').addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.player = $('player').value.trim();
      writeHash();
      refresh();
    });
    let resize = 0;
    window.addEventListener('resize', () => {
      clearTimeout(resize);
      resize = setTimeout(drawChart, 100);
    });
    refresh();
    listen();
    // A slow poll while the event stream is down keeps the page current.
    setInterval(() => {
      if (!state.live) refresh();
    }, 5000);
  }

  start();
})();
