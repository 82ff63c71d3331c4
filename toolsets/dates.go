package toolsets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// Date is a calendar date without a time or zone, written "2006-01-02" in
// JSON. Its schema is a string of format "date"; the registry converts
// other ISO forms of a date (a date-time, whose date part is kept) into
// it (see [ConvertArguments]).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the date of t in t's location.
func DateOf(t time.Time) Date { y, m, d := t.Date(); return Date{y, m, d} }

// String returns the date as "2006-01-02".
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// In returns midnight of d in loc.
func (d Date) In(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// MarshalJSON writes the date as "2006-01-02".
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "2006-01-02".
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return fmt.Errorf("date %q: want YYYY-MM-DD", s)
	}
	*d = DateOf(t)
	return nil
}

// TimeOfDay is a wall-clock time without a date or zone, written
// "15:04:05" in JSON. Its schema is a string of format "time".
type TimeOfDay struct{ Hour, Minute, Second int }

// String returns the time as "15:04:05".
func (t TimeOfDay) String() string { return fmt.Sprintf("%02d:%02d:%02d", t.Hour, t.Minute, t.Second) }

// MarshalJSON writes the time as "15:04:05".
func (t TimeOfDay) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// UnmarshalJSON reads "15:04:05".
func (t *TimeOfDay) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.TimeOnly, s)
	if err != nil {
		return fmt.Errorf("time %q: want HH:MM:SS", s)
	}
	*t = TimeOfDay{v.Hour(), v.Minute(), v.Second()}
	return nil
}

// Either is a union of two types: a value is an A or a B, tried in that
// order (the first that decodes wins, as the registry's conversion tries
// the members of the union in declaration order). Its schema is anyOf
// A's and B's.
type Either[A, B any] struct {
	A *A
	B *B
}

// MarshalJSON writes the member that is set.
func (e Either[A, B]) MarshalJSON() ([]byte, error) {
	if e.A != nil {
		return json.Marshal(e.A)
	}
	if e.B != nil {
		return json.Marshal(e.B)
	}
	return []byte("null"), nil
}

// UnmarshalJSON decodes b as an A, else as a B.
func (e *Either[A, B]) UnmarshalJSON(b []byte) error {
	var a A
	if err := strictDecode(b, &a); err == nil {
		*e = Either[A, B]{A: &a}
		return nil
	}
	var bv B
	if err := strictDecode(b, &bv); err != nil {
		return fmt.Errorf("neither %T nor %T: %w", a, bv, err)
	}
	*e = Either[A, B]{B: &bv}
	return nil
}

func strictDecode(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// members is how the schema inference finds a union's member types.
func (Either[A, B]) members() []reflect.Type {
	return []reflect.Type{reflect.TypeFor[A](), reflect.TypeFor[B]()}
}

type union interface{ members() []reflect.Type }

// Enum is implemented by a string type whose values are a closed set of
// names: its schema has them as "enum", and the registry converts a name
// written in another case into the declared spelling. A struct field may
// declare the same with the tag `enum:"a,b,c"`.
type Enum interface{ Enum() []string }
