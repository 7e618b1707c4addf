package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report is everything one run measured.
type report struct {
	cfg     config
	env     environment
	board   string
	load    loadReport
	ops     []operation
	figures []figure
}

func (r *report) write(out io.Writer) error {
	md := r.cfg.format == "md"
	var b strings.Builder
	if md {
		fmt.Fprintf(&b, "**Run** %s: `%s`\n\n", r.env.when.Format(time.DateTime+" MST"), r.cfg.commandLine())
		fmt.Fprintf(&b, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s\n", r.env.cpus, r.env.procs, r.env.goVersion, r.env.redis)
		fmt.Fprintf(&b, "- Board: %s\n", r.board)
	} else {
		fmt.Fprintf(&b, "machine: %d CPUs (GOMAXPROCS %d), %s; %s\n", r.env.cpus, r.env.procs, r.env.goVersion, r.env.redis)
		fmt.Fprintf(&b, "board:   %s\n", r.board)
	}
	r.writeLoad(&b, md)
	b.WriteString("\n")
	for _, op := range r.ops {
		r.writeOp(&b, op, md)
	}
	r.writeTargets(&b, md)
	_, err := io.WriteString(out, b.String())
	return err
}

func (r *report) writeLoad(b *strings.Builder, md bool) {
	n := float64(r.cfg.members)
	keys := float64(len(r.cfg.windows))
	line := func(label string, d time.Duration, bytes int64) string {
		s := fmt.Sprintf("%s %.2f s (%s members/s)", label, d.Seconds(), thousands(n/d.Seconds()))
		if r.load.MemoryKnown {
			s += fmt.Sprintf(", used_memory +%.1f MiB = %.0f bytes per member per window key", float64(bytes)/(1<<20), float64(bytes)/n/keys)
		}
		return s
	}
	prefix := "load:    "
	if md {
		prefix = "- Load: "
	}
	fmt.Fprintf(b, "%s%s; %s; SDK/ceiling speed %.2fx\n", prefix,
		line(fmt.Sprintf("SubmitMany of %d a call, %d in flight:", min(batchSize, r.cfg.members), r.cfg.loadConcurrency), r.load.SDK, r.load.SDKBytes),
		line(fmt.Sprintf("ceiling (plain pipelined ZADD of %s a command, same concurrency):", thousands(float64(min(batchSize, r.cfg.members)))), r.load.Raw, r.load.RawBytes),
		r.load.Raw.Seconds()/r.load.SDK.Seconds())
}

// baseline is the SDK's figure at the same concurrency as f.
func (r *report) sdkFigure(f figure) (figure, bool) {
	for _, g := range r.figures {
		if g.op == f.op && g.conc == f.conc && g.impl == "sdk" {
			return g, true
		}
	}
	return figure{}, false
}

func (r *report) figure(op, impl string, conc int) (figure, bool) {
	for _, g := range r.figures {
		if g.op == op && g.conc == conc && g.impl == impl {
			return g, true
		}
	}
	return figure{}, false
}

func (r *report) writeOp(b *strings.Builder, op operation, md bool) {
	header := []string{"c", "impl", "ops/s", "members/s", "p50", "p99", "p99.9", "allocs/op", "B/op", "Redis CPU µs/op", "SDK ÷ this: ops/s", "SDK ÷ this: p50"}
	var rows [][]string
	for _, f := range r.figures {
		if f.op != op.name {
			continue
		}
		if f.calls == 0 {
			// No call finished within -d: no figure, no ratio.
			rows = append(rows, []string{fmt.Sprint(f.conc), f.impl, "no data", "", "", "", "", "", "", "", "", ""})
			continue
		}
		row := []string{fmt.Sprint(f.conc), f.impl, thousands(f.opsPerSec()), "", dur(f.p50), dur(f.p99), dur(f.p999),
			fmt.Sprintf("%.1f", f.allocs), fmt.Sprintf("%.0f", f.bytes), "", "", ""}
		if f.units > 1 {
			row[3] = thousands(f.opsPerSec() * float64(f.units))
		}
		if !math.IsNaN(f.redisCPU) {
			row[9] = fmt.Sprintf("%.1f", f.redisCPU)
		}
		if s, ok := r.sdkFigure(f); ok && f.impl != "sdk" && s.calls > 0 {
			row[10] = fmt.Sprintf("%.2fx", s.opsPerSec()/f.opsPerSec())
			row[11] = fmt.Sprintf("%.2fx", s.p50.Seconds()/f.p50.Seconds())
		}
		rows = append(rows, row)
	}
	if md {
		fmt.Fprintf(b, "**%s**: %s\n\n", op.name, op.desc)
		b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
		for range header {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, row := range rows {
			if row[1] == "sdk" {
				row[1] = "**sdk**"
			}
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
		b.WriteString("\n")
		r.writeCommands(b, op, md)
		return
	}
	fmt.Fprintf(b, "== %s: %s\n", op.name, op.desc)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
	b.WriteString("\n")
	r.writeCommands(b, op, md)
}

// writeCommands lists, with -commandstats, the server time of each command
// per call of every figure of op.
func (r *report) writeCommands(b *strings.Builder, op operation, md bool) {
	if !r.cfg.commandStats {
		return
	}
	for _, f := range r.figures {
		if f.op != op.name || len(f.commands) == 0 {
			continue
		}
		names := make([]string, 0, len(f.commands))
		for n := range f.commands {
			names = append(names, n)
		}
		slices.Sort(names)
		parts := make([]string, 0, len(names))
		for _, n := range names {
			v := f.commands[n]
			if v.calls < 0.01 {
				continue // INFO and other rare calls
			}
			parts = append(parts, fmt.Sprintf("%s %.2f× %.1fµs", n, v.calls, v.usec))
		}
		line := fmt.Sprintf("commandstats per call, %s c=%d: %s", f.impl, f.conc, strings.Join(parts, ", "))
		if md {
			line = "- " + line
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n")
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	}
}

// thousands formats a rate with thousands separators.
func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
