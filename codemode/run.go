package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/weft-run/weft/toolsets"
)

// The limits of one run of a program.
const (
	// MaxSource is the largest program source, in bytes.
	MaxSource = 64 << 10
	// MaxSteps is the most Starlark execution steps a run may take.
	MaxSteps = 1_000_000
	// MaxOutput is the most print output kept, in bytes; the rest is cut.
	MaxOutput = 16 << 10
	// MaxWall is the longest a run may take.
	MaxWall = 10 * time.Second
	// MaxAllocBytes is how much the process may allocate while a run
	// runs before it is stopped (the count is process-wide).
	MaxAllocBytes = 256 << 20
)

// Outcome is what one run of a program gives.
type Outcome struct {
	// Output is what the program printed (cut at MaxOutput).
	Output string
	// Value is the rendered value of the program's last expression, ""
	// when it is not an expression or is None.
	Value string
	// Call is the call the program stopped at: the first without a
	// recorded return. nil when the program finished.
	Call *toolsets.CodeCall
	// Calls is how many calls of tools the program made (replayed ones
	// included).
	Calls int
	// State is what the program leaves (when it finished).
	State toolsets.CodeState
}

// fileOptions are the Starlark dialect: top-level if/for/while, global
// reassignment; no recursion, no set literals beyond the standard.
var fileOptions = &syntax.FileOptions{While: true, TopLevelControl: true, GlobalReassign: true}

// valueName is the hidden global that receives the last expression.
const valueName = "__value__"

// errStop unwinds a program at its first call without a recorded return.
var errStop = errors.New("codemode: stopped at a call without a recorded return")

// Run runs the program src once against env, with the journal and the
// durable variables of in (nil: none): every call of a tool whose return
// the journal holds gets that return; the first without stops the
// program (Outcome.Call). Nothing outside env is reachable: no load, no
// files, no clock, no environment. ctx's end stops the program.
func (e *Env) Run(ctx context.Context, src string, in *toolsets.CodeInput) (*Outcome, error) {
	if len(src) > MaxSource {
		return nil, &RefusedError{Reason: fmt.Sprintf("the source is %d bytes; the limit is %d", len(src), MaxSource)}
	}
	f, err := fileOptions.Parse("program.star", src, 0)
	if err != nil {
		return nil, &RefusedError{Reason: "syntax error: " + err.Error()}
	}
	if err := e.checkNames(f); err != nil {
		return nil, err
	}
	if n := len(f.Stmts); n > 0 {
		if es, ok := f.Stmts[n-1].(*syntax.ExprStmt); ok {
			f.Stmts[n-1] = &syntax.AssignStmt{OpPos: syntax.Start(es.X), Op: syntax.EQ, LHS: &syntax.Ident{NamePos: syntax.Start(es.X), Name: valueName}, RHS: es.X}
		}
	}
	if in == nil {
		in = &toolsets.CodeInput{}
	}
	p := &program{env: e, journal: in.Journal}
	predeclared, restored := e.predeclared(in, p)
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, &RefusedError{Reason: e.nameHint(err)}
	}
	thread := &starlark.Thread{Name: "program", Print: p.print}
	thread.Load = func(*starlark.Thread, string) (starlark.StringDict, error) {
		return nil, errors.New("load is not available to programs")
	}
	thread.SetMaxExecutionSteps(MaxSteps)
	stop := watch(ctx, thread, &p.limit)
	globals, err := prog.Init(thread, predeclared)
	stop()
	out := &Outcome{Output: p.out.String(), Calls: p.calls}
	if p.truncated {
		out.Output += fmt.Sprintf("\n…(output cut at %d bytes)", MaxOutput)
	}
	switch {
	case p.stopAt != nil:
		out.Call = p.stopAt
		return out, nil
	case p.diverged != nil:
		return nil, p.diverged
	case err != nil:
		return nil, p.failure(err, thread)
	}
	if v, ok := globals[valueName]; ok && v != starlark.None {
		out.Value = Render(v)
	}
	out.State = e.state(in, restored, globals)
	return out, nil
}

// failure is the error a run that failed with err ends with.
func (p *program) failure(err error, thread *starlark.Thread) error {
	if p.limit.Limit != "" {
		l := p.limit
		return &l
	}
	if strings.Contains(err.Error(), "too many steps") {
		return &LimitError{Limit: "steps", Detail: fmt.Sprintf("more than %d execution steps", MaxSteps)}
	}
	var ee *starlark.EvalError
	msg := err.Error()
	if errors.As(err, &ee) {
		msg = ee.Backtrace()
	}
	return &ProgramError{Message: msg, Tool: p.failedTool}
}

// program is the state of one run.
type program struct {
	env        *Env
	journal    []toolsets.Return
	calls      int
	stopAt     *toolsets.CodeCall
	diverged   *DivergenceError
	failedTool string
	out        strings.Builder
	truncated  bool
	limit      LimitError // set by the watch when it stops the thread
}

func (p *program) print(_ *starlark.Thread, msg string) {
	if p.truncated {
		return
	}
	if p.out.Len()+len(msg)+1 > MaxOutput {
		p.out.WriteString(msg[:max(0, min(len(msg), MaxOutput-p.out.Len()))])
		p.truncated = true
		return
	}
	p.out.WriteString(msg)
	p.out.WriteByte('\n')
}

// call is a program's call of tool def: replayed from the journal, or the
// stop at the first call without a recorded return.
func (p *program) call(def toolsets.Definition, params []string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > len(params) {
		return nil, fmt.Errorf("%s() takes %d positional arguments but %d were given", def.Name, len(params), len(args))
	}
	m := make(map[string]any, len(args)+len(kwargs))
	for i, a := range args {
		v, err := toGo(a, false)
		if err != nil {
			return nil, fmt.Errorf("%s(): argument %q: %w", def.Name, params[i], err)
		}
		m[params[i]] = v
	}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s() got multiple values for argument %q", def.Name, k)
		}
		v, err := toGo(kv[1], false)
		if err != nil {
			return nil, fmt.Errorf("%s(): argument %q: %w", def.Name, k, err)
		}
		m[k] = v
	}
	n := p.calls
	p.calls++
	if n >= len(p.journal) {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%s(): the arguments are not JSON: %w", def.Name, err)
		}
		p.stopAt = &toolsets.CodeCall{Name: def.Name, Arguments: raw}
		return nil, errStop
	}
	rec := p.journal[n]
	if rec.ToolName != def.Name {
		p.diverged = &DivergenceError{Index: n + 1, Recorded: rec.ToolName, Got: def.Name}
		return nil, p.diverged
	}
	if !rec.Success {
		p.failedTool = def.Name
		typ, msg, ok := rec.CapturedError()
		if !ok || msg == "" {
			msg = toolsetsText(&rec)
		}
		if typ == "" {
			typ = string(rec.Kind)
		}
		return nil, fmt.Errorf("%s failed (%s): %s", def.Name, typ, msg)
	}
	if len(rec.Content) == 0 {
		return starlark.None, nil
	}
	return toStarlark(rec.Content, p.env.Objects)
}

func toolsetsText(ret *toolsets.Return) string {
	var s string
	if json.Unmarshal(ret.ModelContent(), &s) == nil {
		return s
	}
	return string(ret.ModelContent())
}

// watch stops thread when ctx ends, after MaxWall, or when the process
// allocated more than MaxAllocBytes since the start; the returned func
// ends the watch.
func watch(ctx context.Context, thread *starlark.Thread, lim *LimitError) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
		metrics.Read(sample)
		start := sample[0].Value.Uint64()
		wall := time.NewTimer(MaxWall)
		defer wall.Stop()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				*lim = LimitError{Limit: "cancelled", Detail: context.Cause(ctx).Error()}
				thread.Cancel("cancelled")
				return
			case <-wall.C:
				*lim = LimitError{Limit: "wall time", Detail: MaxWall.String()}
				thread.Cancel("wall time")
				return
			case <-tick.C:
				metrics.Read(sample)
				if sample[0].Value.Uint64()-start > MaxAllocBytes {
					*lim = LimitError{Limit: "memory", Detail: fmt.Sprintf("more than %d MiB allocated", MaxAllocBytes>>20)}
					thread.Cancel("memory")
					return
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// state is what a finished program leaves: the durable variables it
// started with, updated by its globals.
func (e *Env) state(in *toolsets.CodeInput, restored map[string]bool, globals starlark.StringDict) toolsets.CodeState {
	st := toolsets.CodeState{Values: map[string]json.RawMessage{}, Objects: map[string]string{}, Unkept: map[string]string{}}
	for k, v := range in.Variables {
		st.Values[k] = v
	}
	for k, v := range in.Objects {
		if restored[k] {
			st.Objects[k] = v
		}
	}
	names := make([]string, 0, len(globals))
	for k := range globals {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.HasPrefix(k, "_") {
			continue
		}
		v := globals[k]
		delete(st.Values, k)
		delete(st.Objects, k)
		if o, ok := v.(objectValue); ok && o.name != "" {
			st.Objects[k] = o.name
			continue
		}
		g, err := toGo(v, false)
		if err == nil {
			var raw []byte
			if raw, err = json.Marshal(g); err == nil {
				st.Values[k] = raw
				continue
			}
		}
		st.Unkept[k] = err.Error()
	}
	return st
}

// predeclared are the names a program starts with: the host's values and
// objects, the durable variables (objects bound again by name), and the
// tools. restored names the durable objects bound again.
func (e *Env) predeclared(in *toolsets.CodeInput, p *program) (starlark.StringDict, map[string]bool) {
	d := starlark.StringDict{}
	for k, v := range e.Values {
		if sv, err := toStarlark(v, e.Objects); err == nil {
			d[k] = sv
		}
	}
	for k, v := range e.Objects {
		d[k] = objectValue{obj: asObject(v), name: k}
	}
	for k, raw := range in.Variables {
		if sv, err := toStarlark(json.RawMessage(raw), e.Objects); err == nil {
			d[k] = sv
		}
	}
	restored := map[string]bool{}
	for k, handle := range in.Objects {
		if v, ok := e.Objects[handle]; ok {
			d[k] = objectValue{obj: asObject(v), name: handle}
			restored[k] = true
		}
	}
	for _, t := range e.Tools {
		def := t.Definition()
		if def.Visibility == toolsets.Hidden {
			continue
		}
		params := toolsets.PropertyOrder(def.Parameters)
		d[def.Name] = starlark.NewBuiltin(def.Name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return p.call(def, params, args, kwargs)
		})
	}
	if _, taken := d[DocstrName]; !taken {
		d[DocstrName] = starlark.NewBuiltin(DocstrName, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) != 1 || len(kwargs) != 0 {
				return nil, fmt.Errorf("docstr() takes one argument: a name or a value")
			}
			if s, ok := args[0].(starlark.String); ok {
				doc, err := e.Describe(string(s))
				return starlark.String(doc), err
			}
			if o, ok := args[0].(objectValue); ok {
				return starlark.String(describeObject(o.Type(), o.goValue())), nil
			}
			if b, ok := args[0].(*starlark.Builtin); ok {
				doc, err := e.Describe(b.Name())
				return starlark.String(doc), err
			}
			return starlark.String(args[0].Type() + ": " + Render(args[0])), nil
		})
	}
	return d, restored
}

// checkNames refuses a program that names a hidden tool, before anything
// runs.
func (e *Env) checkNames(f *syntax.File) error {
	hidden := map[string]bool{}
	for _, t := range e.Tools {
		if def := t.Definition(); def.Visibility == toolsets.Hidden {
			hidden[def.Name] = true
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	var found string
	syntax.Walk(f, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && hidden[id.Name] && found == "" {
			found = id.Name
		}
		return found == ""
	})
	if found != "" {
		return &RefusedError{Reason: fmt.Sprintf("the program names %q, which is not available to programs", found)}
	}
	return nil
}

// nameHint adds "did you mean" to a resolve error naming an undefined
// name: the closest visible tools and objects.
func (e *Env) nameHint(err error) string {
	msg := err.Error()
	const marker = "undefined: "
	i := strings.Index(msg, marker)
	if i < 0 {
		return msg
	}
	name := strings.Fields(msg[i+len(marker):])[0]
	return e.nameError("tool or variable", name)
}

// nameError says that no kind is named name, with "did you mean" and the
// closest visible tools, objects and values.
func (e *Env) nameError(kind, name string) string {
	var cands []string
	for _, t := range e.Tools {
		if def := t.Definition(); def.Visibility != toolsets.Hidden {
			cands = append(cands, def.Name)
		}
	}
	for k := range e.Objects {
		cands = append(cands, k)
	}
	for k := range e.Values {
		cands = append(cands, k)
	}
	msg := fmt.Sprintf("NameError: there is no %s named %q", kind, name)
	if c := toolsets.Closest(name, cands, 3); len(c) > 0 {
		msg += "; did you mean " + quoteOr(c) + "?"
	}
	return msg
}

func quoteOr(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
