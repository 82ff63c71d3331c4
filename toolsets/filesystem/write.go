package filesystem

import (
	"context"
	"fmt"
	"strings"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
)

// WriteArgs are write_file's arguments.
type WriteArgs struct {
	Path    string `json:"path" jsonschema:"the file, relative to the root"`
	Content string `json:"content" jsonschema:"the file's whole new content"`
}

// WriteResult is write_file's and edit_file's content.
type WriteResult struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	Created bool   `json:"created,omitempty"`
	// Replacements counts an edit's replacements.
	Replacements int `json:"replacements,omitempty"`
}

// effectResult returns the tool result of e: a short content for the
// model, and e in the public metadata.
func effectResult(e environment.Effect) toolsets.Result {
	return toolsets.Result{
		Content:  WriteResult{Path: e.Path, Bytes: e.Bytes, SHA256: e.SHA256, Created: e.Created, Replacements: e.Replacements},
		Metadata: map[string]any{environment.MetaEffect: e},
	}
}

func (t *tools) write(ctx context.Context, tc *toolsets.ToolContext, a WriteArgs) (toolsets.Result, error) {
	data := []byte(a.Content)
	info, err := t.fs.WriteFile(ctx, a.Path, data)
	if err != nil {
		return toolsets.Result{}, environment.ToolError(err)
	}
	return effectResult(environment.WriteEffect(tc, environment.EffectWrite, a.Path, data, info)), nil
}

// EditArgs are edit_file's arguments.
type EditArgs struct {
	Path       string `json:"path" jsonschema:"the file, relative to the root"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace, whitespace included"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
}

// Edit guidance reasons, under the "reason" key of the feedback's
// metadata.
const (
	ReasonNoMatch   = "no_match"
	ReasonAmbiguous = "ambiguous_match"
)

func (t *tools) edit(ctx context.Context, tc *toolsets.ToolContext, a EditArgs) (toolsets.Result, error) {
	if a.OldString == "" {
		return toolsets.Result{}, toolsets.InvalidArguments("old_string", "old_string is empty", "Give the exact text to replace; use write_file to write a file whole.")
	}
	if a.OldString == a.NewString {
		return toolsets.Result{}, toolsets.InvalidArguments("new_string", "new_string equals old_string", "Give the text that should replace old_string.")
	}
	b, err := t.fs.ReadFile(ctx, a.Path)
	if err != nil {
		return toolsets.Result{}, environment.ToolError(err)
	}
	old := string(b)
	n := strings.Count(old, a.OldString)
	switch {
	case n == 0:
		return toolsets.Result{}, &toolsets.FeedbackError{
			Message:  fmt.Sprintf("old_string does not occur in %q, so nothing was changed. Read the file with read_file and copy the exact text, whitespace and indentation included.", a.Path),
			Metadata: map[string]any{"reason": ReasonNoMatch},
		}
	case n > 1 && !a.ReplaceAll:
		return toolsets.Result{}, &toolsets.FeedbackError{
			Message:  fmt.Sprintf("old_string occurs %d times in %q, so nothing was changed. Include more of the surrounding lines to make it unique, or set replace_all to replace all %d.", n, a.Path, n),
			Metadata: map[string]any{"reason": ReasonAmbiguous, "occurrences": n},
		}
	}
	data := []byte(strings.Replace(old, a.OldString, a.NewString, max(n, 1)))
	info, err := t.fs.WriteFile(ctx, a.Path, data)
	if err != nil {
		return toolsets.Result{}, environment.ToolError(err)
	}
	e := environment.WriteEffect(tc, environment.EffectEdit, a.Path, data, info)
	e.Replacements = n
	return effectResult(e), nil
}
