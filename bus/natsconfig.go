package bus

import (
	"fmt"
	"strings"
)

// NATSAccounts renders the roles of l as the "accounts" block of a
// nats-server configuration: the node account (NodeAccount, with
// JetStream) and one account per lesser role (Role.Account), each holding
// the role's nkey user with its permissions, and the exports and imports
// between them (Layout.Imports). The public key of role r is key(r) — a
// key such as Credentials.PublicKey returns, or a configuration variable
// such as "$WEFT_NKEY_NODE" that nats-server resolves from its
// environment (NKeyEnv). An external NATS cluster with this block in its
// configuration gives every connection what weft serve's embedded server
// gives it, and needs a JetStream API guard (ServeJSGuard) on a node
// connection: weft serve runs one. The block holds public keys only.
func (l Layout) NATSAccounts(key func(Role) string) string {
	imports := l.AllImports()
	var b strings.Builder
	b.WriteString("# weft's roles, each in its account (weft auth-config; README \"Security model\").\n")
	b.WriteString("accounts {\n")
	for _, r := range Roles() {
		acc := r.Account()
		k := key(r)
		if !strings.HasPrefix(k, "$") {
			k = quote(k)
		}
		fmt.Fprintf(&b, "  # %s\n  %s {\n", r, acc)
		if r == RoleNode {
			b.WriteString("    jetstream: enabled\n")
		}
		fmt.Fprintf(&b, "    users: [\n      {\n        nkey: %s\n", k)
		if p := l.Permissions(r); !p.Unrestricted {
			b.WriteString("        permissions: {\n")
			writeSide(&b, "publish", p.PublishAllow, p.PublishDeny)
			writeSide(&b, "subscribe", p.SubscribeAllow, p.SubscribeDeny)
			b.WriteString("        }\n")
		}
		b.WriteString("      }\n    ]\n")
		if ex := exportsOf(acc, imports); len(ex) > 0 {
			b.WriteString("    exports: [\n")
			for _, e := range ex {
				kind, resp := "stream", ""
				if e.Service {
					kind = "service"
					if e.Streamed {
						resp = ", response_type: stream"
					}
				}
				fmt.Fprintf(&b, "      {%s: %s%s, accounts: [%s]}\n", kind, quote(e.Subject), resp, strings.Join(e.Accounts, ", "))
			}
			b.WriteString("    ]\n")
		}
		if im := importsOf(acc, imports); len(im) > 0 {
			b.WriteString("    imports: [\n")
			for _, i := range im {
				kind, to := "stream", ""
				if i.Service {
					kind = "service"
				}
				if i.To != "" {
					to = ", to: " + quote(i.To)
				}
				fmt.Fprintf(&b, "      {%s: {account: %s, subject: %s}%s}\n", kind, i.Exporter, quote(i.Subject), to)
			}
			b.WriteString("    ]\n")
		}
		b.WriteString("  }\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// NKeyEnv is the environment variable the deployment's nats-server
// configuration reads role r's public key from: "WEFT_NKEY_NODE", ….
func NKeyEnv(r Role) string { return "WEFT_NKEY_" + strings.ToUpper(string(r)) }

func writeSide(b *strings.Builder, side string, allow, deny []string) {
	fmt.Fprintf(b, "          %s: {\n", side)
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
		fmt.Fprintf(b, "            %s: [%s]\n", l.name, strings.Join(q, ", "))
	}
	b.WriteString("          }\n")
}

// quote writes s as a double-quoted configuration string (subjects hold no
// quote or backslash).
func quote(s string) string { return `"` + s + `"` }
