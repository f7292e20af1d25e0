package units

import (
	"strings"
	"testing"
)

// An unknown unit's error lists exactly the units ParseSize takes: each listed one parses, and each one
// that parses (every key of the table, K and Ki as well as KiB) is listed.
func TestUnknownUnitListsWhatParses(t *testing.T) {
	_, err := ParseSize("1e3")
	if err == nil {
		t.Fatal("1e3 parsed")
	}
	_, list, _ := strings.Cut(err.Error(), "(units: ")
	listed := map[string]bool{}
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '(' || r == ')' }) {
		if w == "" || strings.ToLower(w) != w || strings.ContainsAny(w, "0123456789") {
			if _, err := ParseSize("1" + w); err == nil {
				listed[strings.ToLower(w)] = true
			}
		}
	}
	for unit := range sizeUnits {
		if unit != "" && !listed[unit] {
			t.Errorf("ParseSize takes %q, which the error does not list: %v", unit, err)
		}
	}
	for _, w := range []string{"K", "M", "G", "T", "Ki", "KiB", "KB"} {
		if !strings.Contains(list, w+",") && !strings.Contains(list, w+" ") && !strings.Contains(list, w+";") {
			t.Errorf("%q is not listed: %v", w, err)
		}
	}
}
