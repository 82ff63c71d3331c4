package agentspec

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// AgentVersion returns the version of the agent named name: "sha256:" and the
// first 16 hex digits of the SHA-256 of its declaration (as JSON, with the
// rate limits of the providers its models use), or "" when the file
// declares no such agent. Two files that declare an agent alike give it
// the same version, whatever else they change; a change of any of its
// fields (or of a rate limit it shares) gives a new one. The versions of
// the agents it calls as tools (agent_tools) are part of it, so a change
// of one of those gives the caller a new version too, and a reload
// rebuilds the caller with the callee's new version. The Go tools a
// program adds (Register's extra) are not part of it.
//
// Register records it under MetaVersion in every run's run.started event,
// so a session keeps, in its log, the version of the agent it started
// with. A reload compares the versions of the new file with the
// registered ones: an agent whose version did not change is kept as it
// is; one whose version changed is registered anew for new runs, and a
// session whose runs recorded another version is one started before the
// change.
func (f *File) AgentVersion(name string) string {
	return f.agentVersion(name, nil)
}

// agentVersion is AgentVersion; path holds the callers on the way to
// name, so that a cycle of agent_tools (which check refuses at Parse)
// cannot recurse without end.
func (f *File) agentVersion(name string, path []string) string {
	i := f.agent(name)
	if i < 0 || slices.Contains(path, name) {
		return ""
	}
	a := f.Agents[i]
	var callees map[string]string
	for _, c := range a.AgentTools {
		if callees == nil {
			callees = map[string]string{}
		}
		callees[c] = f.agentVersion(c, append(path, name))
	}
	limits := map[string]RateLimit{}
	for _, m := range append([]ModelRef{{Name: a.Model.Name}}, a.Model.Fallbacks...) {
		provider, _, _ := strings.Cut(m.Name, ":")
		if rl, ok := f.RateLimits[provider]; ok {
			limits[provider] = rl
		}
	}
	b, err := json.Marshal(struct {
		Agent      Agent                `json:"agent"`
		RateLimits map[string]RateLimit `json:"rate_limits,omitempty"`
		AgentTools map[string]string    `json:"agent_tools,omitempty"`
	}{a, limits, callees})
	if err != nil {
		// The spec types always encode; a failure is a bug.
		panic("agentspec: encode an agent: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:8])
}

// Versions returns the version of every agent of the file, by name.
func (f *File) Versions() map[string]string {
	out := make(map[string]string, len(f.Agents))
	for _, a := range f.Agents {
		out[a.Name] = f.AgentVersion(a.Name)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.SortedFunc(maps.Keys(m), cmp.Compare) }

func jsonOf(v any) (json.RawMessage, error) { return json.Marshal(v) }
