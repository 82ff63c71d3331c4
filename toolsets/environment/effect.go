package environment

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/weft-run/weft/toolsets"
)

// MetaEffect is the key of the [Effect] in the public metadata of the
// return of a tool that changed something. The return is recorded in the
// call's tool.returned event, so the log holds every effect.
const MetaEffect = "effect"

// EffectKind is what an [Effect] did. The set is closed.
type EffectKind string

// The effect kinds.
const (
	// EffectWrite: a file was written whole.
	EffectWrite EffectKind = "write"
	// EffectEdit: a file was changed by replacing text in it.
	EffectEdit EffectKind = "edit"
	// EffectCommand: a command ran.
	EffectCommand EffectKind = "command"
)

// Effect is the record of one change an environment tool made: which
// call of which run of which session made it, and what it was.
type Effect struct {
	Kind EffectKind `json:"kind"`
	// SessionID, RunID and CallID are the call's key, from its
	// [toolsets.ToolContext].
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	CallID    string `json:"call_id"`
	// Tool is the name the tool was called by.
	Tool string `json:"tool"`

	// Path is the file written or edited, relative to the root.
	Path string `json:"path,omitempty"`
	// Bytes is the size of the content written.
	Bytes int64 `json:"bytes,omitempty"`
	// SHA256 is the hex SHA-256 of the content written.
	SHA256 string `json:"sha256,omitempty"`
	// Created reports that the file did not exist before.
	Created bool `json:"created,omitempty"`
	// PreviousBytes and PreviousSHA256 describe the content replaced.
	PreviousBytes  int64  `json:"previous_bytes,omitempty"`
	PreviousSHA256 string `json:"previous_sha256,omitempty"`
	// Replacements counts the replacements of an edit.
	Replacements int `json:"replacements,omitempty"`

	// Command is the command that ran: its script, or its argv.
	Script string   `json:"script,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	// ExitCode is the command's exit status (-1 when killed).
	ExitCode *int `json:"exit_code,omitempty"`
	// TimedOut reports a command killed at its timeout.
	TimedOut bool `json:"timed_out,omitempty"`
	// DurationMS is how long the command ran, in milliseconds.
	DurationMS int64 `json:"duration_ms,omitempty"`
}

// NewEffect returns an effect of kind keyed by tc's session, run and
// call. tc may be nil (a call outside a run): the key is then empty.
func NewEffect(tc *toolsets.ToolContext, kind EffectKind) Effect {
	e := Effect{Kind: kind}
	if tc != nil {
		e.SessionID, e.RunID, e.CallID, e.Tool = tc.SessionID, tc.RunID, tc.CallID, tc.ToolName
	}
	return e
}

// WriteEffect returns the effect of writing data to name, as info says
// the write went.
func WriteEffect(tc *toolsets.ToolContext, kind EffectKind, name string, data []byte, info WriteInfo) Effect {
	e := NewEffect(tc, kind)
	e.Path, e.Bytes, e.SHA256 = name, int64(len(data)), SHA256(data)
	e.Created, e.PreviousBytes, e.PreviousSHA256 = info.Created, info.PreviousSize, info.PreviousSHA256
	return e
}

// CommandEffect returns the effect of running cmd with result res.
func CommandEffect(tc *toolsets.ToolContext, cmd Command, res CommandResult) Effect {
	e := NewEffect(tc, EffectCommand)
	code := res.ExitCode
	e.Script, e.Argv, e.Dir, e.ExitCode = cmd.Script, cmd.Argv, cmd.Dir, &code
	e.TimedOut, e.DurationMS = res.TimedOut, res.Duration.Milliseconds()
	return e
}

// SHA256 returns the hex SHA-256 of b.
func SHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
