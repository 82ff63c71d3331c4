package bus

import "strings"

// SubjectMatches reports whether subject matches the NATS subject filter
// filter: a '*' token matches any one token, a last '>' token matches one
// or more tokens, any other token only itself. It allocates nothing.
func SubjectMatches(filter, subject string) bool {
	for {
		f, fRest, fMore := strings.Cut(filter, ".")
		if f == ">" {
			return subject != ""
		}
		s, sRest, sMore := strings.Cut(subject, ".")
		if subject == "" && f != "" || f != "*" && f != s {
			return false
		}
		if !fMore || !sMore {
			return fMore == sMore
		}
		filter, subject = fRest, sRest
	}
}
