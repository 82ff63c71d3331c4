package bus

import "strings"

// NodeCommand returns the subject a command to session sessionID is
// forwarded on to the node that owns the session, such as
// "weft.node.n1.cmd.session.42.start". node must be a subject token.
func (s Subjects) NodeCommand(node, sessionID, verb string) (string, error) {
	if !ValidToken(node) {
		return "", &TokenError{What: "node id", Value: node, Reason: "not a subject token"}
	}
	sub, err := s.Command(sessionID, verb)
	if err != nil {
		return "", err
	}
	return s.root + ".node." + node + sub[len(s.root):], nil
}

// NodeCommands returns the filter matching every command forwarded to
// node: "weft.node.<node>.cmd.session.*.*".
func (s Subjects) NodeCommands(node string) (string, error) {
	if !ValidToken(node) {
		return "", &TokenError{What: "node id", Value: node, Reason: "not a subject token"}
	}
	return s.root + ".node." + node + ".cmd.session.*.*", nil
}

// ParseNodeCommand splits a subject built by NodeCommand for node into its
// (unescaped) session id and verb.
func (s Subjects) ParseNodeCommand(node, subject string) (sessionID, verb string, err error) {
	prefix := s.root + ".node." + node + "."
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", &TokenError{What: "node command subject", Value: subject, Reason: "does not start with " + prefix}
	}
	return s.ParseCommand(s.root + "." + rest)
}

// NodeTool returns the subject of a local tool call to the node that
// prepared its run, such as "weft.node.n1.tool.search". node must be a
// subject token.
//
// Deprecated: the runtime runs its local tool calls in its own process and
// no longer sends or serves them on NATS; nothing subscribes to these
// subjects.
func (s Subjects) NodeTool(node, name string) (string, error) {
	if !ValidToken(node) {
		return "", &TokenError{What: "node id", Value: node, Reason: "not a subject token"}
	}
	tok, err := EscapeToken(name)
	if err != nil {
		return "", &TokenError{What: "tool name", Value: name, Reason: "empty"}
	}
	return s.root + ".node." + node + ".tool." + tok, nil
}

// NodeTools returns the filter matching the subject of every local tool
// call sent to node: "weft.node.<node>.tool.*".
//
// Deprecated: see NodeTool.
func (s Subjects) NodeTools(node string) (string, error) {
	if !ValidToken(node) {
		return "", &TokenError{What: "node id", Value: node, Reason: "not a subject token"}
	}
	return s.root + ".node." + node + ".tool.*", nil
}
