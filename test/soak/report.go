package soak

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// line is one line of a timeline.
type line struct {
	at   time.Time
	text string
}

// report formats the summary: the counts, the findings by mechanism, the
// first Show findings with the timeline of their contact, and syncd's
// writes after the edits stopped.
func (w *world) report(s Summary, final Final) string {
	var b strings.Builder
	o, r := s.Options, s.Result
	count := map[string]int{}
	for _, e := range s.Edits {
		count[e.Side+" "+e.Op]++
	}
	fmt.Fprintf(&b, "soak, changes: %s, seed %d: %v of edits at %.1f/s (both sides), %.0f%% API faults, SIGKILL about every %v, %d rows at the start\n",
		o.Mode, o.Seed, o.Duration, o.Rate, 100*o.Faults, o.KillEvery, o.Rows)
	fmt.Fprintf(&b, "acknowledged: %d, %.1f/s (table: %d edits, %d creates, %d deletes; app: %d edits, %d creates, %d deletes; %d initial rows)\n",
		len(s.Edits)-o.Rows, float64(len(s.Edits)-o.Rows)/o.Duration.Seconds(), count["table edit"], count["table create"]-o.Rows, count["table delete"], count["app edit"], count["app create"], count["app delete"], o.Rows)
	fmt.Fprintf(&b, "syncd SIGKILLed %d times; API calls %v at %.0f/s; faults injected: %v\n", s.Kills, s.Calls, o.APIRate, s.Faults)
	fmt.Fprintf(&b, "drain: the last write came %v after the edits stopped (%d workspace writes, %d table writes after the stop)\n",
		s.Drain.Round(time.Millisecond), s.LateWS, s.LateTable)
	fmt.Fprintf(&b, "idle writes in the %v quiet window after the drain: workspace %d, table %d\n", o.Quiet, s.IdleWS, s.IdleTable)
	fmt.Fprintf(&b, "sides agree: %v (%d disagreements); duplicates: %d\n", len(s.Agreement) == 0, len(s.Agreement), len(r.Duplicates))
	fmt.Fprintf(&b, "fields checked: %d: survived %d, true races (other side within %v) %d, journaled %d, LOST %d\n",
		r.Fields, r.Survived, o.Race, r.Races, r.Journaled, r.Lost)
	fmt.Fprintf(&b, "edits after a delete on the other side: within the race window %d, applied %d, journaled %d, DROPPED without a journal entry %d\n",
		r.AfterDelete.Races, r.AfterDelete.Applied, r.AfterDelete.Journaled, r.AfterDelete.Dropped)
	dead := map[string]int{}
	for _, d := range s.DeadLetters {
		dead[d.Operation]++
	}
	fmt.Fprintf(&b, "conflict journal: %d entries; dead letters: %d %v\n", len(s.Journal), len(s.DeadLetters), dead)
	if len(r.Findings) > 0 {
		mech := map[string]int{}
		for _, f := range r.Findings {
			mech[f.Mechanism()]++
		}
		var names []string
		for m := range mech {
			names = append(names, m)
		}
		sort.Slice(names, func(i, j int) bool { return mech[names[i]] > mech[names[j]] })
		b.WriteString("\nfindings by shape:\n")
		for _, m := range names {
			fmt.Fprintf(&b, "  %5d  %s\n", mech[m], m)
		}
	}
	for _, p := range first(s.Agreement, 20) {
		fmt.Fprintf(&b, "disagree: %s\n", p)
	}
	for _, d := range first(r.Duplicates, 20) {
		fmt.Fprintf(&b, "duplicate: %s\n", d)
	}
	for i, f := range first(r.Findings, o.Show) {
		fmt.Fprintf(&b, "\n--- finding %d of %d: %s: %s\n", i+1, len(r.Findings), f.Kind, f.Mechanism())
		w.explain(&b, s, f, final)
	}
	w.lateWrites(&b, s)
	return b.String()
}

// explain writes a finding's timeline: the contact's edits, syncd's
// kills, syncd's writes and the deliveries of its contact, the row's
// audit, the journal's entries.
func (w *world) explain(b *strings.Builder, s Summary, f Finding, final Final) {
	if f.Kind == KindDisagree || f.Kind == KindDuplicate {
		fmt.Fprintf(b, "%s: live rows %s, contacts %s\n", f.Key, f.Got[Table], f.Got[App])
	} else if f.Field != "" {
		fmt.Fprintf(b, "%s %s: last edit %s (%s) %s; sides hold %v", f.Key, f.Field, f.Edit.Side, f.Edit.Values[f.Field], w.log.Stamp(f.Edit.At), f.Got)
		if f.Winner != nil {
			fmt.Fprintf(b, ", from the %s's %s %s (%.1fs before)", f.Winner.Side, f.Winner.Op, w.log.Stamp(f.Winner.At), f.Edit.At.Sub(f.Winner.At).Seconds())
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(b, "%s: %s edit %v %s, %.1fs after the %s's delete %s; gone from both sides, no journal entry\n", f.Key, f.Edit.Side, f.Edit.Values,
			w.log.Stamp(f.Edit.At), f.Edit.At.Sub(f.Delete.At).Seconds(), f.Delete.Side, w.log.Stamp(f.Delete.At))
	}
	// To the drain's end: a late write may be what lost it.
	from, to := f.Edit.At.Add(-60*time.Second), s.Stopped.Add(s.Drain+time.Second)
	if f.Winner != nil && f.Winner.At.Before(from) {
		from = f.Winner.At.Add(-2 * time.Second)
	}
	if f.Delete != nil && f.Delete.At.Before(from) {
		from = f.Delete.At.Add(-2 * time.Second)
	}
	var lines []line
	rows, contacts := map[int64]bool{}, map[string]bool{}
	for _, e := range s.Edits {
		if e.Key != f.Key {
			continue
		}
		if e.Row != 0 {
			rows[e.Row] = true
		}
		if e.Contact != "" {
			contacts[e.Contact] = true
		}
		lines = append(lines, line{e.At, "edit   " + w.log.FormatEdit(e)})
	}
	for _, id := range final.RowIDs[f.Key] {
		rows[id] = true
	}
	for _, id := range final.ContactIDs[f.Key] {
		contacts[id] = true
	}
	for _, ev := range w.log.Events() {
		lines = append(lines, line{ev.At, "event  " + w.log.Stamp(ev.At) + " " + ev.What})
	}
	for _, c := range w.wire.Calls(from) {
		if !contacts[c.Contact] {
			continue
		}
		if c.Kind == "api" {
			text := fmt.Sprintf("api    %s syncd %s %s -> %d %s %s", w.log.Stamp(c.At), c.Method, c.Path, c.Status, c.Fault, c.Body)
			if c.Before != nil {
				text += fmt.Sprintf(" (the contact held %v)", c.Before)
			}
			lines = append(lines, line{c.At, text})
		} else {
			lines = append(lines, line{c.At, fmt.Sprintf("hook   %s delivery %s %s %v -> %d", w.log.Stamp(c.At), c.Method, c.Path, c.Values, c.Status)})
		}
	}
	for id := range rows {
		lines = append(lines, w.audit(id)...)
	}
	for _, c := range s.Journal {
		if rows[atoi(c.ExternalID)] || contacts[c.ContactID] {
			lines = append(lines, line{c.At, fmt.Sprintf("journal %s winner %s workspace %v source %v", w.log.Stamp(c.At), c.Winner, c.Workspace, c.Source)})
		}
	}
	for _, d := range s.DeadLetters {
		if rows[atoi(d.Key)] || contacts[d.Key] {
			lines = append(lines, line{d.CreatedAt, fmt.Sprintf("dead   %s dead letter %s %s: %s (attempts %d, last %s)", w.log.Stamp(d.CreatedAt), d.Operation, d.Key, d.Reason, d.Attempts, w.log.Stamp(d.UpdatedAt))})
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at.Before(lines[j].at) })
	n := 0
	for _, l := range lines {
		if l.at.Before(from) || l.at.After(to) {
			continue
		}
		if n++; n > 150 {
			b.WriteString("  ...\n")
			break
		}
		fmt.Fprintf(b, "  %s\n", l.text)
	}
}

// audit returns the table's audit of a row as timeline lines.
func (w *world) audit(id int64) []line {
	if w.table.Pool == nil {
		return nil // a MariaDB table keeps no audit: the edit log tells the table's edits
	}
	rs, err := w.table.Pool.Query(w.ctx, fmt.Sprintf(`SELECT extract(epoch FROM at)::float8, who, op, coalesce(old::text, '{}'), new::text
		FROM %s WHERE row_id = $1 ORDER BY seq`, w.table.Audit), id)
	if err != nil {
		return []line{{time.Time{}, fmt.Sprintf("audit of row %d: %v", id, err)}}
	}
	defer rs.Close()
	var out []line
	for rs.Next() {
		var epoch float64
		var who, op, old, new string
		if err := rs.Scan(&epoch, &who, &op, &old, &new); err != nil {
			break
		}
		at := time.Unix(0, int64(epoch*1e9))
		out = append(out, line{at, fmt.Sprintf("row    %s %s %s row %d %s", w.log.Stamp(at), who, op, id, rowChange(old, new))})
	}
	return out
}

// rowChange names the columns an audited write changed.
func rowChange(old, new string) string {
	var o, n map[string]any
	_ = json.Unmarshal([]byte(old), &o)
	_ = json.Unmarshal([]byte(new), &n)
	var parts []string
	for _, c := range []string{"first_name", "last_name", "company", "email", "deleted_at"} {
		if fmt.Sprint(o[c]) != fmt.Sprint(n[c]) {
			parts = append(parts, fmt.Sprintf("%s=%v", c, n[c]))
		}
	}
	if len(parts) == 0 {
		return "(no synced column changed)"
	}
	return strings.Join(parts, " ")
}

// lateWrites lists syncd's writes after the edits stopped, each value
// traced to the edit that made it: a table edit's value reaching the
// workspace late is a late drain; an app edit's value written back to
// the workspace is an echo.
func (w *world) lateWrites(b *strings.Builder, s Summary) {
	byValue := map[string]Edit{}
	for _, e := range s.Edits {
		for _, v := range e.Values {
			byValue[v] = e
		}
	}
	var lines []string
	kinds := map[string]int{}
	for _, c := range w.wire.Calls(s.Stopped) {
		if c.Kind != "api" {
			continue
		}
		var origins []string
		var fromApp, fromTable, noop, over int
		for _, f := range Fields {
			v, ok := c.Values[f]
			if !ok {
				continue
			}
			e, ok := byValue[v]
			held := ""
			if b, known := c.Before[f]; known && b == v {
				held = " (the contact held it already: a no-op)"
				noop++
			} else if known {
				if o, ok := byValue[b]; ok && o.At.After(e.At) {
					held = fmt.Sprintf(" OVER the newer %s %s %s of %.1fs before the stop", o.Side, o.Op, b, s.Stopped.Sub(o.At).Seconds())
					over++
				}
			}
			switch {
			case !ok:
				origins = append(origins, fmt.Sprintf("%s=%s (no edit made it)", f, v))
			case e.Side == Table:
				fromTable++
				origins = append(origins, fmt.Sprintf("%s=%s late drain of the table's %s %.1fs before the stop%s", f, v, e.Op, s.Stopped.Sub(e.At).Seconds(), held))
			default:
				fromApp++
				origins = append(origins, fmt.Sprintf("%s=%s ECHO of the app's %s %.1fs before the stop%s", f, v, e.Op, s.Stopped.Sub(e.At).Seconds(), held))
			}
		}
		switch {
		case c.Method == "DELETE":
			kinds["deletes"]++
		case fromApp > 0 && fromTable == 0:
			kinds["echoes (app values written back to the app)"]++
		case fromTable > 0 && fromApp == 0:
			kinds["late drain (table values)"]++
		case fromTable > 0:
			kinds["both (table and app values)"]++
		default:
			kinds["no synced field (link writes)"]++
		}
		if noop > 0 {
			kinds["carrying a value the contact held already"]++
		}
		if over > 0 {
			kinds["writing an older value OVER a newer edit"]++
		}
		if len(origins) == 0 {
			origins = append(origins, c.Body)
		}
		lines = append(lines, fmt.Sprintf("  +%.3fs %s %s -> %d: %s", c.At.Sub(s.Stopped).Seconds(), c.Method, c.Path, c.Status, strings.Join(origins, "; ")))
	}
	fmt.Fprintf(b, "\nworkspace writes after the edits stopped: %d: %v\n", len(lines), kinds)
	for _, l := range first(lines, 40) {
		b.WriteString(l + "\n")
	}
}

func atoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
