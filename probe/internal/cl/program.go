package cl

import (
	"fmt"
	"strings"
)

// Program is a built OpenCL program.
type Program struct {
	ctx *Context
	id  uintptr
}

// CreateProgram is clCreateProgramWithSource: the program is not built yet.
func (c *Context) CreateProgram(source string) (*Program, error) {
	var status int32
	id := clCreateProgramWithSource(c.lib.fn.createProgramWithSource, c.id, source, &status)
	if err := check(status, "clCreateProgramWithSource"); err != nil {
		return nil, err
	}
	return &Program{ctx: c, id: id}, nil
}

// Build compiles the program for every device of its context; a failed build returns the build log.
func (p *Program) Build(options string) error {
	c := p.ctx
	if err := check(clBuildProgram(c.lib.fn.buildProgram, p.id, options), "clBuildProgram"); err != nil {
		var logs []string
		for _, d := range c.Devices {
			if b, e := queryInfo("clGetProgramBuildInfo", info2Of(c.lib.fn.getProgramBuildInfo, PROGRAM_BUILD_LOG, p.id, d.id)); e == nil {
				if s := cString(b); s != "" {
					logs = append(logs, s)
				}
			}
		}
		return fmt.Errorf("%w: %s", err, strings.Join(logs, "; "))
	}
	return nil
}

// BuildProgram creates and builds a program from source for every device of the context.
func (c *Context) BuildProgram(source, options string) (*Program, error) {
	p, err := c.CreateProgram(source)
	if err != nil {
		return nil, err
	}
	if err := p.Build(options); err != nil {
		p.Release()
		return nil, err
	}
	return p, nil
}

// Release releases the program.
func (p *Program) Release() { call(p.ctx.lib.fn.releaseProgram, p.id) }

// Kernel is one kernel of a program. Its arguments pass through its context's call block: like the context,
// it is not safe for concurrent use.
type Kernel struct {
	lib *Library
	id  uintptr
	hot *pinnedBlock // the context's
}

// Kernel creates the kernel named name.
func (p *Program) Kernel(name string) (*Kernel, error) {
	var status int32
	id := clCreateKernel(p.ctx.lib.fn.createKernel, p.id, name, &status)
	if err := check(status, "clCreateKernel("+name+")"); err != nil {
		return nil, err
	}
	return &Kernel{lib: p.ctx.lib, id: id, hot: p.ctx.hot}, nil
}

// SetMem sets argument i to a buffer. It allocates nothing.
func (k *Kernel) SetMem(i int, m Mem) error {
	h := k.hot
	h.mems[0] = m
	h.args[0], h.args[1], h.args[2], h.args[3] = k.id, uintptr(i), memArgSize, h.memsAddr
	return check(int32(h.call(k.lib.fn.setKernelArg, 4)), "clSetKernelArg")
}

// SetUint32 sets argument i to a 32-bit value (uint or int in OpenCL C). It allocates nothing.
func (k *Kernel) SetUint32(i int, v uint32) error {
	h := k.hot
	h.u32 = v
	h.args[0], h.args[1], h.args[2], h.args[3] = k.id, uintptr(i), uint32ArgSize, h.u32Addr
	return check(int32(h.call(k.lib.fn.setKernelArg, 4)), "clSetKernelArg")
}
