package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/spf13/pflag"
)

// The output formats of -o. The JSON field names are the API's (snake
// case, session_id, run_id, …): one name for one thing across commands.
const (
	outTable = "table" // text for people (the default)
	outJSON  = "json"  // one JSON document (a list is an array)
	outJSONL = "jsonl" // one JSON value per line (a list: one line per item)
)

// outputFlag is -o/--output and its alias --json (-o json).
type outputFlag struct {
	format string
	asJSON bool
	fs     *pflag.FlagSet
}

// addOutputFlag registers -o/--output and --json on fs.
func addOutputFlag(fs *pflag.FlagSet) *outputFlag {
	o := &outputFlag{fs: fs}
	fs.StringVarP(&o.format, "output", "o", outTable, "print `FORMAT`: table, json or jsonl")
	fs.BoolVar(&o.asJSON, "json", false, "the same as -o json")
	return o
}

// check validates the flags after parsing and folds --json into format.
func (o *outputFlag) check() error {
	switch o.format {
	case outTable, outJSON, outJSONL:
	default:
		return usageError(o.fs, "-o is table, json or jsonl, got %q", o.format)
	}
	if o.asJSON {
		if setFlags(o.fs)["output"] && o.format != outJSON {
			return usageError(o.fs, "--json and -o %s exclude each other", o.format)
		}
		o.format = outJSON
	}
	return nil
}

// json says whether the output is JSON of either kind.
func (o *outputFlag) json() bool { return o.format != outTable }

// write writes v as the format says: indented JSON for json, and for
// jsonl one compact line per item of a slice (or v on one line).
func (o *outputFlag) write(w io.Writer, v any) error {
	if o.format != outJSONL {
		return writeJSON(w, v)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return writeJSONLine(w, v)
	}
	for i := range rv.Len() {
		if err := writeJSONLine(w, rv.Index(i).Interface()); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the output: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeJSONLine writes v as JSON on one line.
func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the output: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
