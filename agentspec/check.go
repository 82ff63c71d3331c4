package agentspec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/weft-run/weft/llm/providers"
)

// check finds what the schema cannot: duplicate agent names, environment
// variables that are empty now, inconsistent fields, missing roots.
func (f *File) check() error {
	seen := map[string]bool{}
	for i := range f.Agents {
		a := &f.Agents[i]
		p := fmt.Sprintf("agents[%d]", i)
		if seen[a.Name] {
			return f.errAt(p+".name", "agent %q is declared twice", a.Name)
		}
		seen[a.Name] = true
		if err := f.checkModel(p+".model", a.Model.Name, a.Model.BaseURL, a.Model.APIKeyEnv); err != nil {
			return err
		}
		for j, fb := range a.Model.Fallbacks {
			if err := f.checkModel(fmt.Sprintf("%s.model.fallbacks[%d]", p, j), fb.Name, fb.BaseURL, fb.APIKeyEnv); err != nil {
				return err
			}
		}
		for j := range a.Toolsets {
			if err := f.checkToolset(fmt.Sprintf("%s.toolsets[%d]", p, j), &a.Toolsets[j]); err != nil {
				return err
			}
		}
	}
	_, err := f.agentToolOrder()
	return err
}

func (f *File) checkModel(p, name, baseURL, keyEnv string) error {
	provider, _, _ := strings.Cut(name, ":")
	if provider == providers.OpenAICompatible && baseURL == "" {
		return f.errAt(p+".name", "an openai-compatible model needs base_url")
	}
	if keyEnv != "" {
		return f.checkEnv(p+".api_key_env", keyEnv)
	}
	switch provider {
	case providers.OpenAI:
		return f.checkEnv(p+".name", "OPENAI_API_KEY")
	case providers.Anthropic:
		return f.checkEnv(p+".name", "ANTHROPIC_API_KEY")
	}
	return nil
}

// checkEnv refuses an environment variable that is empty or unset; the
// error names the variable, never a value.
func (f *File) checkEnv(p, env string) error {
	if os.Getenv(env) == "" {
		return f.errAt(p, "environment variable %s is empty or not set", env)
	}
	return nil
}

func (f *File) checkToolset(p string, ts *Toolset) error {
	switch {
	case ts.MCP != nil:
		m := ts.MCP
		p += ".mcp"
		if m.URL == "" && (m.Transport != "") {
			return f.errAt(p+".transport", "transport is for a server with a url")
		}
		if m.Command == "" && (len(m.Args) > 0 || len(m.Env) > 0 || m.Dir != "") {
			return f.errAt(p+".name", "args, env and dir are for a server with a command")
		}
		if m.Mode == "deferred" && len(m.Tools) == 0 {
			return f.errAt(p+".mode", "deferred mode needs declared tools")
		}
		for _, k := range sortedKeys(m.Env) {
			if err := f.checkEnv(p+".env."+k, m.Env[k]); err != nil {
				return err
			}
		}
		for _, k := range sortedKeys(m.Headers) {
			if err := f.checkEnv(p+".headers."+k+".env", m.Headers[k].Env); err != nil {
				return err
			}
		}
	case ts.Filesystem != nil:
		return f.checkRoot(p+".filesystem.root", ts.Filesystem.Root)
	case ts.Shell != nil:
		for i, env := range ts.Shell.InheritEnv {
			if err := f.checkEnv(fmt.Sprintf("%s.shell.inherit_env[%d]", p, i), env); err != nil {
				return err
			}
		}
		return f.checkRoot(p+".shell.root", ts.Shell.Root)
	case ts.Search != nil:
		return f.checkOver(p+".search.over", ts.Search.Over)
	case ts.Proxy != nil:
		return f.checkOver(p+".proxy.over", ts.Proxy.Over)
	}
	return nil
}

func (f *File) checkOver(p string, over []Toolset) error {
	for i := range over {
		if over[i].Remote != nil {
			return f.errAt(fmt.Sprintf("%s[%d].remote", p, i), "remote tools cannot be searched: list them in the agent's toolsets")
		}
		if err := f.checkToolset(fmt.Sprintf("%s[%d]", p, i), &over[i]); err != nil {
			return err
		}
	}
	return nil
}

func (f *File) checkRoot(p, root string) error {
	st, err := os.Stat(f.path(root))
	switch {
	case err != nil:
		return f.errAt(p, "root %q: %v", root, err)
	case !st.IsDir():
		return f.errAt(p, "root %q is not a directory", root)
	}
	return nil
}

// path resolves a root in the file's directory.
func (f *File) path(root string) string {
	if filepath.IsAbs(root) {
		return root
	}
	return filepath.Join(f.dir, root)
}

// errAt is an error at the field path p.
func (f *File) errAt(p, format string, args ...any) *Error {
	return &Error{File: f.name, Line: f.line(p), Field: p, Msg: fmt.Sprintf(format, args...)}
}

// line is the line of the field path p, or of its nearest parent.
func (f *File) line(p string) int {
	for p != "" {
		if n, ok := f.lines[p]; ok {
			return n
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0
}
