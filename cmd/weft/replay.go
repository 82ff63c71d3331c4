package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weft-run/weft/projections"
)

// replayReport is what weft replay prints.
type replayReport struct {
	Events          uint64  `json:"events"`
	Position        uint64  `json:"position"`
	Applied         uint64  `json:"applied"`
	Seconds         float64 `json:"seconds"`
	EventsPerSecond float64 `json:"events_per_second"`
	Sessions        int     `json:"sessions"`
	Runs            int     `json:"runs"`
	Pending         int     `json:"pending"`
	AuditLines      int     `json:"audit_lines"`
}

// runReplay rebuilds every projection from position 0.
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", "[--nats URL | --data DIR] [--progress] [--json]", `
Rebuilds every projection (session archive, HITL queue, audit timeline) from
position 0 of the log and prints how many events it read and how fast. A
progress bar goes to stderr when stderr is a terminal, or with --progress.`, stderr)
	src := addSourceFlags(fs, true)
	output := addOutputFlag(fs)
	progress := fs.Bool("progress", false, "draw the progress bar on stderr even when it is not a terminal")
	if err := parseNoArgs(fs, src, args, output.check); err != nil {
		return err
	}
	if !setFlags(fs)["timeout"] {
		src.timeout = time.Hour // a long log takes its time
	}
	draw := *progress || isTerminal(stderr)
	return withSource(ctx, src, func(ctx context.Context, s *logSource) error {
		total, err := s.lastPosition(ctx)
		if err != nil {
			return err
		}
		archive, queue, audit := projections.NewArchive(), projections.NewQueue(), projections.NewAudit()
		var opts []projections.RunnerOption
		bar := &progressBar{w: stderr, total: total}
		if draw {
			every := int(total / 100)
			opts = append(opts, projections.WithProgress(func(p projections.Progress) { bar.draw(p.Read) }, max(every, 1000)))
		}
		start := time.Now()
		p, err := projections.NewRunner(s.store, []projections.Projection{archive, queue, audit}, opts...).Rebuild(ctx)
		elapsed := time.Since(start)
		if draw {
			bar.done()
		}
		if err != nil {
			return fmt.Errorf("replay the log at %s: %w", s.where, err)
		}
		rep := replayReport{Events: p.Read, Position: p.Position, Applied: p.Applied, Seconds: elapsed.Seconds(), Pending: len(queue.Items())}
		if elapsed > 0 {
			rep.EventsPerSecond = float64(p.Read) / elapsed.Seconds()
		}
		for _, id := range archive.Sessions() {
			a, err := archive.Session(id)
			if err != nil {
				return err
			}
			rep.Sessions++
			rep.Runs += len(a.Runs)
		}
		for _, id := range audit.Sessions() {
			lines, err := audit.Timeline(id)
			if err != nil {
				return err
			}
			rep.AuditLines += len(lines)
		}
		if output.json() {
			return output.write(stdout, rep)
		}
		fmt.Fprintf(stdout, "replayed %d events (last position %d) in %s: %.0f events/s\n", rep.Events, rep.Position, elapsed.Round(time.Millisecond), rep.EventsPerSecond)
		fmt.Fprintf(stdout, "archive: %d sessions, %d runs\n", rep.Sessions, rep.Runs)
		fmt.Fprintf(stdout, "hitl:    %d pending\n", rep.Pending)
		fmt.Fprintf(stdout, "audit:   %d lines\n", rep.AuditLines)
		return nil
	})
}

// progressBar draws "\r[====    ] 45% 45000/100000 events" lines.
type progressBar struct {
	w     io.Writer
	total uint64
	drawn bool
}

const barWidth = 30

func (b *progressBar) draw(read uint64) {
	b.drawn = true
	if b.total == 0 {
		fmt.Fprintf(b.w, "\r%d events", read)
		return
	}
	done := min(read, b.total)
	fill := int(done * barWidth / b.total)
	fmt.Fprintf(b.w, "\r[%s%s] %3d%% %d/%d events", strings.Repeat("=", fill), strings.Repeat(" ", barWidth-fill), done*100/b.total, read, b.total)
}

// done ends the bar's line.
func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
