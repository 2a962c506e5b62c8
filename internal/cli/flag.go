package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A Flag is a command-line option. Every flag may be written with one or
// two dashes and its value after "=" or as the next argument; a one-letter
// flag that takes a value may have it glued on ("-n5").
type Flag interface {
	// Names are the flag's name and aliases, without dashes.
	Names() []string
	// TakesValue reports whether the flag needs a value: all but booleans.
	TakesValue() bool
	// Set parses and records one occurrence's value.
	Set(value string) error
	// reset puts the default value in place before parsing.
	reset()
	// help returns the flag's usage text and its default for --help.
	help() (usage, def string)
}

// StringFlag is a flag holding one string; the last occurrence wins.
type StringFlag struct {
	Name        string
	Aliases     []string
	Usage       string // a word in backquotes names the value in --help
	Value       string // the default
	Destination *string
	// Complete, when set, lists the values shell completion offers for a
	// partly typed one.
	Complete func(partial string) []string
	value    string
}

// BoolFlag is a flag that is true when given; "--name=false" turns it off.
type BoolFlag struct {
	Name        string
	Aliases     []string
	Usage       string
	Value       bool
	Destination *bool
	value       bool
}

// IntFlag is a flag holding an integer.
type IntFlag struct {
	Name        string
	Aliases     []string
	Usage       string
	Value       int
	Destination *int
	value       int
}

// FloatFlag is a flag holding a floating-point number.
type FloatFlag struct {
	Name        string
	Aliases     []string
	Usage       string
	Value       float64
	Destination *float64
	value       float64
}

// DurationFlag is a flag holding a time.Duration such as "300ms".
type DurationFlag struct {
	Name        string
	Aliases     []string
	Usage       string
	Value       time.Duration
	Destination *time.Duration
	value       time.Duration
}

// StringSliceFlag is a repeatable flag; each occurrence may also hold
// several comma-separated values. Given at all, it replaces the default.
type StringSliceFlag struct {
	Name        string
	Aliases     []string
	Usage       string
	Value       []string
	Destination *[]string
	// Complete, when set, lists the values shell completion offers for a
	// partly typed one.
	Complete func(partial string) []string
	value    []string
	given    bool
}

// Values returns a Complete of fixed values.
func Values(vs ...string) func(string) []string { return func(string) []string { return vs } }

// Dirs is a Complete of directories, as a shell completes them.
func Dirs(partial string) []string { return dirsFor(partial) }

// valueCompleter is a flag whose values completion lists.
type valueCompleter interface {
	values() func(string) []string
}

func (f *StringFlag) values() func(string) []string      { return f.Complete }
func (f *StringSliceFlag) values() func(string) []string { return f.Complete }

func names(name string, aliases []string) []string { return append([]string{name}, aliases...) }

func (f *StringFlag) Names() []string       { return names(f.Name, f.Aliases) }
func (f *BoolFlag) Names() []string         { return names(f.Name, f.Aliases) }
func (f *IntFlag) Names() []string          { return names(f.Name, f.Aliases) }
func (f *FloatFlag) Names() []string        { return names(f.Name, f.Aliases) }
func (f *DurationFlag) Names() []string     { return names(f.Name, f.Aliases) }
func (f *StringSliceFlag) Names() []string  { return names(f.Name, f.Aliases) }
func (f *StringFlag) TakesValue() bool      { return true }
func (f *BoolFlag) TakesValue() bool        { return false }
func (f *IntFlag) TakesValue() bool         { return true }
func (f *FloatFlag) TakesValue() bool       { return true }
func (f *DurationFlag) TakesValue() bool    { return true }
func (f *StringSliceFlag) TakesValue() bool { return true }

func (f *StringFlag) reset() { f.value = f.Value; store(f.Destination, f.value) }
func (f *BoolFlag) reset()   { f.value = f.Value; store(f.Destination, f.value) }
func (f *IntFlag) reset()    { f.value = f.Value; store(f.Destination, f.value) }
func (f *FloatFlag) reset()  { f.value = f.Value; store(f.Destination, f.value) }

func (f *DurationFlag) reset() { f.value = f.Value; store(f.Destination, f.value) }

func (f *StringSliceFlag) reset() {
	f.value, f.given = append([]string(nil), f.Value...), false
	store(f.Destination, f.value)
}

func store[T any](dst *T, v T) {
	if dst != nil {
		*dst = v
	}
}

func (f *StringFlag) Set(v string) error {
	f.value = v
	store(f.Destination, v)
	return nil
}

func (f *BoolFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	f.value = b
	store(f.Destination, b)
	return nil
}

func (f *IntFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", v)
	}
	f.value = n
	store(f.Destination, n)
	return nil
}

func (f *FloatFlag) Set(v string) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", v)
	}
	f.value = x
	store(f.Destination, x)
	return nil
}

func (f *DurationFlag) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as 300ms or 2s", v)
	}
	f.value = d
	store(f.Destination, d)
	return nil
}

func (f *StringSliceFlag) Set(v string) error {
	if !f.given {
		f.value, f.given = nil, true
	}
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			f.value = append(f.value, part)
		}
	}
	store(f.Destination, f.value)
	return nil
}

func (f *StringFlag) help() (string, string) { return f.Usage, quoteDefault(f.Value) }
func (f *BoolFlag) help() (string, string)   { return f.Usage, "" }
func (f *IntFlag) help() (string, string) {
	return f.Usage, zeroless(f.Value != 0, strconv.Itoa(f.Value))
}
func (f *FloatFlag) help() (string, string) {
	return f.Usage, zeroless(f.Value != 0, strconv.FormatFloat(f.Value, 'g', -1, 64))
}
func (f *DurationFlag) help() (string, string) {
	return f.Usage, zeroless(f.Value != 0, f.Value.String())
}
func (f *StringSliceFlag) help() (string, string) {
	return f.Usage, zeroless(len(f.Value) > 0, strings.Join(f.Value, ","))
}

func quoteDefault(s string) string { return zeroless(s != "", strconv.Quote(s)) }

func zeroless(set bool, s string) string {
	if !set {
		return ""
	}
	return s
}

// placeholder splits a usage text into the name of the flag's value (the
// first word in backquotes) and the text without the backquotes.
func placeholder(f Flag, usage string) (name, text string) {
	if i := strings.IndexByte(usage, '`'); i >= 0 {
		if j := strings.IndexByte(usage[i+1:], '`'); j >= 0 {
			name = usage[i+1 : i+1+j]
			return name, usage[:i] + name + usage[i+2+j:]
		}
	}
	if !f.TakesValue() {
		return "", usage
	}
	switch f.(type) {
	case *IntFlag:
		return "N", usage
	case *DurationFlag:
		return "DURATION", usage
	}
	return "VALUE", usage
}

// dashed writes a flag name as users type it: -n, --name.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
