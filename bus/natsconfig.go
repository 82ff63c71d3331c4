package bus

import (
	"fmt"
	"strings"
)

// NATSAuthorization renders the role permissions of l as the
// "authorization" block of a nats-server configuration file: one nkey user
// per role, whose public key is key(role) — a key such as
// Credentials.PublicKey returns, or a configuration variable such as
// "$WEFT_NKEY_NODE" that nats-server resolves from its environment
// (NKeyEnv). An external NATS cluster with this block in its configuration
// gives every connection the same permissions as weft serve's embedded
// server. The block holds public keys only.
func (l Layout) NATSAuthorization(key func(Role) string) string {
	var b strings.Builder
	b.WriteString("# weft's roles (weft auth-config; README \"Security model\").\n")
	b.WriteString("authorization {\n  users = [\n")
	for _, r := range Roles() {
		k := key(r)
		if !strings.HasPrefix(k, "$") {
			k = quote(k)
		}
		fmt.Fprintf(&b, "    # %s\n    {\n      nkey: %s\n", r, k)
		p := l.Permissions(r)
		if !p.Unrestricted {
			b.WriteString("      permissions: {\n")
			writeSide(&b, "publish", p.PublishAllow, p.PublishDeny)
			writeSide(&b, "subscribe", p.SubscribeAllow, p.SubscribeDeny)
			b.WriteString("      }\n")
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// NKeyEnv is the environment variable the deployment's nats-server
// configuration reads role r's public key from: "WEFT_NKEY_NODE", ….
func NKeyEnv(r Role) string { return "WEFT_NKEY_" + strings.ToUpper(string(r)) }

func writeSide(b *strings.Builder, side string, allow, deny []string) {
	fmt.Fprintf(b, "        %s: {\n", side)
	for _, l := range []struct {
		name string
		subj []string
	}{{"allow", allow}, {"deny", deny}} {
		if len(l.subj) == 0 {
			continue
		}
		q := make([]string, len(l.subj))
		for i, s := range l.subj {
			q[i] = quote(s)
		}
		fmt.Fprintf(b, "          %s: [%s]\n", l.name, strings.Join(q, ", "))
	}
	b.WriteString("        }\n")
}

// quote writes s as a double-quoted configuration string (subjects hold no
// quote or backslash).
func quote(s string) string { return `"` + s + `"` }
