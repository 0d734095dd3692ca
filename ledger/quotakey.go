package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ingestworks/ingest"
)

// KeyHash is the short, one-way name of an API key: the default quota key.
func KeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])[:8]
}

// ReadQuotaKey is the quota a command that reads reports on: given
// (--quota-key), else the API key's hash (apiKey, "" when unset), else the
// one quota key in l (nil: no database). shared says a limiter on Redis
// may hold what this host's ledger does not.
func ReadQuotaKey(ctx context.Context, given, apiKey string, l *Ledger, shared bool) (string, error) {
	if given != "" {
		return given, nil
	}
	if apiKey != "" {
		return KeyHash(apiKey), nil
	}
	var keys []string
	if l != nil {
		var err error
		if keys, err = l.QuotaKeys(ctx); err != nil {
			return "", fmt.Errorf("read quota keys: %w", err)
		}
	}
	switch len(keys) {
	case 1:
		return keys[0], nil
	case 0:
		if l == nil && !shared {
			return "-", nil // nothing spent on this host, and no shared limiter to ask
		}
		return "", ingest.ConfigErrorf("no quota key: set --quota-key / INGEST_QUOTA_KEY or YOUTUBE_API_KEY (the database has spent nothing yet)")
	}
	return "", ingest.ConfigErrorf("the database holds several quota keys (%s): choose one with --quota-key / INGEST_QUOTA_KEY", strings.Join(keys, ", "))
}
