package sqlkit

import "testing"

func TestAssigns(t *testing.T) {
	tests := []struct {
		name, body, column string
		folds              bool
		want               bool
	}{
		{"plpgsql", "BEGIN NEW.modified_on := now(); RETURN NEW; END", "modified_on", true, true},
		{"mysql set", "SET NEW.changed = NOW(6)", "changed", false, true},
		{"quoted mixed case", `BEGIN new."LastChanged" := now(); RETURN new; END`, "LastChanged", true, true},
		{"unquoted mixed case folds", "BEGIN NEW.LastChanged := now(); RETURN NEW; END", "LastChanged", true, false},
		{"backticks", "SET NEW.`Modified At` = NOW()", "Modified At", false, true},
		{"compared, not assigned", "IF NEW.modified_on <> OLD.modified_on THEN RAISE; END IF", "modified_on", true, false},
		{"compared with =", "BEGIN IF NEW.modified_on = OLD.modified_on THEN RAISE EXCEPTION 'x'; END IF; RETURN NEW; END", "modified_on", true, false},
		{"set after a comparison", "BEGIN IF NEW.name <> OLD.name THEN NEW.modified_on = now(); END IF; RETURN NEW; END", "modified_on", true, true},
		{"second of a SET list", "SET NEW.a = 1, NEW.changed = NOW()", "changed", false, true},
		{"other column", "NEW.modified_on_by := current_user", "modified_on", true, false},
		{"read from OLD", "OLD.modified_on := now()", "modified_on", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Assigns(tt.body, tt.column, tt.folds); got != tt.want {
				t.Fatalf("Assigns(%q, %q) = %v, want %v", tt.body, tt.column, got, tt.want)
			}
		})
	}
}
