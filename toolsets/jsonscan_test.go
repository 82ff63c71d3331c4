package toolsets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
)

// refDuplicate is the reference duplicate-member detector: encoding/json's
// token stream, every object's names kept in a map. It returns the path
// of the first name seen twice in one object.
func refDuplicate(raw []byte) (string, bool) {
	type frame struct {
		obj     bool
		keys    map[string]bool
		key     string
		idx     int // elements started, for an array
		wantKey bool
	}
	var st []*frame
	pathOf := func() string {
		var b strings.Builder
		for _, f := range st {
			if f.obj {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.idx-1)
			}
		}
		return b.String()
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	startValue := func() {
		if n := len(st); n > 0 && !st[n-1].obj {
			st[n-1].idx++
		}
	}
	endValue := func() {
		if n := len(st); n > 0 && st[n-1].obj {
			st[n-1].wantKey = true
		}
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false
		}
		if n := len(st); n > 0 && st[n-1].obj && st[n-1].wantKey {
			top := st[n-1]
			if tok == json.Delim('}') {
				st = st[:n-1]
				endValue()
				continue
			}
			k := tok.(string)
			top.key, top.wantKey = k, false
			if top.keys[k] {
				return pathOf(), true
			}
			top.keys[k] = true
			continue
		}
		switch tok {
		case json.Delim('{'):
			startValue()
			st = append(st, &frame{obj: true, keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			startValue()
			st = append(st, &frame{})
		case json.Delim(']'):
			st = st[:len(st)-1]
			endValue()
		default:
			startValue()
			endValue()
		}
	}
}

// refOutOfRange is the reference number check: a number whose text
// strconv.ParseFloat overflows.
func refOutOfRange(raw []byte) bool {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			if f, err := strconv.ParseFloat(string(n), 64); err != nil && math.IsInf(f, 0) {
				return true
			}
		}
	}
}

func TestScanArguments(t *testing.T) {
	tests := []struct {
		in, field string
		dup       bool
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"a":{"b":[0,{"c":1,"d":2,"c":3}]}}`, "a.b[1].c", true},
		{`[{"x":1},{"x":1,"x":1}]`, "[1].x", true},
		{`{"\"q\"":1,"\u0022q\u0022":2}`, `"q"`, true},
		{`{"é":1,"\u00e9":2}`, "é", true},
		{` { "a" : [ ] , "b" : { } , "a" : null } `, "a", true},
	}
	for _, tt := range tests {
		p := scanArguments([]byte(tt.in), false)
		if (p != nil) != tt.dup || p != nil && p.field() != tt.field {
			t.Errorf("scanArguments(%s) = %+v, want duplicate %v at %q", tt.in, p, tt.dup, tt.field)
		}
		if ref, dup := refDuplicate([]byte(tt.in)); dup != tt.dup || ref != tt.field {
			t.Errorf("reference(%s) = %q %v", tt.in, ref, dup)
		}
	}
}

// TestScanArgumentsDoesNotAllocate: the duplicate check on valid,
// unambiguous arguments allocates nothing, so the registry's valid-input
// path stays as cheap as before.
func TestScanArgumentsDoesNotAllocate(t *testing.T) {
	for _, in := range []string{
		`{"left":2,"right":3}`,
		`{"ticket_id":"T-1","labels":["a","b"],"nested":{"x":1,"y":[1,2,{"z":true}]},"note":"caf\u00e9 \"quoted\""}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15}`,
	} {
		raw := []byte(in)
		if n := testing.AllocsPerRun(100, func() {
			if checkArguments(raw) != nil {
				t.Fatal("refused")
			}
		}); n != 0 {
			t.Errorf("checkArguments(%s): %v allocations, want 0", in, n)
		}
	}
}

// BenchmarkCheckArguments measures the duplicate-member scan the registry
// adds to every call, on the arguments of BenchmarkRegistryCall and on a
// larger nested object.
func BenchmarkCheckArguments(b *testing.B) {
	for name, in := range map[string]string{
		"two fields": `{"left":2,"right":3}`,
		"nested":     `{"ticket_id":"T-1","labels":["a","b"],"nested":{"x":1,"y":[1,2,{"z":true}]},"note":"caf\u00e9 \"quoted\""}`,
	} {
		raw := []byte(in)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if checkArguments(raw) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}
