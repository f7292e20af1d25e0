package result

import (
	"reflect"
	"regexp"
	"strings"
)

// Identity is what a public ticket must not publish about the machine and its people unless asked: the
// host's name, user names in home paths, UUIDs (GPU, file system, machine) and MAC addresses. Scrub
// replaces each with a placeholder that says what was there.
type Identity struct {
	Hostname string
}

// The placeholders a scrubbed string shows.
const (
	HostPlaceholder = "<hostname>"
	UserPlaceholder = "<user>"
)

var (
	homePath = regexp.MustCompile(`(/home/|/Users/|/var/home/)[^/\s"':]+`)
	uuidText = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	macText  = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b`)
)

// Text is s without the identity.
func (id Identity) Text(s string) string {
	if id.Hostname != "" {
		s = replaceName(s, id.Hostname, HostPlaceholder)
		if short, _, ok := strings.Cut(id.Hostname, "."); ok {
			s = replaceName(s, short, HostPlaceholder)
		}
	}
	s = homePath.ReplaceAllString(s, "${1}"+UserPlaceholder)
	s = uuidText.ReplaceAllString(s, "<uuid>")
	return macText.ReplaceAllString(s, "<mac>")
}

// replaceName replaces name in s where it stands as a name: not inside a longer word, path element or
// host name (a host named "vm" leaves "total-vm:" alone).
func replaceName(s, name, with string) string {
	if name == "" {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, name)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(name)
		if (i == 0 || !isNameByte(s[i-1])) && (end == len(s) || !isNameByte(s[end])) {
			b.WriteString(s[:i] + with)
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}

// isNameByte: a byte a host name, a word or a path element goes on with.
func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// IdentityOf is the identity a result records.
func IdentityOf(e *Environment) Identity {
	if e == nil {
		return Identity{}
	}
	return Identity{Hostname: e.Hostname}
}

// Scrub replaces the identity in every string of v (a *Run, a *Trace: any pointer to the model), map keys
// included, in place. It reports whether anything changed.
func (id Identity) Scrub(v any) bool {
	return id.scrub(reflect.ValueOf(v))
}

func (id Identity) scrub(v reflect.Value) bool {
	changed := false
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			changed = id.scrub(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				changed = id.scrub(f) || changed
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			changed = id.scrub(v.Index(i)) || changed
		}
	case reflect.String:
		if s := id.Text(v.String()); s != v.String() && v.CanSet() {
			v.SetString(s)
			changed = true
		}
	case reflect.Map:
		if v.IsNil() || v.Type().Key().Kind() != reflect.String {
			break
		}
		fresh := reflect.MakeMapWithSize(v.Type(), v.Len())
		iter := v.MapRange()
		for iter.Next() {
			key := iter.Key().String()
			val := reflect.New(v.Type().Elem()).Elem()
			val.Set(iter.Value())
			c := id.scrub(val)
			k := id.Text(key)
			changed = changed || c || k != key
			fresh.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), val)
		}
		if changed {
			v.Set(fresh)
		}
	}
	return changed
}
