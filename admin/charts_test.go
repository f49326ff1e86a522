package admin

import (
	"encoding/xml"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/state"
)

// node is a parsed SVG element.
type node struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) num(t *testing.T, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr(name), 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.XMLName.Local, name, n.attr(name), err)
	}
	return v
}

// find returns the descendants for which ok is true, in document order.
func (n node) find(ok func(node) bool) []node {
	var out []node
	for _, c := range n.Nodes {
		if ok(c) {
			out = append(out, c)
		}
		out = append(out, c.find(ok)...)
	}
	return out
}

func parseSVG(t *testing.T, s string) node {
	t.Helper()
	var n node
	if err := xml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("chart is not well-formed SVG: %v\n%s", err, s)
	}
	return n
}

func testHistory(now time.Time) History {
	h := History{Since: now.Add(-chartSpan), QuotaPerMinute: 600}
	base := now.Add(-30 * time.Minute).Truncate(time.Minute)
	for i := range 20 {
		h.Minutes = append(h.Minutes, state.HistoryPoint{Minute: base.Add(time.Duration(i) * time.Minute), APICalls: int64(100 + 10*i), DeadLetters: i / 5, Conflicts: i / 10})
	}
	h.Minutes[7].APICalls = 580
	h.Passes = []Run{
		{ID: 3, Run: state.Run{Connector: "crm", Kind: "run", StartedAt: base, FinishedAt: base.Add(time.Minute), Created: 300, Updated: 20, Failed: 5}},
		{ID: 4, Run: state.Run{Connector: "crm<&>", Kind: "resync", StartedAt: base.Add(10 * time.Minute), FinishedAt: base.Add(11 * time.Minute), Updated: 150, Deleted: 50}},
	}
	return h
}

func TestAPICallsChart(t *testing.T) {
	now := time.Now()
	h := testHistory(now)
	svg := parseSVG(t, string(apiCallsChart(h, now)))
	label := svg.attr("aria-label")
	for _, want := range []string{"peak 580", "quota 600 per minute", "4,310 calls"} {
		if !strings.Contains(label, want) {
			t.Errorf("aria-label %q lacks %q", label, want)
		}
	}
	quota := svg.find(func(n node) bool { return n.attr("class") == "quota" })
	if len(quota) != 1 {
		t.Fatalf("%d quota lines, want 1", len(quota))
	}
	// The axis tops at 600 (the quota, a round figure already): the quota
	// line is at the top of the plot.
	if y, want := quota[0].num(t, "y1"), float64(padT); math.Abs(y-want) > 0.1 {
		t.Errorf("quota line at y=%.1f, want %.1f", y, want)
	}
	bars := svg.find(func(n node) bool { return n.attr("class") == "calls" })
	if len(bars) != 1 || strings.Count(bars[0].attr("d"), "M") != 20 {
		t.Errorf("want one path of 20 bars, got %d paths", len(bars))
	}
}

func TestPassesChart(t *testing.T) {
	h := testHistory(time.Now())
	out := string(passesChart(h))
	if strings.Contains(out, "crm<&>") {
		t.Fatal("a connector name went into the SVG unescaped")
	}
	svg := parseSVG(t, out)
	passes := svg.find(func(n node) bool { return n.attr("class") == "pass" })
	if len(passes) != 2 || passes[0].attr("id") != "pass-3" {
		t.Fatalf("pass groups %v, want pass-3 and pass-4", passes)
	}
	title := passes[0].find(func(n node) bool { return n.XMLName.Local == "title" })[0].Text
	if !strings.Contains(title, "crm run at") || !strings.Contains(title, "300 created, 20 updated, 0 adopted, 0 deleted, 5 failed") {
		t.Errorf("title %q", title)
	}
	// The tallest pass (325 writes) sets the axis at 400: its created
	// segment is 300/400 of the plot's height.
	rects := passes[0].find(func(n node) bool { return n.attr("class") == "created" })
	if len(rects) != 1 {
		t.Fatalf("%d created segments", len(rects))
	}
	if got, want := rects[0].num(t, "height"), 300.0/400*plotH; math.Abs(got-want) > 0.1 {
		t.Errorf("created segment %.1f high, want %.1f", got, want)
	}
	if d := passes[1].find(func(n node) bool { return n.attr("class") == "deleted" }); len(d) != 1 || math.Abs(d[0].num(t, "height")-50.0/400*plotH) > 0.1 {
		t.Errorf("deleted segment of the resync: %v", d)
	}
}

func TestProblemsChart(t *testing.T) {
	now := time.Now()
	h := testHistory(now)
	// A minute of calls only (no sample of the totals) leaves the lines
	// at their level instead of dropping them to zero.
	last := h.Minutes[len(h.Minutes)-1]
	h.Minutes = append(h.Minutes, state.HistoryPoint{Minute: last.Minute.Add(time.Minute), APICalls: 9, NoTotals: true})
	svg := parseSVG(t, string(problemsChart(h, now)))
	if l := svg.attr("aria-label"); !strings.Contains(l, "now 3 dead letters, 1 conflicts") {
		t.Errorf("aria-label %q", l)
	}
	for _, class := range []string{"deadletters", "conflicts"} {
		lines := svg.find(func(n node) bool { return n.attr("class") == class })
		if len(lines) != 1 {
			t.Fatalf("%d %s lines", len(lines), class)
		}
		// A step line: two points per minute but the first, and one at now.
		if n := len(strings.Fields(lines[0].attr("points"))); n != 2*20 {
			t.Errorf("%s line has %d points, want 40", class, n)
		}
	}
}

func TestChartsWithoutData(t *testing.T) {
	now := time.Now()
	h := History{Since: now.Add(-chartSpan), QuotaPerMinute: 600}
	for name, c := range map[string]string{
		"calls": string(apiCallsChart(h, now)), "passes": string(passesChart(h)), "problems": string(problemsChart(h, now)),
	} {
		parseSVG(t, c)
		if strings.Contains(c, "NaN") || strings.Contains(c, "Inf") {
			t.Errorf("%s chart without data holds NaN or Inf:\n%s", name, c)
		}
	}
	if !strings.Contains(string(passesChart(h)), "no pass finished yet") {
		t.Error("the empty passes chart does not say so")
	}
}
