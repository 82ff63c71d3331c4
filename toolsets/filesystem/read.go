package filesystem

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
)

// MaxListEntries caps the entries list_directory returns.
const MaxListEntries = 1000

// ReadArgs are read_file's arguments.
type ReadArgs struct {
	Path   string `json:"path" jsonschema:"the file, relative to the root"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first line to return, from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return (default: to the end)"`
}

// ReadResult is read_file's content.
type ReadResult struct {
	Path string `json:"path"`
	// Content is the lines from StartLine to EndLine, each with its
	// newline.
	Content    string `json:"content"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
}

func (t *tools) read(ctx context.Context, _ *toolsets.ToolContext, a ReadArgs) (ReadResult, error) {
	if a.Offset < 0 || a.Limit < 0 {
		return ReadResult{}, toolsets.InvalidArguments("offset", "offset and limit must not be negative", "Give offset from 1 and a positive limit, or leave them out.")
	}
	b, err := t.fs.ReadFile(ctx, a.Path)
	if err != nil {
		return ReadResult{}, environment.ToolError(err)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return ReadResult{}, toolsets.Feedback(fmt.Sprintf("%q is a binary file (%d bytes); read_file shows text only.", a.Path, len(b)))
	}
	lines := splitLines(string(b))
	start := max(a.Offset, 1)
	if start > len(lines) && !(start == 1 && len(lines) == 0) {
		return ReadResult{}, toolsets.Feedback(fmt.Sprintf("%q has %d lines; offset %d is past its end.", a.Path, len(lines), a.Offset))
	}
	end := len(lines)
	if a.Limit > 0 {
		end = min(end, start-1+a.Limit)
	}
	return ReadResult{Path: a.Path, Content: strings.Join(lines[min(start-1, len(lines)):end], ""), StartLine: start, EndLine: end, TotalLines: len(lines)}, nil
}

// splitLines splits s after each newline; a last line without one is a
// line too.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// ListArgs are list_directory's arguments.
type ListArgs struct {
	Path string `json:"path,omitempty" jsonschema:"the directory, relative to the root (default: the root)"`
}

// Entry is one entry of a listing.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size,omitempty"`
}

// ListResult is list_directory's content.
type ListResult struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
	// Omitted counts the entries past [MaxListEntries].
	Omitted int `json:"omitted,omitempty"`
}

func (t *tools) list(ctx context.Context, _ *toolsets.ToolContext, a ListArgs) (ListResult, error) {
	infos, err := t.fs.ReadDir(ctx, a.Path)
	if err != nil {
		return ListResult{}, environment.ToolError(err)
	}
	res := ListResult{Path: a.Path, Entries: []Entry{}}
	if res.Path == "" {
		res.Path = "."
	}
	for i, fi := range infos {
		if i == MaxListEntries {
			res.Omitted = len(infos) - i
			break
		}
		e := Entry{Name: fi.Name, Type: fi.Type()}
		if e.Type == "file" {
			e.Size = fi.Size
		}
		res.Entries = append(res.Entries, e)
	}
	return res, nil
}
