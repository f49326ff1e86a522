package admin

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/state"
)

// The health page's charts are inline SVG drawn here, on the server: no
// script, no external file, so they work wherever the page does. Every
// chart carries an aria-label stating its figures and a <title> on each
// mark, which a browser shows on hover.

// Chart geometry, in SVG user units (the SVG scales to its box).
const (
	chartW, chartH                = 420, 190
	padL, padR, padT, padB        = 46, 104, 12, 26
	plotW, plotH                  = chartW - padL - padR, chartH - padT - padB
	minChartSpan                  = 15 * time.Minute
	maxLabelledPasses             = 8
	colorCalls, colorQuota        = "#1c4fa0", "#c0392b"
	colorDeadLetters, colorConfls = "#c0392b", "#8a5a00"
)

// passKinds are the writes the pass chart stacks, bottom up.
var passKinds = []struct{ name, color string }{
	{"created", "#2e8b57"}, {"updated", "#1c4fa0"}, {"adopted", "#7b4fa0"}, {"deleted", "#c0392b"}, {"failed", "#e08a00"},
}

// svg builds one chart.
type svg struct {
	b strings.Builder
}

func (s *svg) f(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

func newSVG(id, label string) *svg {
	s := &svg{}
	s.f(`<svg id="%s" class="chart" viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		id, chartW, chartH, template.HTMLEscapeString(label))
	s.f(`<rect x="%d" y="%d" width="%d" height="%d" fill="#fafbfc" stroke="#dde1e7"/>`, padL, padT, plotW, plotH)
	return s
}

func (s *svg) text(x, y float64, anchor, class, txt string) {
	s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, template.HTMLEscapeString(txt))
}

func (s *svg) html() template.HTML {
	s.f(`</svg>`)
	return template.HTML(s.b.String()) // every value above is a number or escaped
}

// yAxis draws the value axis from 0 to top, with its unit.
func (s *svg) yAxis(top float64, unit string) {
	for _, v := range []float64{0, top / 2, top} {
		y := yOf(v, top)
		s.f(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eceef2"/>`, padL, padL+plotW, y, y)
		s.text(padL-6, y+4, "end", "tick", thousands(int64(math.Round(v))))
	}
	y := padT + float64(plotH)/2
	s.f(`<text x="12" y="%.1f" text-anchor="middle" class="unit" transform="rotate(-90 12 %.1f)">%s</text>`, y, y, template.HTMLEscapeString(unit))
}

func yOf(v, top float64) float64 { return float64(padT+plotH) - v/top*float64(plotH) }

// timeAxis maps [start, end] onto the plot and labels a few instants.
type timeAxis struct{ start, end time.Time }

func newTimeAxis(points []state.HistoryPoint, since, now time.Time) timeAxis {
	start := now.Add(-minChartSpan)
	if len(points) > 0 && points[0].Minute.Before(start) {
		start = points[0].Minute
	}
	if start.Before(since) {
		start = since
	}
	return timeAxis{start: start, end: now}
}

func (a timeAxis) x(t time.Time) float64 {
	return padL + float64(t.Sub(a.start))/float64(a.end.Sub(a.start))*plotW
}

func (a timeAxis) draw(s *svg) {
	span := a.end.Sub(a.start)
	step := time.Minute
	for _, d := range []time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour} {
		if span/step <= 6 {
			break
		}
		step = d
	}
	for t := a.start.Truncate(step).Add(step); !t.After(a.end); t = t.Add(step) {
		s.text(a.x(t), chartH-8, "middle", "tick", t.Local().Format("15:04"))
	}
}

// apiCallsChart is the workspace calls of each minute against the quota.
func apiCallsChart(h History, now time.Time) template.HTML {
	ax := newTimeAxis(h.Minutes, h.Since, now)
	var peak state.HistoryPoint
	var total int64
	for _, p := range h.Minutes {
		total += p.APICalls
		if p.APICalls > peak.APICalls {
			peak = p
		}
	}
	label := fmt.Sprintf("API calls per minute since %s: %s calls, peak %s in the minute of %s, quota %s per minute",
		ax.start.Local().Format("15:04"), thousands(total), thousands(peak.APICalls), peak.Minute.Local().Format("15:04"), thousands(int64(h.QuotaPerMinute)))
	s := newSVG("chart-api-calls", label)
	top := niceTop(math.Max(float64(peak.APICalls), h.QuotaPerMinute))
	s.yAxis(top, "calls/min")
	ax.draw(s)
	barW := math.Max(1, float64(time.Minute)/float64(ax.end.Sub(ax.start))*plotW)
	var path strings.Builder
	for _, p := range h.Minutes {
		if p.APICalls == 0 || p.Minute.Before(ax.start) {
			continue
		}
		y, x := yOf(float64(p.APICalls), top), ax.x(p.Minute)
		w := math.Min(barW, padL+plotW-x) // the current minute ends now
		fmt.Fprintf(&path, "M%.1f %.1fh%.1fV%dh%.1fZ", x, y, w, padT+plotH, -w)
	}
	s.f(`<path class="calls" d="%s" fill="%s"><title>%s</title></path>`, path.String(), colorCalls, template.HTMLEscapeString(label))
	if h.QuotaPerMinute > 0 {
		y := yOf(h.QuotaPerMinute, top)
		s.f(`<line class="quota" x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5 4"/>`, padL, padL+plotW, y, y, colorQuota)
		ly := y - 4
		if ly < padT+12 {
			ly = y + 12 // below a line at the top of the plot
		}
		// At the left: the recent minutes, on the right, are the ones
		// likely to reach the line.
		s.text(padL+4, ly, "start", "quota-label", "quota "+thousands(int64(h.QuotaPerMinute))+"/min")
	}
	s.text(padL+plotW+6, padT+12, "start", "peak-label", "peak "+thousands(peak.APICalls))
	s.text(padL+plotW+6, padT+26, "start", "peak-label", "total "+thousands(total))
	return s.html()
}

// passesChart stacks the writes of each finished pass by kind.
func passesChart(h History) template.HTML {
	label := fmt.Sprintf("Records written per pass, by kind: %d passes", len(h.Passes))
	s := newSVG("chart-passes", label)
	top := 0.0
	for _, r := range h.Passes {
		top = math.Max(top, float64(r.Created+r.Updated+r.Adopted+r.Deleted+r.Failed))
	}
	top = niceTop(top)
	s.yAxis(top, "records")
	n := max(len(h.Passes), 1)
	slot := float64(plotW) / float64(n)
	w := math.Min(slot*0.7, 40)
	for i, r := range h.Passes {
		x := padL + slot*float64(i) + (slot-w)/2
		counts := map[string]int{"created": r.Created, "updated": r.Updated, "adopted": r.Adopted, "deleted": r.Deleted, "failed": r.Failed}
		title := fmt.Sprintf("%s %s at %s: %d created, %d updated, %d adopted, %d deleted, %d failed (%d unchanged)",
			r.Connector, r.Kind, r.StartedAt.Local().Format("15:04:05"), r.Created, r.Updated, r.Adopted, r.Deleted, r.Failed, r.Unchanged)
		s.f(`<g class="pass" id="pass-%d"><title>%s</title>`, r.ID, template.HTMLEscapeString(title))
		y := float64(padT + plotH)
		for _, k := range passKinds {
			if c := counts[k.name]; c > 0 {
				hgt := float64(c) / top * plotH
				y -= hgt
				s.f(`<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`, k.name, x, y, w, hgt, k.color)
			}
		}
		s.f(`</g>`)
		if len(h.Passes) <= maxLabelledPasses {
			s.text(x+w/2, chartH-8, "middle", "tick", r.Connector)
		}
	}
	if len(h.Passes) == 0 {
		s.text(padL+plotW/2, padT+plotH/2, "middle", "empty", "no pass finished yet")
	}
	for i, k := range passKinds {
		y := float64(padT + 10 + 16*i)
		s.f(`<rect x="%d" y="%.1f" width="10" height="10" fill="%s"/>`, padL+plotW+8, y-9, k.color)
		s.text(padL+plotW+22, y, "start", "legend", k.name)
	}
	return s.html()
}

// problemsChart draws the dead letters and conflicts held over time.
func problemsChart(h History, now time.Time) template.HTML {
	ax := newTimeAxis(h.Minutes, h.Since, now)
	var dead, confl int
	top := 0.0
	for _, p := range h.Minutes {
		if p.NoTotals {
			continue
		}
		top = math.Max(top, float64(max(p.DeadLetters, p.Conflicts)))
		dead, confl = p.DeadLetters, p.Conflicts
	}
	label := fmt.Sprintf("Dead letters and conflicts over time: now %d dead letters, %d conflicts", dead, confl)
	s := newSVG("chart-problems", label)
	top = niceTop(top)
	s.yAxis(top, "records")
	ax.draw(s)
	line := func(class, color string, v func(state.HistoryPoint) int) {
		var pts strings.Builder
		prev := -1.0
		for _, p := range h.Minutes {
			if p.Minute.Before(ax.start) || p.NoTotals {
				continue // a minute of calls only: the line holds its level
			}
			x, y := ax.x(p.Minute), yOf(float64(v(p)), top)
			if prev >= 0 {
				fmt.Fprintf(&pts, " %.1f,%.1f", x, prev) // a step: the total held until this minute
			}
			fmt.Fprintf(&pts, " %.1f,%.1f", x, y)
			prev = y
		}
		if prev >= 0 {
			fmt.Fprintf(&pts, " %.1f,%.1f", ax.x(now), prev)
		}
		s.f(`<polyline class="%s" points="%s" fill="none" stroke="%s" stroke-width="2"/>`, class, strings.TrimSpace(pts.String()), color)
	}
	line("deadletters", colorDeadLetters, func(p state.HistoryPoint) int { return p.DeadLetters })
	line("conflicts", colorConfls, func(p state.HistoryPoint) int { return p.Conflicts })
	s.f(`<rect x="%d" y="%d" width="10" height="3" fill="%s"/>`, padL+plotW+8, padT+6, colorDeadLetters)
	s.text(padL+plotW+22, padT+10, "start", "legend", fmt.Sprintf("dead letters %d", dead))
	s.f(`<rect x="%d" y="%d" width="10" height="3" fill="%s"/>`, padL+plotW+8, padT+22, colorConfls)
	s.text(padL+plotW+22, padT+26, "start", "legend", fmt.Sprintf("conflicts %d", confl))
	return s.html()
}

// niceTop rounds v up to a round multiple of a power of ten (at least
// 4), for a readable axis.
func niceTop(v float64) float64 {
	if v <= 4 {
		return 4 // an axis of 0, 2, 4 rather than fractions
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// thousands formats n with separators: 12,345.
func thousands(n int64) string { return progress.Thousands(n) }
