package bus

import (
	"fmt"
	"net"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// roleAccounts sets opts up for the credentials c in layout l: one nkey
// user per role, each with the role's permissions, node in the server's
// global account (so that a data directory keeps its streams), every
// lesser role in its own account (Role.Account). The exports and imports
// between them are added by linkAccounts once the server exists.
func roleAccounts(opts *server.Options, c *Credentials, l Layout) {
	for _, r := range Roles() {
		u := &server.NkeyUser{Nkey: c.PublicKey(r), Permissions: l.Permissions(r).server()}
		if r != RoleNode {
			u.Account = server.NewAccount(r.Account())
			opts.Accounts = append(opts.Accounts, u.Account)
		}
		opts.Nkeys = append(opts.Nkeys, u)
	}
}

// linkAccounts adds the exports and imports of l (Layout.AllImports)
// between the accounts of srv, the node account being the global one:
// every export first, then every import.
func linkAccounts(srv *server.Server, l Layout) error {
	imports := l.AllImports()
	lookup := func(name string) (*server.Account, error) {
		if name == RoleNode.Account() {
			return srv.GlobalAccount(), nil
		}
		return srv.LookupAccount(name)
	}
	for _, r := range Roles() {
		acc, err := lookup(r.Account())
		if err != nil {
			return err
		}
		for _, e := range exportsOf(r.Account(), imports) {
			to := make([]*server.Account, 0, len(e.Accounts))
			for _, name := range e.Accounts {
				a, err := lookup(name)
				if err != nil {
					return err
				}
				to = append(to, a)
			}
			switch {
			case e.Service && e.Streamed:
				err = acc.AddServiceExportWithResponse(e.Subject, server.Streamed, to)
			case e.Service:
				err = acc.AddServiceExport(e.Subject, to)
			default:
				err = acc.AddStreamExport(e.Subject, to)
			}
			if err != nil {
				return fmt.Errorf("export %s from %s: %w", e.Subject, r.Account(), err)
			}
		}
	}
	for _, im := range imports {
		dst, err := lookup(im.Importer)
		if err != nil {
			return err
		}
		src, err := lookup(im.Exporter)
		if err != nil {
			return err
		}
		if im.Service {
			err = dst.AddServiceImport(src, im.Local(), im.Subject)
		} else {
			err = dst.AddStreamImport(src, im.Subject, "")
		}
		if err != nil {
			return fmt.Errorf("import %s into %s: %w", im.Subject, im.Importer, err)
		}
	}
	return nil
}

// server converts p to nats-server's permissions (nil: everything).
func (p Permissions) server() *server.Permissions {
	if p.Unrestricted {
		return nil
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: p.PublishAllow, Deny: p.PublishDeny},
		Subscribe: &server.SubjectPermission{Allow: p.SubscribeAllow, Deny: p.SubscribeDeny},
	}
}

// IsLoopback reports whether host (of a listen address) is reachable only
// from this machine: "localhost" or a loopback IP. The empty host and
// 0.0.0.0 or :: (every interface) are not.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
