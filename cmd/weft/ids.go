package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// errAmbiguousID: a short id that begins more than one id.
var errAmbiguousID = errors.New("ambiguous id prefix")

// minPrefix is the shortest prefix that stands for an id: shorter, only
// the whole id is taken (a slip of one character must not pick an id).
const minPrefix = 4

// resolveID returns the id of ids that id names: itself when it is one of
// them, else the one id it begins (with at least minPrefix characters).
// A prefix of several ids is an errAmbiguousID listing them; an id that
// names none is returned as it is, for the caller to report as unknown.
func resolveID(what, id string, ids []string) (string, error) {
	if slices.Contains(ids, id) || len(id) < minPrefix {
		return id, nil
	}
	var found []string
	for _, c := range ids {
		if strings.HasPrefix(c, id) && !slices.Contains(found, c) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return id, nil
	case 1:
		return found[0], nil
	}
	slices.Sort(found)
	return "", fmt.Errorf("%w: %s %q begins %d of them: %s; give more of it", errAmbiguousID, what, id, len(found), strings.Join(found, ", "))
}
