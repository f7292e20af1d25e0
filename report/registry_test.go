package report

import (
	"slices"
	"testing"
)

// TestTheRegistryHasOneRendererPerKindAndFormat: a kind and a format have at most one registration (a second
// would never be reached), each registration names a listed format, each format renders some kind, each
// kind has a JSON form, and each kind's documents are of one Go type, told apart from every other kind's.
func TestTheRegistryHasOneRendererPerKindAndFormat(t *testing.T) {
	seen := map[[2]any]bool{}
	types := map[Kind]any{}
	for _, r := range renderers {
		key := [2]any{r.kind, r.format}
		if seen[key] {
			t.Errorf("kind %d has two %s renderers", r.kind, r.format)
		}
		seen[key] = true
		if !slices.ContainsFunc(formats, func(f Format) bool { return f.Name == r.format }) {
			t.Errorf("kind %d registers format %q, which formats does not list", r.kind, r.format)
		}
		if t0, ok := types[r.kind]; ok && t0 != r.doc {
			t.Errorf("kind %d takes both %v and %v", r.kind, t0, r.doc)
		}
		types[r.kind] = r.doc
	}
	for _, f := range formats {
		if !slices.ContainsFunc(renderers, func(r registration) bool { return r.format == f.Name }) {
			t.Errorf("format %s renders no kind", f.Name)
		}
	}
	owner := map[any]Kind{}
	for k := KindRun; k <= KindRemedy; k++ {
		if find(k, "json") == nil {
			t.Errorf("kind %d has no json renderer", k)
		}
		if k2, ok := owner[types[k]]; ok {
			t.Errorf("kinds %d and %d take the same type %v", k2, k, types[k])
		}
		owner[types[k]] = k
	}
}
