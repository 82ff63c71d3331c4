package toolsets

// Tool returns the tool registered as name, as it was registered (the
// wrappers that show it under this name included), and whether there is
// one. Use [Find] to reach what it wraps.
func (r *Registry) Tool(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e := r.entries[name]
	if e == nil {
		return nil, false
	}
	return e.tool, true
}

// Find returns t, or the first tool t wraps that is a T: it looks through
// the tools that wrappers show under another definition ([Prefixed],
// [Renamed], [Annotated], [Prepared]; any tool with an Unwrap() Tool
// method) and through a struct's embedded Tool field, at most eight levels
// deep. It tells what a tool is whatever name or definition it is offered
// under.
func Find[T any](t Tool) (T, bool) {
	if t == nil {
		var zero T
		return zero, false
	}
	return findTool[T](t)
}
