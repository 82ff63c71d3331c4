package toolsets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Running hooks under the rules of [Hook]: the Before chain, the After
// chain and what an After hook may change.

// Digest returns the "sha256:<hex>" digest of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// returnDigest digests ret's JSON as encoded, without its hook records.
func returnDigest(ret Return) string {
	ret.Hooks = nil
	b, err := json.Marshal(ret)
	if err != nil {
		return ""
	}
	return Digest(b)
}

// RunBefore runs the Before hooks of hooks on call in order. It returns the
// arguments to run with, the records of what the hooks did, and the
// refusal (nil when the call runs). Hooks that rewrote arguments are
// recorded, and check validates each rewrite (nil checks none).
func RunBefore(ctx context.Context, hooks []Hook, level HookLevel, call HookCall, check func(json.RawMessage) *InvalidArgumentsError) (json.RawMessage, []HookRecord, error) {
	lh := make([]levelHook, len(hooks))
	for i, h := range hooks {
		lh[i] = levelHook{h, level}
	}
	return runBefore(ctx, lh, call, check)
}

func runBefore(ctx context.Context, hooks []levelHook, call HookCall, check func(json.RawMessage) *InvalidArgumentsError) (json.RawMessage, []HookRecord, error) {
	var recs []HookRecord
	for _, h := range hooks {
		if h.Before == nil {
			continue
		}
		call.Level = h.level
		in := call.Arguments
		c := call
		c.Arguments = slices.Clone(in)
		err := callHook(func() error { return h.Before(ctx, &c) })
		if err != nil {
			recs = append(recs, HookRecord{Stage: "before", Level: h.level, Hook: h.Name, Action: ActionRefused, DigestBefore: Digest(in)})
			return nil, recs, refusal(h.Name, err)
		}
		if string(c.Arguments) == string(in) {
			continue
		}
		rec := HookRecord{Stage: "before", Level: h.level, Hook: h.Name, Action: ActionRewrote, DigestBefore: Digest(in), DigestAfter: Digest(c.Arguments)}
		if check != nil {
			if ia := check(c.Arguments); ia != nil {
				rec.Action = ActionRefused
				rec.Message = "the rewritten arguments do not fit the schema"
				if ia.Field != "" {
					rec.Message += " at " + ia.Field
				}
				recs = append(recs, rec)
				return nil, recs, NewUserError(fmt.Sprintf("hook %q rewrote the arguments into ones the tool does not accept (%s)", h.Name, rec.Message), nil)
			}
		}
		recs = append(recs, rec)
		call.Arguments = c.Arguments
	}
	return call.Arguments, recs, nil
}

// refusal is the error a Before hook's refusal becomes: its own kind,
// unless that kind would steer the run (suspend it, or end the call as
// cancelled or timed out), which a hook may not do.
func refusal(hook string, err error) error {
	k := KindOf(err)
	if k.Flags().Suspends || k == KindCancelled || k == KindTimeout || k == KindSuccess {
		return NewUserError(fmt.Sprintf("hook %q refused the call: %v", hook, err), nil)
	}
	return err
}

// callHook runs fn, turning a panic into an error.
func callHook(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hook panicked: %v", p)
		}
	}()
	return fn()
}

// RunAfter runs the After hooks of hooks on ret in reverse order under the
// rules of [Hook], appending their records to ret.Hooks.
func RunAfter(ctx context.Context, hooks []Hook, level HookLevel, call HookCall, ret Return) Return {
	lh := make([]levelHook, len(hooks))
	for i, h := range hooks {
		lh[i] = levelHook{h, level}
	}
	return runAfter(ctx, lh, call, ret)
}

func runAfter(ctx context.Context, hooks []levelHook, call HookCall, ret Return) Return {
	for i := len(hooks) - 1; i >= 0; i-- {
		h := hooks[i]
		if h.After == nil {
			continue
		}
		call.Level = h.level
		ret = afterOne(ctx, h, call, ret)
	}
	return ret
}

// afterOne runs one After hook on ret.
func afterOne(ctx context.Context, h levelHook, call HookCall, ret Return) Return {
	cp := ret.copyForHook()
	err := callHook(func() error { return h.After(ctx, call, &cp) })
	in := returnDigest(ret)
	rec := HookRecord{Stage: "after", Level: h.level, Hook: h.Name, DigestBefore: in}
	if ret.Kind != KindSuccess {
		if err != nil {
			rec.Action, rec.Message = ActionRefusedChange, fmt.Sprintf("an after hook failed on a %s return, which it cannot change", ret.Kind)
			ret.Hooks = append(ret.Hooks, rec)
		} else if out := returnDigest(cp); out != in {
			rec.Action, rec.DigestAfter = ActionRefusedChange, out
			rec.Message = fmt.Sprintf("a %s return cannot be changed by a hook", ret.Kind)
			ret.Hooks = append(ret.Hooks, rec)
		}
		return ret
	}
	if err != nil {
		failed := Return{CallID: ret.CallID, ToolName: ret.ToolName, Attempts: ret.Attempts, MaxAttempts: ret.MaxAttempts, Hooks: ret.Hooks}
		failed = failed.fromError(outcome{err: refusal(h.Name, fmt.Errorf("after hook %q: %w", h.Name, err))})
		rec.Action, rec.DigestAfter = ActionFailed, returnDigest(failed)
		failed.Hooks = append(failed.Hooks, rec)
		return failed
	}
	if why := forbiddenChange(ret, cp); why != "" {
		if out := returnDigest(cp); out != in {
			rec.Action, rec.DigestAfter, rec.Message = ActionRefusedChange, out, why
			ret.Hooks = append(ret.Hooks, rec)
		}
		return ret
	}
	for _, raw := range []json.RawMessage{cp.Content, cp.ModelOverride, cp.UserContent} {
		if raw != nil && !json.Valid(raw) {
			rec.Action, rec.Message = ActionRefusedChange, "the rewritten content is not JSON"
			ret.Hooks = append(ret.Hooks, rec)
			return ret
		}
	}
	next := ret
	next.Content, next.ModelOverride, next.UserContent = cp.Content, cp.ModelOverride, cp.UserContent
	next.Metadata = keepWeftMetadata(ret.Metadata, cp.Metadata)
	if _, err := json.Marshal(next.Metadata); err != nil {
		rec.Action, rec.Message = ActionRefusedChange, "the rewritten metadata is not JSON-encodable"
		ret.Hooks = append(ret.Hooks, rec)
		return ret
	}
	if out := returnDigest(next); out != in {
		rec.Action, rec.DigestAfter = ActionRewrote, out
		next.Hooks = append(slices.Clip(next.Hooks), rec)
		next.Value = nil // the live value no longer matches the content
	}
	return next
}

// copyForHook copies ret so that a hook's changes do not reach it.
func (ret Return) copyForHook() Return {
	cp := ret
	cp.Content = slices.Clone(ret.Content)
	cp.ModelOverride = slices.Clone(ret.ModelOverride)
	cp.UserContent = slices.Clone(ret.UserContent)
	cp.AppValue = slices.Clone(ret.AppValue)
	cp.Metadata = deepCopyMap(ret.Metadata)
	cp.PrivateMetadata = deepCopyMap(ret.PrivateMetadata)
	cp.Hooks = nil
	if ret.Control != nil {
		c := *ret.Control
		c.Metadata = deepCopyMap(c.Metadata)
		cp.Control = &c
	}
	return cp
}

// deepCopyMap copies m through JSON when it can, so that nested maps are
// not shared; else a shallow copy.
func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err == nil {
		var out map[string]any
		if json.Unmarshal(b, &out) == nil {
			return out
		}
	}
	return maps.Clone(m)
}

// forbiddenChange says which field an after hook changed that it may not
// change ("" when none).
func forbiddenChange(was, now Return) string {
	switch {
	case now.Kind != was.Kind || now.Success != was.Success || now.IsError != was.IsError:
		return "a hook cannot change the kind of a return"
	case now.CallID != was.CallID || now.ToolName != was.ToolName:
		return "a hook cannot change the call a return answers"
	case now.Attempts != was.Attempts || now.MaxAttempts != was.MaxAttempts:
		return "a hook cannot change the attempts of a return"
	case now.Control != nil:
		return "a hook cannot add control flow to a success"
	case string(now.AppValue) != string(was.AppValue):
		return "a hook cannot change the application value"
	}
	a, _ := json.Marshal(was.PrivateMetadata)
	b, _ := json.Marshal(now.PrivateMetadata)
	if string(a) != string(b) {
		return "a hook cannot change private metadata"
	}
	return ""
}

// keepWeftMetadata returns now with every "weft." key as was has it.
func keepWeftMetadata(was, now map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range now {
		if !strings.HasPrefix(k, "weft.") {
			out[k] = v
		}
	}
	for k, v := range was {
		if strings.HasPrefix(k, "weft.") {
			out[k] = v
		}
	}
	if len(out) == 0 && was == nil {
		return nil
	}
	return out
}

// RefusalReturn is the return of call callID of tool when a Before hook
// run outside a registry ([RunBefore]) refused it with err.
func RefusalReturn(callID, tool string, err error) Return {
	return Return{CallID: callID, ToolName: tool}.fromError(outcome{err: err})
}
