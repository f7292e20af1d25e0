// Package symbolize names the frames of the trace ledger's call sites, the way a user reads a stack: the
// function an address is in (the object's ELF symbol tables, C++ names demangled), and its source file and
// line where the object carries DWARF line tables. It reads the object files themselves, after the program
// has ended: the program needs no -rdynamic and the user installs nothing. An object with neither a symbol
// for the address nor debug information (a stripped extension module) still has its unwind table, which
// gives the start of the function the address is in: the frame is named by that, not by a guess.
package symbolize

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"syscall"

	"github.com/ianlancetaylor/demangle"
)

// maxObjectBytes bounds the object files read: a path the traced program wrote names what is read, and a
// file larger than any shared object is not one.
const maxObjectBytes = 4 << 30

// Frame is what is known of one return address. Where the compiler inlined the call's function into
// others, Function, File and Line are the innermost (the function the call is written in) and InlinedInto
// the functions it was inlined into, innermost first, the last being the symbol's.
type Frame struct {
	Function string // "" where neither a symbol nor the unwind table names it
	// Start is the function's start (a file address) where only the unwind table knew it: Function is then
	// "" and the frame is named by its object and this address.
	Start       uint64
	File        string
	Line        int
	InlinedInto []Call
}

// Call is a function and the line in it of the call (here: of the inlined function's body).
type Call struct {
	Function, File string
	Line           int
}

// Objects reads object files once each.
type Objects struct {
	files map[string]*object
}

// New returns an empty cache of object files.
func New() *Objects { return &Objects{files: map[string]*object{}} }

type symbol struct {
	start, end uint64
	name       string
}

type object struct {
	err     error
	buildID string
	syms    []symbol
	starts  []uint64 // function starts from .eh_frame_hdr, sorted
	units   []unit   // compile units with their address ranges, where the object has DWARF
	dw      *dwarf.Data
}

type unit struct {
	ranges  [][2]uint64
	entry   *dwarf.Entry
	rows    []row // its line table, read on first use
	inlines []inline
	read    bool
}

// inline is one inlined call in a unit: where its body's code is, how deep it is nested, what was inlined,
// and where it was called from.
type inline struct {
	ranges   [][2]uint64
	depth    int
	name     string
	callFile string
	callLine int
}

// row is a line table row: the rows from it up to the next one are its file and line, unless it ends a
// sequence.
type row struct {
	addr uint64
	file string
	line int
	end  bool
}

// BuildID is the object's GNU build ID in hex, "" where it has none or cannot be read.
func (o *Objects) BuildID(path string) string { return o.load(path).buildID }

// Frame names the return address ret (a file address: the runtime address less the object's load bias).
// The call is the instruction before it, so ret-1 is looked up.
func (o *Objects) Frame(path string, ret uint64) (f Frame) {
	obj := o.load(path)
	if obj.err != nil || ret == 0 {
		return Frame{}
	}
	// The tables are read as they are needed (a unit's lines and inlined calls): a malformed one that
	// debug/dwarf panics on leaves the frame with what was read before it, and the object without more.
	defer func() {
		if r := recover(); r != nil {
			obj.err = fmt.Errorf("reading %s: %v", path, r)
			f = Frame{Function: f.Function, Start: f.Start}
		}
	}()
	pc := ret - 1
	if s, ok := obj.symbol(pc); ok {
		f.Function = unclone(demangle.Filter(s.name, demangle.NoParams))
	} else if start, ok := obj.start(pc); ok {
		f.Start = start
	}
	f.File, f.Line = obj.line(pc)
	if chain := obj.inlinedAt(pc); len(chain) > 0 && f.Function != "" {
		// chain runs outermost first: the symbol's function called chain[0], which called chain[1]...
		outer := f.Function
		f.Function = unclone(demangle.Filter(chain[len(chain)-1].name, demangle.NoParams))
		for i := len(chain) - 1; i >= 0; i-- {
			caller := outer
			if i > 0 {
				caller = unclone(demangle.Filter(chain[i-1].name, demangle.NoParams))
			}
			f.InlinedInto = append(f.InlinedInto, Call{Function: caller, File: chain[i].callFile, Line: chain[i].callLine})
		}
	}
	return f
}

// clone is the suffix GCC gives a function's specialised copies (alloc.isra.0, alloc.constprop.0.cold): the
// user wrote alloc.
var clone = regexp.MustCompile(`(\.(isra|constprop|part|cold|lto_priv|localalias)(\.[0-9]+)?)+$`)

func unclone(name string) string { return clone.ReplaceAllString(name, "") }

func (o *Objects) load(path string) *object {
	if obj, ok := o.files[path]; ok {
		return obj
	}
	obj := open(path)
	o.files[path] = obj
	return obj
}

// open reads an object's tables; a file debug/elf cannot read, or that it panics on (a hostile file), is an
// object without names.
func open(path string) (obj *object) {
	obj = &object{}
	defer func() {
		if r := recover(); r != nil {
			obj = &object{err: fmt.Errorf("reading %s: %v", path, r)}
		}
	}()
	if !filepath.IsAbs(path) {
		return &object{err: fmt.Errorf("%s: not an absolute path", path)}
	}
	// The path came from the traced program: opened without waiting (a FIFO put there would block an open
	// for ever), and checked on the descriptor opened, not on the name, which may change in between.
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return &object{err: err}
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxObjectBytes {
		return &object{err: fmt.Errorf("%s: not an object file to read", path)}
	}
	f, err := elf.NewFile(file)
	if err != nil {
		return &object{err: err}
	}
	obj.buildID = buildID(f)
	obj.syms = symbols(f)
	obj.starts = functionStarts(f)
	if d, err := f.DWARF(); err == nil {
		obj.dw, obj.units = d, units(d)
	}
	return obj
}

// symbols are the object's functions with a size, from .symtab and .dynsym, sorted by start.
func symbols(f *elf.File) []symbol {
	var out []symbol
	for _, read := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, _ := read()
		for _, s := range syms {
			if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && s.Section != elf.SHN_UNDEF && s.Name != "" {
				out = append(out, symbol{s.Value, s.Value + s.Size, s.Name})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

func (o *object) symbol(pc uint64) (symbol, bool) {
	i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].start > pc })
	for j := i - 1; j >= 0 && j >= i-8; j-- { // nested or aliased symbols: the nearest one that covers pc
		if s := o.syms[j]; pc < s.end {
			return s, true
		}
	}
	return symbol{}, false
}

func (o *object) start(pc uint64) (uint64, bool) {
	i := sort.Search(len(o.starts), func(i int) bool { return o.starts[i] > pc })
	if i == 0 {
		return 0, false
	}
	return o.starts[i-1], true
}

func buildID(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		b := make([]byte, min(p.Filesz, 1<<16))
		if _, err := p.ReadAt(b, 0); err != nil {
			continue
		}
		for len(b) >= 12 {
			nameLen, descLen, typ := f.ByteOrder.Uint32(b), f.ByteOrder.Uint32(b[4:]), f.ByteOrder.Uint32(b[8:])
			name, desc := align4(nameLen), align4(descLen)
			if uint64(len(b)) < 12+name+desc {
				break
			}
			if typ == 3 && bytes.Equal(b[12:12+uint64(nameLen)], []byte("GNU\x00")) { // NT_GNU_BUILD_ID
				return hex.EncodeToString(b[12+name : 12+name+uint64(descLen)])
			}
			b = b[12+name+desc:]
		}
	}
	return ""
}

func align4(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }

// functionStarts reads .eh_frame_hdr's search table: the start of every function the unwind table
// covers. Only the table encoding linkers write (data-relative signed 4-byte pairs) is read.
func functionStarts(f *elf.File) []uint64 {
	s := f.Section(".eh_frame_hdr")
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil
	}
	b, err := s.Data()
	const datarelSdata4, pcrelSdata4, udata4 = 0x3b, 0x1b, 0x03
	if err != nil || len(b) < 12 || b[0] != 1 || b[1] != pcrelSdata4 || b[2] != udata4 || b[3] != datarelSdata4 {
		return nil
	}
	n := uint64(binary.LittleEndian.Uint32(b[8:12]))
	if f.ByteOrder == binary.BigEndian {
		n = uint64(binary.BigEndian.Uint32(b[8:12]))
	}
	table := b[12:]
	if n > uint64(len(table))/8 {
		return nil
	}
	out := make([]uint64, 0, n)
	for i := uint64(0); i < n; i++ {
		loc := int32(f.ByteOrder.Uint32(table[8*i:]))
		out = append(out, uint64(int64(s.Addr)+int64(loc)))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// units lists the compile units and their address ranges.
func units(d *dwarf.Data) []unit {
	var out []unit
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return out
		}
		if e.Tag == dwarf.TagCompileUnit {
			if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
				out = append(out, unit{ranges: rs, entry: e})
			}
		}
		r.SkipChildren()
	}
}

// line is the source file and line of pc, where a compile unit's line table covers it. The rows are read
// in order (LineReader.SeekPC finds only the first sequence of a unit whose code is in several sections,
// such as main in .text.startup).
func (o *object) line(pc uint64) (string, int) {
	for i := range o.units {
		u := &o.units[i]
		if !covers(u.ranges, pc) {
			continue
		}
		o.read(u)
		for j := 0; j+1 < len(u.rows); j++ {
			if r := u.rows[j]; !r.end && r.addr <= pc && pc < u.rows[j+1].addr {
				return r.file, r.line
			}
		}
		return "", 0
	}
	return "", 0
}

// read reads a unit's line table and inlined calls, once.
func (o *object) read(u *unit) {
	if !u.read {
		u.rows, u.inlines, u.read = o.rows(u.entry), o.inlinesOf(u.entry), true
	}
}

// inlinedAt is the chain of inlined calls whose code holds pc, outermost first.
func (o *object) inlinedAt(pc uint64) []inline {
	for i := range o.units {
		u := &o.units[i]
		if !covers(u.ranges, pc) {
			continue
		}
		o.read(u)
		var chain []inline
		for _, in := range u.inlines {
			if covers(in.ranges, pc) {
				chain = append(chain[:min(len(chain), in.depth)], in)
			}
		}
		return chain
	}
	return nil
}

// inlinesOf lists a unit's inlined calls in the order of its tree, each with its nesting among them (0: in
// a function's own body).
func (o *object) inlinesOf(cu *dwarf.Entry) []inline {
	var files []*dwarf.LineFile
	if lr, err := o.dw.LineReader(cu); err == nil && lr != nil {
		files = lr.Files()
	}
	r := o.dw.Reader()
	r.Seek(cu.Offset)
	if _, err := r.Next(); err != nil { // the unit itself
		return nil
	}
	var out []inline
	var open []bool // per tree level below the unit: whether the entry that opened it is an inlined call
	for depth := 1; depth > 0; {
		e, err := r.Next()
		if err != nil || e == nil {
			return out
		}
		if e.Tag == 0 { // the end of a level
			depth--
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
			continue
		}
		isInline := e.Tag == dwarf.TagInlinedSubroutine
		if isInline {
			if rs, err := o.dw.Ranges(e); err == nil && len(rs) > 0 {
				nested := 0
				for _, b := range open {
					if b {
						nested++
					}
				}
				in := inline{ranges: rs, depth: nested, name: o.originName(e)}
				if idx, ok := e.Val(dwarf.AttrCallFile).(int64); ok && idx >= 0 && int(idx) < len(files) && files[idx] != nil {
					in.callFile = files[idx].Name
				}
				if line, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
					in.callLine = int(line)
				}
				out = append(out, in)
			}
		}
		if e.Children {
			depth++
			open = append(open, isInline)
		}
	}
	return out
}

// originName is the name of what an inlined call inlined: its abstract origin's (or that one's
// specification's) name.
func (o *object) originName(e *dwarf.Entry) string {
	for hops := 0; e != nil && hops < 4; hops++ {
		if name, ok := e.Val(dwarf.AttrName).(string); ok {
			return name
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			if off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				return ""
			}
		}
		r := o.dw.Reader()
		r.Seek(off)
		e, _ = r.Next()
	}
	return ""
}

func covers(ranges [][2]uint64, pc uint64) bool {
	for _, rg := range ranges {
		if rg[0] <= pc && pc < rg[1] {
			return true
		}
	}
	return false
}

func (o *object) rows(cu *dwarf.Entry) []row {
	lr, err := o.dw.LineReader(cu)
	if err != nil || lr == nil {
		return nil
	}
	var out []row
	var le dwarf.LineEntry
	for lr.Next(&le) == nil {
		r := row{addr: le.Address, line: le.Line, end: le.EndSequence}
		if le.File != nil {
			r.file = le.File.Name
		}
		out = append(out, r)
	}
	return out
}
