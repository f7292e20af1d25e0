package table

import (
	"fmt"
	"io"
	"strings"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/report/render"
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

func WritePresetsText(w io.Writer, l *PresetList, opts render.Options) error {
	st := render.Terminal(opts)
	// Each line wraps at the terminal's width, its continuation indented under its text; a variant, one
	// word the user copies, is never broken.
	for _, p := range l.Presets {
		fmt.Fprintln(w, wrapWords("", fmt.Sprintf("%s (%s): %s", p.Name, st.Text(p.Runtime), st.Text(p.Purpose)), st.Width))
		for _, v := range p.Variants {
			fmt.Fprintf(w, "    --variant %s\n", st.Text(VariantText(v)))
		}
		fmt.Fprintln(w, wrapWords("    source: ", st.Text(p.Source), st.Width))
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintln(w, wrapWords("", "Use one with --variant-preset NAME (repeatable); the runtime's own settings run too unless --no-default-variant.", st.Width))
	return err
}
