package throttle

import (
	"context"
	"log/slog"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/ratelimit"
)

// WarnUnusableTokens logs, at serve's start, each token whose plan the
// plans file no longer has: its requests will be refused (401), which the
// operator should hear before the client does.
func WarnUnusableTokens(ctx context.Context, log *slog.Logger, tokens interface {
	Tokens(context.Context) ([]clients.Token, error)
}, plans *ratelimit.APIPlans) {
	list, err := tokens.Tokens(ctx)
	if err != nil {
		log.Warn("api: list tokens", ingest.LogErr, err)
		return
	}
	for _, t := range list {
		if !plans.Usable(t.Plan) {
			log.Warn("api: a token's plan is not in the plans file: its requests will be refused (401); add the plan to "+plans.File+
				", or revoke the token and add one on another plan", "token", t.Name, ingest.LogPlan, t.Plan)
		}
	}
}
