package quota

// What a Redis URL names and whether that Redis lets a client in: the
// address its client dials first, the replies of a refused AUTH, HELLO or
// SELECT told from an outage, and a round trip that met no server.

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Address is the network and address the Redis URL's client dials
// first; "" when the URL names none.
func Address(raw string) (network, addr string) {
	if strings.Contains(raw, "addr=") {
		o, err := redis.ParseClusterURL(raw)
		if err != nil || len(o.Addrs) == 0 {
			return "", ""
		}
		return "tcp", o.Addrs[0]
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return "", ""
	}
	return o.Network, o.Addr
}

// Unreached is a round trip that met no server's words: a dial refused
// or a silence. What else failed may be a server of another protocol.
func Unreached(err error) bool {
	var op *net.OpError
	var ne net.Error
	return (errors.As(err, &op) && op.Op == "dial") || (errors.As(err, &ne) && ne.Timeout()) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// AccessError says that Redis refused the connection's credentials or its
// database: a configuration error (a wrong or missing password, a user
// without rights, a database index the server does not have), never an
// outage that the fail policy may ride out.
type AccessError struct {
	Reply string // Redis's own words, which hold no password
	Fix   string
}

func (e *AccessError) Error() string { return "Redis refused it (" + e.Reply + "): " + e.Fix }

// accessReplies are the replies of a refused AUTH, HELLO or SELECT, by
// their first words, with the fix.
var accessReplies = []struct{ prefix, fix string }{
	{"WRONGPASS", "the user or password is wrong (a password holding @ : / ? # % is percent-encoded in the URL)"},
	{"ERR invalid password", "the password is wrong (a password holding @ : / ? # % is percent-encoded in the URL)"},
	{"ERR AUTH", "the server has no password: leave it out of the URL, or set requirepass on the server"},
	{"NOAUTH", "the server requires a password: give it as redis://:PASSWORD@HOST:6379/0 (or USER:PASSWORD for an ACL user)"},
	{"NOPERM", "the URL's user lacks rights the limiter needs: grant it +@all on the ingest:* keys, or use another user"},
	{"ERR DB index is out of range", "the server has fewer databases: use /0 (or raise `databases` in redis.conf)"},
	{"ERR invalid DB index", "the database is not a number the server takes: use /0"},
	{"ERR SELECT is not allowed in cluster mode", "a cluster has only database 0: end the URL with /0"},
}

// CheckAccess makes one round trip to find whether Redis lets this client
// in. It returns an *AccessError when Redis refused the credentials or the
// database, the error of the round trip otherwise (an unreachable server),
// nil when Redis answered.
func CheckAccess(ctx context.Context, c redis.UniversalClient) error {
	ctx, cancel := context.WithTimeout(ctx, OperatorTimeout)
	defer cancel()
	err := c.Ping(ctx).Err()
	var reply redis.Error
	if err == nil || !errors.As(err, &reply) {
		return err
	}
	msg := reply.Error()
	for _, r := range accessReplies {
		if strings.HasPrefix(msg, r.prefix) {
			return &AccessError{Reply: firstLine(msg), Fix: r.fix}
		}
	}
	return err
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}
