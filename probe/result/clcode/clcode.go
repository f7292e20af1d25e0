// Package clcode names OpenCL status codes: a leaf that the binding (probe/internal/cl) and the result model
// (probe/result) both import, so that neither imports the other for a table of names.
package clcode

import (
	"fmt"
	"maps"
)

// Name is the standard name of an OpenCL status code, for every code of the OpenCL 3.0 headers (cl.h and
// cl_ext.h); an unknown code gets a name that still shows the number: CL_UNKNOWN_ERROR_-9999.
func Name(code int32) string {
	if n, ok := names[code]; ok {
		return n
	}
	return fmt.Sprintf("CL_UNKNOWN_ERROR_%d", code)
}

// Names returns every code with a name (a copy).
func Names() map[int32]string { return maps.Clone(names) }
