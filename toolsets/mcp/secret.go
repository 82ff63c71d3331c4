package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
)

// Value is a header or environment value of a server. It is read when a
// session opens: from the environment variable Env (with Prefix before
// it, e.g. "Bearer "), or Text when Env is empty. Either way the value is
// a secret: it never appears in an event, an error or a log line.
type Value struct {
	Env    string
	Prefix string
	Text   string
}

// FromEnv is the value of the environment variable name.
func FromEnv(name string) Value { return Value{Env: name} }

// Bearer is "Bearer " followed by the value of the environment variable
// name: an Authorization header.
func Bearer(name string) Value { return Value{Env: name, Prefix: "Bearer "} }

// Literal is a fixed value (kept out of the log like the others).
func Literal(s string) Value { return Value{Text: s} }

func (v Value) check() error {
	if v.Env != "" && v.Text != "" {
		return errors.New("both Env and Text are set")
	}
	return nil
}

// resolve reads v. An unset variable is an error naming the variable.
func (v Value) resolve() (string, error) {
	if v.Env == "" {
		return v.Prefix + v.Text, nil
	}
	s, ok := os.LookupEnv(v.Env)
	if !ok {
		return "", fmt.Errorf("environment variable %s is not set", v.Env)
	}
	return v.Prefix + s, nil
}

// minSecret is the shortest value scrubbed from messages: shorter ones
// would erase ordinary words and cannot hide much.
const minSecret = 4

// redactor scrubs a server's resolved secrets from text.
type redactor struct{ secrets []string }

func (r *redactor) add(v Value, resolved string) {
	for _, s := range []string{resolved, strings.TrimPrefix(resolved, v.Prefix)} {
		if len(s) >= minSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	// Longest first, so that a value containing another goes whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// urlSecrets adds what a URL may hold of credentials: its password and
// its query values (an api_key=… parameter), which Go's HTTP errors print.
func (r *redactor) urlSecrets(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if p, ok := u.User.Password(); ok {
		r.add(Value{}, p)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			r.add(Value{}, v)
			r.add(Value{}, url.QueryEscape(v))
		}
	}
}

// scrub returns s without any secret.
func (r *redactor) scrub(s string) string {
	if r == nil {
		return s
	}
	for _, x := range r.secrets {
		s = strings.ReplaceAll(s, x, "[redacted]")
	}
	return s
}
