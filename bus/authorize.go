package bus

import (
	"net"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// nkeyUsers returns the server's nkey users of c: one per role, each with
// the role's permissions in l.
func nkeyUsers(c *Credentials, l Layout) []*server.NkeyUser {
	users := make([]*server.NkeyUser, 0, len(Roles()))
	for _, r := range Roles() {
		users = append(users, &server.NkeyUser{Nkey: c.PublicKey(r), Permissions: l.Permissions(r).server()})
	}
	return users
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
