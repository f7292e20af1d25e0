package clcode_test

import (
	"maps"
	"regexp"
	"testing"

	"github.com/clmemprobe/clmemprobe/probe/result"
	"github.com/clmemprobe/clmemprobe/probe/result/clcode"
)

// Every code of the OpenCL 3.0 headers (cl.h and cl_ext.h error codes) has its standard name, an unknown
// code one that shows its number, and the result model names codes as this package does.
func TestNames(t *testing.T) {
	valid := regexp.MustCompile(`^CL_[A-Z0-9_]+$`)
	names := clcode.Names()
	for code := int32(0); code >= -72; code-- {
		if _, ok := names[code]; !ok && (code >= -19 || code <= -30) {
			t.Errorf("code %d has no name", code)
		}
	}
	for code, name := range names {
		if !valid.MatchString(name) || clcode.Name(code) != name || result.CodeName(code) != name {
			t.Errorf("code %d: %q, %q, %q", code, name, clcode.Name(code), result.CodeName(code))
		}
	}
	if got := clcode.Name(-9999); got != "CL_UNKNOWN_ERROR_-9999" {
		t.Errorf("unknown code: %q", got)
	}
	if !maps.Equal(result.CodeNames(), names) {
		t.Error("the result model's names differ")
	}
	names[0] = "changed"
	if clcode.Name(0) != "CL_SUCCESS" {
		t.Error("Names gave the table itself, not a copy")
	}
}
