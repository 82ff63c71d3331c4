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
