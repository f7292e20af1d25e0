package result

import "github.com/clmemprobe/clmemprobe/probe/result/clcode"

// CodeName is the standard name of an OpenCL status code, for every code of the OpenCL 3.0 headers (cl.h and
// cl_ext.h); an unknown code gets a name that still shows the number: CL_UNKNOWN_ERROR_-9999.
func CodeName(code int32) string { return clcode.Name(code) }

// CodeNames returns every code with a name (a copy).
func CodeNames() map[int32]string { return clcode.Names() }
