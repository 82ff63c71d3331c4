package toolsets

import "reflect"

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
	for range 8 {
		if t == nil {
			break
		}
		if v, ok := t.(T); ok {
			return v, true
		}
		var inner Tool
		if u, ok := t.(interface{ Unwrap() Tool }); ok {
			inner = u.Unwrap()
		} else if e, ok := embeddedTool(t); ok {
			inner = e
		}
		t = inner
	}
	var zero T
	return zero, false
}

var toolType = reflect.TypeFor[Tool]()

// embeddedTool returns the Tool embedded in struct (or *struct) t.
func embeddedTool(t Tool) (Tool, bool) {
	v := reflect.ValueOf(t)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil, false
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Anonymous && f.Type == toolType && !v.Field(i).IsNil() {
			return v.Field(i).Interface().(Tool), true
		}
	}
	return nil, false
}
