package toolsets

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Arguments must mean one thing. encoding/json accepts an object that
// names a member twice and keeps the last value, so a person reviewing
// {"environment":"staging",…,"environment":"production"} may read the
// first while the tool receives the second; and it reports a number beyond
// float64 (1e400) as a type error without saying where. scanArguments
// finds both in arguments encoding/json already accepted as JSON text. On
// valid input it does not allocate (objects of up to dupMapAfter members
// are checked pairwise; larger ones through a map).

// scanProblem is what scanArguments found: a member named twice, or a
// number out of range, at path (innermost element first).
type scanProblem struct {
	duplicate bool   // else a number out of range
	number    string // the number's text
	path      []scanElem
}

type scanElem struct {
	key   string
	index int
	isIdx bool
}

// field is the problem's argument path in the validator's notation
// ("a.b[2]").
func (p *scanProblem) field() string {
	var at *path
	for i := len(p.path) - 1; i >= 0; i-- {
		e := p.path[i]
		at = &path{parent: at, key: e.key, index: e.index, isIdx: e.isIdx}
	}
	return at.String()
}

// dupMapAfter is the member count beyond which an object's names are
// checked through a map instead of pairwise.
const dupMapAfter = 16

// keySpan is a member name: the bytes between its quotes.
type keySpan struct {
	start, end int
	plain      bool // no escapes and ASCII only: the bytes are the name
}

// stackKeys is how many names of open objects the scan keeps in place
// before it spills to a slice.
const stackKeys = 32

type jsonScan struct {
	data    []byte
	i       int
	numbers bool // check numbers against the float64 range
	// The names of the objects being scanned, innermost last: n of them,
	// the first stackKeys in stack, the rest in spill. (A slice over
	// stack kept in the struct would move the struct to the heap.)
	n     int
	stack [stackKeys]keySpan
	spill []keySpan
}

func (s *jsonScan) key(i int) keySpan {
	if i < stackKeys {
		return s.stack[i]
	}
	return s.spill[i-stackKeys]
}

func (s *jsonScan) push(k keySpan) {
	if s.n < stackKeys {
		s.stack[s.n] = k
	} else {
		s.spill = append(s.spill[:s.n-stackKeys], k)
	}
	s.n++
}

// scanArguments reports the first member name that appears twice in one
// object of data (names compared as encoding/json decodes them), and with
// numbers the first number beyond the float64 range. data must be valid
// JSON.
func scanArguments(data []byte, numbers bool) *scanProblem {
	s := jsonScan{data: data, numbers: numbers}
	return s.value()
}

func (s *jsonScan) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) value() *scanProblem {
	s.ws()
	if s.i >= len(s.data) {
		return nil
	}
	switch c := s.data[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		s.str()
	case c == 't' || c == 'f' || c == 'n':
		for s.i < len(s.data) && s.data[s.i] >= 'a' && s.data[s.i] <= 'z' {
			s.i++
		}
	default:
		return s.number()
	}
	return nil
}

// str skips a string starting at its opening quote and returns its span.
func (s *jsonScan) str() keySpan {
	s.i++
	k := keySpan{start: s.i, plain: true}
	for s.i < len(s.data) {
		switch c := s.data[s.i]; {
		case c == '"':
			k.end = s.i
			s.i++
			return k
		case c == '\\':
			k.plain = false
			s.i += 2
		case c >= utf8.RuneSelf:
			k.plain = false
			s.i++
		default:
			s.i++
		}
	}
	k.end = s.i
	return k
}

func (s *jsonScan) number() *scanProblem {
	start := s.i
	big := false // an exponent, or many digits: worth a precise look
	for s.i < len(s.data) {
		c := s.data[s.i]
		if c == 'e' || c == 'E' {
			big = true
		} else if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') {
			break
		}
		s.i++
	}
	if !s.numbers || !big && s.i-start < 300 {
		return nil
	}
	text := string(s.data[start:s.i])
	if f, err := strconv.ParseFloat(text, 64); err != nil && math.IsInf(f, 0) {
		return &scanProblem{number: text}
	}
	return nil
}

func (s *jsonScan) array() *scanProblem {
	s.i++
	for n := 0; ; n++ {
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] == ']' {
			s.i++
			return nil
		}
		if p := s.value(); p != nil {
			p.path = append(p.path, scanElem{index: n, isIdx: true})
			return p
		}
		s.ws()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
		}
	}
}

func (s *jsonScan) object() *scanProblem {
	s.i++
	base := s.n
	defer func() { s.n = base }()
	var names map[string]struct{} // after dupMapAfter members
	for {
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] == '}' {
			s.i++
			return nil
		}
		k := s.str()
		dup := false
		switch {
		case names != nil:
			name := s.name(k)
			_, dup = names[name]
			names[name] = struct{}{}
		case s.n-base >= dupMapAfter:
			names = make(map[string]struct{}, 2*dupMapAfter)
			for i := base; i < s.n; i++ {
				names[s.name(s.key(i))] = struct{}{}
			}
			name := s.name(k)
			_, dup = names[name]
			names[name] = struct{}{}
		default:
			for i := base; i < s.n; i++ {
				if s.same(s.key(i), k) {
					dup = true
					break
				}
			}
			s.push(k)
		}
		if dup {
			return &scanProblem{duplicate: true, path: []scanElem{{key: s.name(k)}}}
		}
		s.ws()
		s.i++ // ':'
		if p := s.value(); p != nil {
			p.path = append(p.path, scanElem{key: s.name(k)})
			return p
		}
		s.ws()
		if s.i < len(s.data) && s.data[s.i] == ',' {
			s.i++
		}
	}
}

// same reports whether two member names decode to the same string.
func (s *jsonScan) same(a, b keySpan) bool {
	if a.plain && b.plain {
		return bytes.Equal(s.data[a.start:a.end], s.data[b.start:b.end])
	}
	return s.name(a) == s.name(b)
}

// name decodes a member name as encoding/json does (escapes resolved,
// invalid UTF-8 replaced by U+FFFD).
func (s *jsonScan) name(k keySpan) string {
	if k.plain {
		return string(s.data[k.start:k.end])
	}
	var out string
	_ = json.Unmarshal(s.data[k.start-1:k.end+1], &out) // valid JSON text
	return out
}
