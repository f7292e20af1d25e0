package nvml

import (
	"errors"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// Error strings work without the library, and a missing library is a value callers can test for.
func TestReturnIsAnErrorWithoutTheLibrary(t *testing.T) {
	if got := ErrorLibraryNotFound.Error(); got != "NVML_ERROR_LIBRARY_NOT_FOUND (12)" {
		t.Errorf("ErrorLibraryNotFound reads %q", got)
	}
	if got := Return(4242).Error(); !strings.Contains(got, "4242") {
		t.Errorf("an unknown code reads %q", got)
	}
	if _, err := purego.Dlopen(Library, purego.RTLD_NOW); err == nil {
		t.Skip("NVML is installed here: nothing to test about its absence")
	}
	_, err := Open()
	if !errors.Is(err, ErrorLibraryNotFound) || errors.Is(err, ErrorNotFound) {
		t.Fatalf("Open without NVML: %v, want an error that is ErrorLibraryNotFound", err)
	}
}
