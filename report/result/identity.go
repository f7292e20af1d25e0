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

// replaceHost replaces name in s, in any case, where it stands as a host name: not inside a longer word
// or label (a host named "vm" leaves "total-vm:" alone), and with the domain that follows it.
func replaceHost(s, name string) string {
	if len(name) == 0 {
		return s
	}
	lower, lname := strings.ToLower(s), strings.ToLower(name)
	var b strings.Builder
	at := 0
	for {
		i := strings.Index(lower[at:], lname)
		if i < 0 {
			b.WriteString(s[at:])
			return b.String()
		}
		i += at
		end := i + len(name)
		for end+1 < len(s) && s[end] == '.' && isLabelByte(s[end+1]) { // the domain: .cluster.example.org
			end++
			for end < len(s) && isLabelByte(s[end]) {
				end++
			}
		}
		if (i == 0 || !isLabelByte(s[i-1])) && (end == len(s) || !isLabelByte(s[end])) && (i == 0 || s[i-1] != '.') {
			b.WriteString(s[at:i] + HostPlaceholder)
		} else {
			b.WriteString(s[at:end])
		}
		at = end
	}
}

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
