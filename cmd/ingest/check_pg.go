package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/ingestworks/ingest/store"
)

// checkPostgres is the database check on PostgreSQL: the server answers,
// its version, and the schema step, read without writing anything.
func checkPostgres(ctx context.Context, c *checkEnv) (string, error) {
	name := c.s.dbName()
	db, err := store.OpenExisting(ctx, c.s.db)
	var ve *store.VersionError
	switch {
	case errors.Is(err, store.ErrNoDatabase):
		c.dbState = "missing"
		return fmt.Sprintf("%s answers and holds no ingest schema yet (check creates nothing): the first run creates it", name), nil
	case errors.As(err, &ve) && ve.Have < ve.Want:
		c.dbState = "older"
		return fmt.Sprintf("%s: schema step %d; the next run upgrades it to %d", name, ve.Have, ve.Want), nil
	case err != nil:
		return "", runtimeError(err)
	}
	defer db.Close()
	server, err := db.Server(ctx)
	if err != nil {
		return "", runtimeError(fmt.Errorf("%s: %w", name, err))
	}
	c.dbState = "current"
	return fmt.Sprintf("%s: %s", name, server), nil
}
