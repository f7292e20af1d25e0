package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
)

// LoadLean is Load for a caller that reads a run's figures and not its bulk (merge of a fleet): the same
// run, or the same error, as Load, except that what leanSkipped names is left empty (the samples among
// them), and a job without a fit (a result written before fits were judged) has the one JudgedFit gives
// from its samples. The file is read once and scanned once, every byte of it checked as Load checks it
// (JSON syntax, the type of every field, Check's rules for the samples too), and only the fields the run
// keeps are built; a file the scan cannot vouch for (one Load refuses, or anything unusual: a field named
// twice, a key that differs from a field's name only in case) is decoded again by Load's own decoder,
// which gives the answer.
func (l *Loader) LoadLean(path string) (*Run, error) {
	b, err := readFile(path, l.buf)
	if err != nil {
		return nil, err
	}
	l.buf = b[:0]
	if r, ok := decodeLean(b, path); ok {
		return r, nil
	}
	return decodeRun(b, path)
}

// leanSkipped are the fields LoadLean checks and does not keep, by the type that holds them: what Check,
// the stop cause a loader fills in and merge read is never among them (TestLeanDecodeAgreesWithLoad
// holds the two decodes to the same run without these fields). The samples are a third of a run.json.
var leanSkipped = map[reflect.Type][]string{
	reflect.TypeFor[Run]():         {"command", "verdict", "findings", "kernel_log"},
	reflect.TypeFor[Environment](): {"system", "platforms", "icd_status", "icd_files", "dri_devices"},
	reflect.TypeFor[Device]():      {"extensions"},
	reflect.TypeFor[JobResult]():   {"samples", "resources", "device_sizes", "worker_output", "notices", "limit_evidence"},
}

// errNotLean is why the lean scan gave up: the file goes to Load's decoder, which says what is wrong, if
// anything is.
var errNotLean = errors.New("not for the lean scan")

// leanField is one field of a struct as encoding/json decodes it.
type leanField struct {
	index []int // the field's index path: an embedded struct's fields are the holder's, as encoding/json reads them
	typ   reflect.Type
	skip  bool // checked, not kept
}

// leanStruct is how a struct's JSON object is decoded: its fields by exact name, and every name folded to
// lower case, as encoding/json also matches a key that differs only in case (the scan gives up on those).
type leanStruct struct {
	byName map[string]int
	fields []leanField
	folded map[string]bool
}

// leanStructs are the structs a run holds, built once from the types.
var leanStructs = sync.OnceValue(func() map[reflect.Type]*leanStruct {
	out := map[reflect.Type]*leanStruct{}
	addLeanStruct(out, reflect.TypeFor[Run]())
	// A run has no kind: a file that has one is another document, for Load's decoder to name.
	out[reflect.TypeFor[Run]()].folded["kind"] = true
	return out
})

// addLeanStruct adds t and every struct it reaches. A field of a kind the scan does not decode panics, so
// that a change to the model that needs it fails every test that loads a run.
func addLeanStruct(out map[reflect.Type]*leanStruct, t reflect.Type) {
	if out[t] != nil {
		return
	}
	s := &leanStruct{byName: map[string]int{}, folded: map[string]bool{}}
	out[t] = s
	addLeanFields(out, s, t, nil, leanSkipped[t])
	if len(s.fields) > 128 {
		panic(fmt.Sprintf("result: %s has more fields than the lean scan tracks", t))
	}
}

// addLeanFields adds the fields of t, at index path at in the struct s decodes, to s. The fields of an
// embedded struct without a JSON name of its own are s's own, as encoding/json decodes them; skipped names
// the fields of s that are checked and not kept.
func addLeanFields(out map[reflect.Type]*leanStruct, s *leanStruct, t reflect.Type, at []int, skipped []string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := cutTag(f.Tag.Get("json"))
		if !f.IsExported() || name == "-" {
			continue
		}
		index := append(slices.Clone(at), i)
		if f.Anonymous {
			if f.Type.Kind() != reflect.Struct || name != "" {
				panic(fmt.Sprintf("result: the lean scan does not decode the embedded %s in %s", f.Type, t))
			}
			addLeanFields(out, s, f.Type, index, skipped)
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.byName[name] = len(s.fields)
		s.folded[lowerASCII([]byte(name))] = true
		s.fields = append(s.fields, leanField{index: index, typ: f.Type, skip: hasName(skipped, name)})
		addLeanType(out, f.Type)
	}
}

// addLeanType adds the structs a field's type reaches.
func addLeanType(out map[reflect.Type]*leanStruct, t reflect.Type) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		addLeanType(out, t.Elem())
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic(fmt.Sprintf("result: the lean scan does not decode %s", t))
		}
		addLeanType(out, t.Elem())
	case reflect.Struct:
		addLeanStruct(out, t)
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
	default:
		panic(fmt.Sprintf("result: the lean scan does not decode %s", t))
	}
}

func cutTag(tag string) (name, rest string, ok bool) {
	for i := range len(tag) {
		if tag[i] == ',' {
			return tag[:i], tag[i+1:], true
		}
	}
	return tag, "", false
}

func hasName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// lowerASCII is b with A-Z made a-z: how a key is matched to a field whatever its case.
func lowerASCII(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return string(out)
}

// decodeLean is the lean scan of a whole file: the run, checked, or false where Load's decoder must say.
func decodeLean(b []byte, name string) (*Run, bool) {
	d := leanDecoder{b: b, structs: leanStructs()}
	var r Run
	if d.object(reflect.TypeFor[Run](), reflect.ValueOf(&r).Elem()) != nil {
		return nil, false
	}
	if d.ws(); d.i != len(d.b) || r.SchemaVersion != SchemaVersion || r.Tool.Name != "clmemprobe" {
		return nil, false
	}
	for i := range r.Jobs {
		if s := &r.Jobs[i]; s.Fit == nil { // written before fits were judged: the fit is its samples'
			var sp sampleSpan
			if i < len(d.spans) {
				sp = d.spans[i]
			}
			s.Fit = JudgeFit(sp.n, sp.lo, sp.hi, s.AllocationsOK)
		}
	}
	if _, err := checked(&r, name); err != nil {
		return nil, false
	}
	return &r, true
}

// leanDecoder scans one JSON document, decoding into the values it is given and checking the rest.
type leanDecoder struct {
	b       []byte
	i       int
	depth   int
	structs map[reflect.Type]*leanStruct
	sample  Sample // each sample is decoded into this one, for Check's rule, and not kept
	job     int    // the job whose samples are scanned
	spans   []sampleSpan
}

// sampleSpan is what JudgedFit reads of a job's samples: how many, and their lowest and highest index.
type sampleSpan struct {
	n      int
	lo, hi uint64
}

// maxLeanDepth is deeper than any run nests; a deeper file goes to Load's decoder (which allows 10,000).
const maxLeanDepth = 64

func (d *leanDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next is the next byte after blanks, 0 at the end.
func (d *leanDecoder) next() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes word (true, false, null) where it stands.
func (d *leanDecoder) literal(word string) error {
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return errNotLean
	}
	d.i += len(word)
	return nil
}

// value decodes the next value into v, of type t, or checks that it would decode where v is not valid.
func (d *leanDecoder) value(t reflect.Type, v reflect.Value) error {
	c := d.next()
	if c == 'n' { // null leaves every value as it is: zero, as nothing is decoded twice
		return d.literal("null")
	}
	switch t.Kind() {
	case reflect.String:
		return d.stringValue(v)
	case reflect.Bool:
		word := "false"
		if c == 't' {
			word = "true"
		}
		if d.literal(word) != nil {
			return errNotLean
		}
		if v.IsValid() {
			v.SetBool(c == 't')
		}
		return nil
	case reflect.Pointer:
		if !v.IsValid() {
			return d.value(t.Elem(), v)
		}
		p := reflect.New(t.Elem())
		if err := d.value(t.Elem(), p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Slice:
		return d.array(t, v)
	case reflect.Map:
		return d.mapValue(t, v)
	case reflect.Struct:
		return d.object(t, v)
	}
	return d.numberValue(t, v)
}

// stringValue decodes a string: as it stands where it is plain ASCII, by encoding/json otherwise (escapes,
// and invalid UTF-8, which it replaces).
func (d *leanDecoder) stringValue(v reflect.Value) error {
	start := d.i
	raw, plain, err := d.str()
	if err != nil || !v.IsValid() {
		return err
	}
	if plain {
		v.SetString(string(raw))
		return nil
	}
	var s string
	if json.Unmarshal(d.b[start:d.i], &s) != nil {
		return errNotLean
	}
	v.SetString(s)
	return nil
}

// str scans a string, the scanner at its opening quote: its bytes between the quotes, and whether they
// are plain ASCII without escapes. Control characters and malformed escapes are not JSON.
func (d *leanDecoder) str() (raw []byte, plain bool, err error) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false, errNotLean
	}
	d.i++
	start, plain := d.i, true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return d.b[start : d.i-1], plain, nil
		case c < 0x20:
			return nil, false, errNotLean
		case c == '\\':
			plain = false
			if err := d.escape(); err != nil {
				return nil, false, err
			}
			continue
		case c >= 0x80:
			plain = false
		}
		d.i++
	}
	return nil, false, errNotLean
}

// escape scans one escape, the scanner at its backslash.
func (d *leanDecoder) escape() error {
	if d.i+1 >= len(d.b) {
		return errNotLean
	}
	switch d.b[d.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		d.i += 2
		return nil
	case 'u':
		if d.i+6 > len(d.b) {
			return errNotLean
		}
		for _, h := range d.b[d.i+2 : d.i+6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return errNotLean
			}
		}
		d.i += 6
		return nil
	}
	return errNotLean
}

// number scans a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and says whether it is an
// integer as written (no fraction, no exponent).
func (d *leanDecoder) number() (lit []byte, integer bool, err error) {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.b) && d.b[d.i] == '0':
		d.i++
	case d.digits() == 0:
		return nil, false, errNotLean
	}
	integer = true
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return nil, false, errNotLean
		}
		integer = false
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, false, errNotLean
		}
		integer = false
	}
	return d.b[start:d.i], integer, nil
}

func (d *leanDecoder) digits() int {
	start := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// numberValue decodes a number into an integer or a float as encoding/json does: strconv's rules, and the
// field's size.
func (d *leanDecoder) numberValue(t reflect.Type, v reflect.Value) error {
	c := d.next()
	if c != '-' && (c < '0' || c > '9') {
		return errNotLean
	}
	lit, integer, err := d.number()
	if err != nil {
		return err
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := parseUint(lit, integer)
		if !ok || n > uint64(math.MaxUint64)>>(64-t.Bits()) {
			return errNotLean
		}
		if v.IsValid() {
			v.SetUint(n)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(lit), 10, 64)
		if err != nil || reflect.Zero(t).OverflowInt(n) {
			return errNotLean
		}
		if v.IsValid() {
			v.SetInt(n)
		}
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(string(lit), t.Bits())
		if err != nil {
			return errNotLean
		}
		if v.IsValid() {
			v.SetFloat(f)
		}
	default:
		return errNotLean
	}
	return nil
}

// parseUint reads an unsigned integer as strconv.ParseUint does (digits only, at most 2^64-1), without
// making a string of it: the samples hold tens of thousands.
func parseUint(lit []byte, integer bool) (uint64, bool) {
	if !integer || len(lit) == 0 || lit[0] == '-' {
		return 0, false
	}
	var n uint64
	for _, c := range lit {
		if n > (math.MaxUint64-9)/10 && (n > math.MaxUint64/10 || n*10 > math.MaxUint64-uint64(c-'0')) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// any checks a value of a field the run does not have: any JSON at all.
func (d *leanDecoder) any() error {
	switch c := d.next(); {
	case c == '"':
		_, _, err := d.str()
		return err
	case c == '{':
		return d.members(func(_ []byte) error { return d.any() })
	case c == '[':
		return d.elements(func(int) error { return d.any() })
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		_, _, err := d.number()
		return err
	}
	return errNotLean
}

// members scans an object, the scanner at its brace, calling member for each key (escape-free: others go
// to Load's decoder) with the scanner at its value.
func (d *leanDecoder) members(member func(key []byte) error) error {
	if d.next() != '{' || d.depth >= maxLeanDepth {
		return errNotLean
	}
	d.i++
	d.depth++
	if d.next() == '}' {
		d.i++
		d.depth--
		return nil
	}
	for {
		d.ws()
		key, _, err := d.str()
		if err != nil {
			return errNotLean
		}
		for _, c := range key { // an escaped key: Load's decoder unquotes it
			if c == '\\' {
				return errNotLean
			}
		}
		if d.next() != ':' {
			return errNotLean
		}
		d.i++
		if err := member(key); err != nil {
			return err
		}
		switch d.next() {
		case ',':
			d.i++
		case '}':
			d.i++
			d.depth--
			return nil
		default:
			return errNotLean
		}
	}
}

// elements scans an array, the scanner at its bracket, calling elem for each with the scanner at it.
func (d *leanDecoder) elements(elem func(i int) error) error {
	if d.next() != '[' || d.depth >= maxLeanDepth {
		return errNotLean
	}
	d.i++
	d.depth++
	if d.next() == ']' {
		d.i++
		d.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := elem(i); err != nil {
			return err
		}
		switch d.next() {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			return nil
		default:
			return errNotLean
		}
	}
}

// object decodes a struct: known fields into v (or checked, where v is not valid or the field skipped),
// each at most once; other keys checked as any JSON, unless they match a field but for case.
func (d *leanDecoder) object(t reflect.Type, v reflect.Value) error {
	s := d.structs[t]
	var seen [2]uint64
	return d.members(func(key []byte) error {
		k, ok := s.byName[string(key)]
		if !ok {
			if !ascii(key) || s.folded[lowerASCII(key)] {
				return errNotLean
			}
			return d.any()
		}
		if seen[k/64]&(1<<(k%64)) != 0 {
			return errNotLean
		}
		seen[k/64] |= 1 << (k % 64)
		f := &s.fields[k]
		var fv reflect.Value
		if v.IsValid() && !f.skip {
			fv = v.FieldByIndex(f.index)
		}
		if f.typ == reflect.TypeFor[[]Sample]() {
			return d.samples()
		}
		return d.value(f.typ, fv)
	})
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// array decodes a slice as encoding/json does (an empty array is an empty slice, not nil).
func (d *leanDecoder) array(t reflect.Type, v reflect.Value) error {
	if v.IsValid() && d.next() == '[' {
		v.Set(reflect.MakeSlice(t, 0, 0))
	}
	return d.elements(func(i int) error {
		if !v.IsValid() {
			return d.value(t.Elem(), v)
		}
		v.Grow(1)
		v.SetLen(i + 1)
		v.Index(i).SetZero() // a reused slice (the samples' devices) keeps nothing of its last use
		if t == reflect.TypeFor[[]JobResult]() {
			d.job = i
		}
		return d.value(t.Elem(), v.Index(i))
	})
}

// mapValue decodes a map with string keys.
func (d *leanDecoder) mapValue(t reflect.Type, v reflect.Value) error {
	if v.IsValid() && d.next() == '{' {
		v.Set(reflect.MakeMap(t))
	}
	return d.members(func(key []byte) error {
		if !v.IsValid() {
			return d.value(t.Elem(), v)
		}
		e := reflect.New(t.Elem()).Elem()
		if err := d.value(t.Elem(), e); err != nil {
			return err
		}
		var k string
		if ascii(key) {
			k = string(key)
		} else if json.Unmarshal(append(append([]byte{'"'}, key...), '"'), &k) != nil {
			return errNotLean
		}
		v.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
		return nil
	})
}

// samples checks a job's samples, each decoded into one Sample and held to Check's rule, and keeps none.
func (d *leanDecoder) samples() error {
	var sp sampleSpan
	sample := reflect.ValueOf(&d.sample).Elem()
	err := d.elements(func(int) error {
		d.sample = Sample{DeviceSamples: d.sample.DeviceSamples[:0]}
		if err := d.value(reflect.TypeFor[Sample](), sample); err != nil {
			return err
		}
		s := &d.sample
		if s.Index > maxExact || !finite(s.Seconds, maxSeconds) || len(s.DeviceSamples) > maxDevices {
			return errNotLean
		}
		if sp.n == 0 || s.Index < sp.lo {
			sp.lo = s.Index
		}
		sp.n, sp.hi = sp.n+1, max(sp.hi, s.Index)
		return nil
	})
	if err != nil || sp.n > maxSamples {
		return errNotLean
	}
	for len(d.spans) <= d.job {
		d.spans = append(d.spans, sampleSpan{})
	}
	d.spans[d.job] = sp
	return nil
}
