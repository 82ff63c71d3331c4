package events

// The lexical layer of the fast decoder (see fastdecode.go): a cursor over
// JSON text that recognises whitespace, strings, numbers, literals and
// whole values without allocating. Each scan reports whether the text at
// the cursor is what it expects; a false answer means "not on the fast
// path" (the caller then decodes with encoding/json, which decides), so
// the scanner never needs an error of its own. Wherever it says yes,
// encoding/json's scanner says yes too: it accepts only RFC 8259 JSON
// (whitespace of space, tab, CR and LF; the escapes \" \\ \/ \b \f \n \r
// \t \uXXXX; no control characters in strings; the number grammar;
// true, false, null) and nests no deeper than maxScanDepth.

// maxScanDepth is the deepest nesting of arrays and objects skipValue
// follows; deeper values are left to encoding/json.
const maxScanDepth = 256

type cursor struct {
	data []byte
	pos  int
	// spaced is set once ws has skipped white space (the text is then not
	// compact).
	spaced bool
}

// ws skips JSON whitespace.
func (c *cursor) ws() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
			c.spaced = true
		default:
			return
		}
	}
}

// peek returns the byte at the cursor, 0 at the end.
func (c *cursor) peek() byte {
	if c.pos < len(c.data) {
		return c.data[c.pos]
	}
	return 0
}

// consume skips b if it is at the cursor.
func (c *cursor) consume(b byte) bool {
	if c.pos < len(c.data) && c.data[c.pos] == b {
		c.pos++
		return true
	}
	return false
}

// literal skips lit (true, false or null) if it is at the cursor.
func (c *cursor) literal(lit string) bool {
	if len(c.data)-c.pos >= len(lit) && string(c.data[c.pos:c.pos+len(lit)]) == lit {
		c.pos += len(lit)
		return true
	}
	return false
}

// str scans the string at the cursor and returns its content, the bytes
// between the quotes, and whether it holds an escape or a byte that is not
// ASCII (plain is then false: its value is not the content as it is).
func (c *cursor) str() (content []byte, plain, ok bool) {
	if !c.consume('"') {
		return nil, false, false
	}
	start := c.pos
	plain = true
	for c.pos < len(c.data) {
		for c.pos < len(c.data) && !strSpecial[c.data[c.pos]] {
			c.pos++ // the common case: printable ASCII
		}
		if c.pos == len(c.data) {
			break
		}
		b := c.data[c.pos]
		switch {
		case b == '"':
			content = c.data[start:c.pos]
			c.pos++
			return content, plain, true
		case b < 0x20:
			return nil, false, false
		case b == '\\':
			plain = false
			if !c.escape() {
				return nil, false, false
			}
			continue
		case b >= 0x80:
			plain = false
		}
		c.pos++
	}
	return nil, false, false
}

// strSpecial marks the bytes a string scan must look at: the quote, the
// backslash, control characters and bytes that are not ASCII.
var strSpecial = func() (t [256]bool) {
	for b := range 256 {
		t[b] = b == '"' || b == '\\' || b < 0x20 || b >= 0x80
	}
	return t
}()

// escape skips the escape sequence at the cursor (at its backslash).
func (c *cursor) escape() bool {
	if c.pos+1 >= len(c.data) {
		return false
	}
	switch c.data[c.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		c.pos += 2
		return true
	case 'u':
		if c.pos+6 > len(c.data) {
			return false
		}
		for _, h := range c.data[c.pos+2 : c.pos+6] {
			if !isHex(h) {
				return false
			}
		}
		c.pos += 6
		return true
	}
	return false
}

func isHex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// digits skips a run of decimal digits and reports whether there was one.
func (c *cursor) digits() bool {
	start := c.pos
	for c.pos < len(c.data) && isDigit(c.data[c.pos]) {
		c.pos++
	}
	return c.pos > start
}

// number scans the number at the cursor and returns its text, and whether
// it is an integer (no fraction, no exponent).
func (c *cursor) number() (text []byte, integer, ok bool) {
	start := c.pos
	c.consume('-')
	switch {
	case c.consume('0'):
	case c.pos < len(c.data) && '1' <= c.data[c.pos] && c.data[c.pos] <= '9':
		c.digits()
	default:
		return nil, false, false
	}
	integer = true
	if c.consume('.') {
		integer = false
		if !c.digits() {
			return nil, false, false
		}
	}
	if c.consume('e') || c.consume('E') {
		integer = false
		if !c.consume('+') {
			c.consume('-')
		}
		if !c.digits() {
			return nil, false, false
		}
	}
	return c.data[start:c.pos], integer, true
}

// skipValue scans the JSON value at the cursor, of any kind, and returns
// its text.
func (c *cursor) skipValue() ([]byte, bool) {
	start := c.pos
	// open records the containers entered: bit set for an object.
	var open [maxScanDepth / 64]uint64
	depth := 0
	isObject := func() bool { return open[(depth-1)/64]&(1<<((depth-1)%64)) != 0 }
	for {
		// A value.
		switch c.peek() {
		case '{', '[':
			if depth == maxScanDepth {
				return nil, false
			}
			obj := c.data[c.pos] == '{'
			depth++
			if obj {
				open[(depth-1)/64] |= 1 << ((depth - 1) % 64)
			} else {
				open[(depth-1)/64] &^= 1 << ((depth - 1) % 64)
			}
			c.pos++
			c.ws()
			if c.consume(closer(obj)) {
				depth--
				break
			}
			if obj && !c.member() {
				return nil, false
			}
			continue
		case '"':
			if _, _, ok := c.str(); !ok {
				return nil, false
			}
		case 't':
			if !c.literal("true") {
				return nil, false
			}
		case 'f':
			if !c.literal("false") {
				return nil, false
			}
		case 'n':
			if !c.literal("null") {
				return nil, false
			}
		default:
			if _, _, ok := c.number(); !ok {
				return nil, false
			}
		}
		// After a value: the end of the containers it closes, then a
		// separator before the next one.
		for {
			if depth == 0 {
				return c.data[start:c.pos], true
			}
			c.ws()
			obj := isObject()
			if c.consume(',') {
				c.ws()
				if obj && !c.member() {
					return nil, false
				}
				break
			}
			if !c.consume(closer(obj)) {
				return nil, false
			}
			depth--
		}
	}
}

// closer is the byte that closes an object (obj) or an array.
func closer(obj bool) byte {
	if obj {
		return '}'
	}
	return ']'
}

// member scans an object member's name and colon, up to its value.
func (c *cursor) member() bool {
	if _, _, ok := c.str(); !ok {
		return false
	}
	c.ws()
	if !c.consume(':') {
		return false
	}
	c.ws()
	return true
}
