package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
)

// The README's table of vendor flags is the tool's: every flag the findings can name is there, with its
// value, and every standard flag run --flags takes is named.
func TestREADMEListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(Root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, v := range result.VendorFlags {
		row := fmt.Sprintf("| `%#x` | `%s` | %s |", uint64(v.Value), v.C, v.Vendor)
		if !strings.Contains(readme, row) {
			t.Errorf("README has no row starting %q", row)
		}
	}
	for _, f := range result.StandardFlags {
		if !strings.Contains(readme, "`"+f.Name+"`") {
			t.Errorf("README does not name flag %s", f.Name)
		}
	}
}
