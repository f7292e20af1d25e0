package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/report/result"
)

// PresetList is what run --variant-preset list shows: each preset, its variants and its source.
type PresetList struct {
	Presets []PresetEntry `json:"presets"`
}

// PresetEntry is one preset of the list.
type PresetEntry struct {
	Name     string           `json:"name"`
	Runtime  string           `json:"runtime"`
	Purpose  string           `json:"purpose"`
	Variants []result.Variant `json:"variants"`
	Source   string           `json:"source"`
}

// VariantText writes a variant as run --variant takes it: NAME:KEY=VALUE,KEY=VALUE (keys in order).
func VariantText(v result.Variant) string {
	if len(v.Settings) == 0 {
		return v.Name
	}
	return v.Name + ":" + strings.Join(result.Assignments(v.Settings), ",")
}

func writePresetsText(w io.Writer, l *PresetList, opts Options) error {
	st := terminal(opts)
	for _, p := range l.Presets {
		fmt.Fprintf(w, "%s (%s): %s\n", p.Name, st.text(p.Runtime), st.text(p.Purpose))
		for _, v := range p.Variants {
			fmt.Fprintf(w, "    --variant %s\n", st.text(VariantText(v)))
		}
		fmt.Fprintf(w, "    source: %s\n\n", st.text(p.Source))
	}
	_, err := fmt.Fprintln(w, "Use one with --variant-preset NAME (repeatable); the runtime's own settings run too unless --no-default-variant.")
	return err
}
