package result

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Identity is what a public ticket must not publish about the machine and its people unless asked: the
// host's name (with its domain), user names in home paths, UUIDs (GPU, file system, machine), MAC
// addresses and long hexadecimal ids (containers, jobs). Scrub replaces each with a placeholder that says
// what was there; several users stay apart (<user>, <user2>).
type Identity struct {
	Hostnames []string
	users     map[string]string // user name -> its placeholder, set by Scrub
}

// The placeholders a scrubbed string shows.
const (
	HostPlaceholder = "<hostname>"
	UserPlaceholder = "<user>"
)

var (
	homePath = regexp.MustCompile(`(/home/|/Users/|/var/home/)([^/\s"':]+)`)
	uuidText = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	macText  = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b`)
	longHex  = regexp.MustCompile(`(?i)\b[0-9a-f]{32,64}\b`)
)

// IdentityOf is the identity results record: their host names.
func IdentityOf(envs ...*Environment) Identity {
	var id Identity
	for _, e := range envs {
		if e != nil && e.Hostname != "" && !slices.Contains(id.Hostnames, e.Hostname) {
			id.Hostnames = append(id.Hostnames, e.Hostname)
		}
	}
	return id
}

// Text is s without the identity.
func (id *Identity) Text(s string) string { return id.patterns(id.hosts(s)) }

// hosts replaces the host names where they stand as names.
func (id *Identity) hosts(s string) string {
	for _, h := range id.Hostnames {
		s = replaceHost(s, h)
		if short, _, ok := strings.Cut(h, "."); ok {
			s = replaceHost(s, short)
		}
	}
	return s
}

// patterns replaces what has a shape of its own: home paths, UUIDs, MACs, long hex ids.
func (id *Identity) patterns(s string) string {
	s = homePath.ReplaceAllStringFunc(s, func(m string) string {
		sub := homePath.FindStringSubmatch(m)
		return sub[1] + id.userPlaceholder(sub[2])
	})
	s = uuidText.ReplaceAllString(s, "<uuid>")
	s = macText.ReplaceAllString(s, "<mac>")
	return longHex.ReplaceAllString(s, "<id>")
}

func (id *Identity) userPlaceholder(user string) string {
	if p, ok := id.users[user]; ok {
		return p
	}
	return UserPlaceholder
}

// replaceHost replaces name in s, in any case, where it stands as a host name: a whole word, where a word is
// a run of letters, digits, '_', '-' and '.' (a sentence's last dot not counted), so that a host named "vm"
// leaves total_vm, total-vm: and vm.swappiness alone and node1 leaves node10 alone (issue 46). The one
// longer word that is still the host is the name with a domain of two labels or more after it
// (node1.cluster.example.org; one label is not enough: vm.swappiness would be one).
func replaceHost(s, name string) string {
	if len(name) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		end := i
		for end < len(s) && isWordByte(s[end]) {
			end++
		}
		word := strings.TrimRight(s[i:end], ".")
		if isHostWord(word, name) {
			b.WriteString(s[at:i] + HostPlaceholder)
			at = i + len(word)
		}
		i = end
	}
	return b.String() + s[at:]
}

// isHostWord says whether word is name, in any case, or name followed by a domain of two labels or more
// (letters, digits and '-' each, the last letters only).
func isHostWord(word, name string) bool {
	if len(word) < len(name) || !strings.EqualFold(word[:len(name)], name) {
		return false
	}
	rest := word[len(name):]
	if rest == "" {
		return true
	}
	labels := strings.Split(rest, ".")
	if labels[0] != "" || len(labels) < 3 { // rest starts with '.': "", then each label
		return false
	}
	for _, l := range labels[1:] {
		if l == "" || strings.IndexFunc(l, func(r rune) bool { return !isLabelByte(byte(r)) }) >= 0 {
			return false
		}
	}
	tld := labels[len(labels)-1]
	return strings.IndexFunc(tld, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }) < 0
}

// isWordByte: a byte of a word a host name must fill alone to be replaced.
func isWordByte(c byte) bool { return c == '_' || c == '.' || isLabelByte(c) }

// isLabelByte: a byte a host name's label goes on with.
func isLabelByte(c byte) bool {
	return c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// technicalFields hold what a runtime, a package database or the tool itself names: versions, device and
// call names, kinds. A host name is not replaced in them (a host named "debian" leaves "3.1+debian" alone);
// the patterns with a shape of their own still are.
var technicalFields = map[string]bool{"Version": true, "DriverVersion": true, "Name": true, "Vendor": true, "Type": true,
	"Call": true, "CodeName": true, "Class": true, "Driver": true, "Device": true, "OS": true, "Distribution": true,
	"KernelBuild": true, "Kernel": true, "Extensions": true, "CPU": true, "Signal": true, "Flags": true, "Via": true,
	"WayIn": true, "Interception": true, "Source": true, "PackageManager": true, "Firmware": true, "Modules": true,
	"Packages": true, "LimitSource": true, "Attribution": true, "Kind": true, "Strategy": true, "Variant": true}

// Scrub replaces the identity in every string of v (a *Run, a *Trace: any pointer to the model), map keys
// included, in place: host names outside technicalFields, the shaped patterns everywhere. Values of the
// model's own string types (strategies, outcomes, kinds) are the tool's words and are left alone.
func (id *Identity) Scrub(v any) {
	users := map[string]bool{}
	collectUsers(reflect.ValueOf(v), users)
	id.users = map[string]string{}
	for i, u := range slices.Sorted(mapKeysOf(users)) {
		id.users[u] = UserPlaceholder
		if i > 0 {
			id.users[u] = "<user" + strconv.Itoa(i+1) + ">"
		}
	}
	id.scrub(reflect.ValueOf(v), true)
}

func mapKeysOf(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

var plainString = reflect.TypeOf("")

// walk calls each for every plain string of v (map keys too), with whether a host name may be in it.
func walk(v reflect.Value, hosts bool, each func(v reflect.Value, hosts bool)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), hosts, each)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				walk(f, hosts && !technicalFields[t.Field(i).Name], each)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), hosts, each)
		}
	case reflect.String:
		if v.Type() == plainString {
			each(v, hosts)
		}
	case reflect.Map:
		if !v.IsNil() && v.Type().Key() == plainString {
			each(v, hosts) // the map itself: its keys and string values are handled by the caller
		}
	}
}

func collectUsers(v reflect.Value, users map[string]bool) {
	walk(v, true, func(s reflect.Value, _ bool) {
		var texts []string
		if s.Kind() == reflect.Map {
			for _, k := range s.MapKeys() {
				texts = append(texts, k.String())
				if val := s.MapIndex(k); val.Kind() == reflect.String {
					texts = append(texts, val.String())
				}
			}
		} else {
			texts = []string{s.String()}
		}
		for _, t := range texts {
			for _, m := range homePath.FindAllStringSubmatch(t, -1) {
				users[m[2]] = true
			}
		}
	})
}

func (id *Identity) scrub(v reflect.Value, hosts bool) {
	walk(v, hosts, func(s reflect.Value, hosts bool) {
		text := id.patterns
		if hosts {
			text = id.Text
		}
		if s.Kind() != reflect.Map {
			if t := text(s.String()); t != s.String() && s.CanSet() {
				s.SetString(t)
			}
			return
		}
		fresh := reflect.MakeMapWithSize(s.Type(), s.Len())
		keys := s.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			val := reflect.New(s.Type().Elem()).Elem()
			val.Set(s.MapIndex(k))
			id.scrub(val, hosts) // a string value too: it is settable here
			key := text(k.String())
			for fresh.MapIndex(reflect.ValueOf(key)).IsValid() { // two keys that scrub alike stay two
				key += "'"
			}
			fresh.SetMapIndex(reflect.ValueOf(key), val)
		}
		if s.CanSet() {
			s.Set(fresh)
		}
	})
}
