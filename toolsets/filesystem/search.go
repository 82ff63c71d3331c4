package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/weft-run/weft/toolsets"
	"github.com/weft-run/weft/toolsets/environment"
)

// Search limits.
const (
	// MaxWalkEntries caps the entries one glob or grep visits.
	MaxWalkEntries = 50_000
	// MaxGlobResults caps the paths glob returns.
	MaxGlobResults = 1000
	// DefaultGrepMatches and MaxGrepMatches bound the matches grep
	// returns.
	DefaultGrepMatches = 100
	MaxGrepMatches     = 1000
	// MaxMatchLine caps the bytes of a matching line grep returns.
	MaxMatchLine = 500
)

// errWalkLimit stops a walk at MaxWalkEntries.
var errWalkLimit = errors.New("walk limit")

// walk calls fn for every entry under dir (not dir itself), depth first
// in name order, with its path relative to the root. Symbolic links are
// reported, not followed. It stops at MaxWalkEntries entries and reports
// whether it did.
func walk(ctx context.Context, fsys environment.FileSystem, dir string, fn func(p string, fi environment.FileInfo) error) (bool, error) {
	seen := 0
	var rec func(d string) error
	rec = func(d string) error {
		infos, err := fsys.ReadDir(ctx, d)
		if err != nil {
			return err
		}
		for _, fi := range infos {
			if seen++; seen > MaxWalkEntries {
				return errWalkLimit
			}
			p := path.Join(d, fi.Name)
			if err := fn(p, fi); err != nil {
				return err
			}
			if fi.IsDir() {
				if err := rec(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := rec(dir)
	if errors.Is(err, errWalkLimit) {
		return true, nil
	}
	return false, err
}

// pattern is a glob pattern split into segments; "**" matches any number
// of segments, the others match one as path.Match does.
type pattern []string

func newPattern(p string) (pattern, error) {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, err
		}
	}
	return segs, nil
}

// base is the directory holding every match: the segments before the
// first one with a meta character.
func (pt pattern) base() string {
	var fixed []string
	for _, s := range pt[:len(pt)-1] {
		if strings.ContainsAny(s, `*?[\`) {
			break
		}
		fixed = append(fixed, s)
	}
	if len(fixed) == 0 {
		return "."
	}
	return path.Join(fixed...)
}

func (pt pattern) match(p string) bool { return matchSegs(pt, strings.Split(p, "/")) }

func matchSegs(pt, name []string) bool {
	for len(pt) > 0 {
		if pt[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pt[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pt[0], name[0]); !ok {
			return false
		}
		pt, name = pt[1:], name[1:]
	}
	return len(name) == 0
}

// GlobArgs are glob's arguments.
type GlobArgs struct {
	Pattern string `json:"pattern" jsonschema:"a glob relative to the root: src/*.go, **/*_test.go, docs/**"`
}

// GlobResult is glob's content.
type GlobResult struct {
	Paths []string `json:"paths"`
	// Truncated reports that there were more than MaxGlobResults
	// matches, or more entries than a search visits.
	Truncated bool `json:"truncated,omitempty"`
}

var errEnough = errors.New("enough")

func (t *tools) glob(ctx context.Context, _ *toolsets.ToolContext, a GlobArgs) (GlobResult, error) {
	pt, err := newPattern(a.Pattern)
	if err != nil || a.Pattern == "" {
		return GlobResult{}, toolsets.InvalidArguments("pattern", fmt.Sprintf("bad glob pattern %q", a.Pattern), "Use *, ?, [...] within a segment and ** for any number of segments.")
	}
	res := GlobResult{Paths: []string{}}
	limited, err := walk(ctx, t.fs, pt.base(), func(p string, _ environment.FileInfo) error {
		if !pt.match(p) {
			return nil
		}
		if len(res.Paths) == MaxGlobResults {
			res.Truncated = true
			return errEnough
		}
		res.Paths = append(res.Paths, p)
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return GlobResult{}, environment.ToolError(err)
	}
	res.Truncated = res.Truncated || limited
	return res, nil
}

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern         string `json:"pattern" jsonschema:"a regular expression (RE2 syntax)"`
	Path            string `json:"path,omitempty" jsonschema:"a directory to search under, or one file (default: the root)"`
	Glob            string `json:"glob,omitempty" jsonschema:"only files whose path matches this glob (e.g. **/*.go)"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
	MaxMatches      int    `json:"max_matches,omitempty" jsonschema:"at most this many matches (default 100, at most 1000)"`
}

// Match is one matching line.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepResult is grep's content.
type GrepResult struct {
	Matches []Match `json:"matches"`
	// Truncated reports that the search stopped at MaxMatches, or at the
	// entries a search visits.
	Truncated bool `json:"truncated,omitempty"`
	// Skipped counts files not searched: binary, over the read cap, or
	// refused.
	Skipped int `json:"skipped,omitempty"`
}

func (t *tools) grep(ctx context.Context, _ *toolsets.ToolContext, a GrepArgs) (GrepResult, error) {
	expr := a.Pattern
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return GrepResult{}, toolsets.InvalidArguments("pattern", err.Error(), "Give an RE2 regular expression.")
	}
	var filter pattern
	if a.Glob != "" {
		if filter, err = newPattern(a.Glob); err != nil {
			return GrepResult{}, toolsets.InvalidArguments("glob", fmt.Sprintf("bad glob pattern %q", a.Glob), "Use *, ?, [...] within a segment and ** for any number of segments.")
		}
	}
	limit := DefaultGrepMatches
	if a.MaxMatches > 0 {
		limit = min(a.MaxMatches, MaxGrepMatches)
	}
	res := GrepResult{Matches: []Match{}}
	search := func(p string) error {
		b, err := t.fs.ReadFile(ctx, p)
		if err != nil {
			if _, refused := environment.Refusal(err); refused {
				res.Skipped++
				return nil
			}
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			res.Skipped++
			return nil
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, len(b)+1)
		for n := 1; sc.Scan(); n++ {
			if !re.Match(sc.Bytes()) {
				continue
			}
			if len(res.Matches) == limit {
				res.Truncated = true
				return errEnough
			}
			line := sc.Text()
			if len(line) > MaxMatchLine {
				line = line[:MaxMatchLine]
			}
			res.Matches = append(res.Matches, Match{Path: p, Line: n, Text: line})
		}
		return sc.Err()
	}
	root := a.Path
	if root == "" {
		root = "."
	}
	fi, err := t.fs.Stat(ctx, root)
	if err != nil {
		return GrepResult{}, environment.ToolError(err)
	}
	if !fi.IsDir() {
		err = search(root)
	} else {
		var limited bool
		limited, err = walk(ctx, t.fs, root, func(p string, fi environment.FileInfo) error {
			if !fi.Mode.IsRegular() || filter != nil && !filter.match(p) {
				return nil
			}
			return search(p)
		})
		res.Truncated = res.Truncated || limited
	}
	if err != nil && !errors.Is(err, errEnough) {
		return GrepResult{}, environment.ToolError(err)
	}
	return res, nil
}
