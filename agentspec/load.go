package agentspec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"gopkg.in/yaml.v3"
)

// Load reads and parses the spec file at path; see Parse.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "read the file", Err: err}
	}
	return Parse(path, data)
}

// Parse parses the spec file name holds data: it decodes it strictly
// (every field known, every value of its type), validates it against
// Schema, and checks what a schema cannot: names unique in the file,
// every environment variable the file names set (and not empty) now,
// relative roots resolved in name's directory. Every error is an *Error
// naming name, the line and the field.
func Parse(name string, data []byte) (*File, error) {
	d := &decoder{file: name, lines: map[string]int{}}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Msg: "the file is empty"}
		}
		return nil, &Error{File: name, Line: lineOf(err), Msg: "not YAML: " + yamlMsg(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{File: name, Line: extra.Line, Msg: "a spec file holds one YAML document"}
	}
	root := doc.Content[0]
	f := &File{name: name, dir: filepath.Dir(name)}
	if err := d.decode(root, reflect.ValueOf(f).Elem(), ""); err != nil {
		return nil, err
	}
	if err := d.validate(root); err != nil {
		return nil, err
	}
	f.lines = d.lines
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// Name returns the file's name, as errors give it.
func (f *File) Name() string { return f.name }

// lineOf reads the line of a yaml syntax error ("yaml: line 3: ...").
func lineOf(err error) int {
	var n int
	if _, err := fmt.Sscanf(err.Error(), "yaml: line %d:", &n); err != nil {
		return 0
	}
	return n
}
