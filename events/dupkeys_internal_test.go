package events

import "testing"

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{}`, ""},
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"a":{"b":1,"b":2}}`, "b"},
		{`[{"x":"x","x":1}]`, "x"},
		{`{"a":"b","b":"a"}`, ""},
		{`{"a":["a","a"],"b":1}`, ""},
		{`{"k":{"k":{"k":1}}}`, ""},
		{`"plain"`, ""},
	} {
		got, err := duplicateKey([]byte(tc.data))
		if err != nil || got != tc.want {
			t.Errorf("duplicateKey(%s) = %q, %v; want %q", tc.data, got, err, tc.want)
		}
	}
}
