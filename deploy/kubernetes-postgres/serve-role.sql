-- The PostgreSQL role the public `ingest serve` replicas log in as: it reads
-- every table and writes only what serve writes, so that a replica facing
-- the internet cannot change the charts, the runs, the quota's ledger or the
-- schema. The daemon (ingest run) keeps the owner's role, and upgrades the
-- schema (ingest db migrate before a rolling update).
--
-- Run it as the owner of the database's tables (the daemon's role), once,
-- and again after an upgrade whose CHANGELOG says a table serve writes was
-- added:
--   psql "$OWNER_URL" -v role=ingest_serve -v owner=ingest -f serve-role.sql
--   psql "$OWNER_URL" -c '\password ingest_serve'
-- then give the replicas a database-url of that role (README.md).
--
-- A role that may change no schema cannot upgrade the database: a replica
-- started on an older schema than its binary's fails to start until the
-- daemon, or ingest db migrate, has upgraded it.

SELECT format('CREATE ROLE %I LOGIN', :'role')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'role') \gexec

GRANT USAGE ON SCHEMA public TO :"role";

-- Reads: every table, and those a later upgrade adds.
GRANT SELECT ON ALL TABLES IN SCHEMA public TO :"role";
ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT ON TABLES TO :"role";

-- Writes, one line a table serve writes (add a line when one is added):
-- each API client's count, when the replicas share it in the database
-- (no REDIS_URL);
GRANT INSERT, UPDATE, DELETE ON api_limits TO :"role";
-- when an API token was last used;
GRANT UPDATE (last_used_ms) ON api_tokens TO :"role";
-- the readers' sign-ins, honoured and ended on every replica;
-- the data mark each cache in front was last purged up to.
-- Both came with 0.4.0's schema: on an older one, before its upgrade, they
-- are granted by the run of this file that follows the upgrade.
SELECT format('GRANT INSERT, DELETE ON sessions TO %I', :'role')
WHERE to_regclass('sessions') IS NOT NULL \gexec
SELECT format('GRANT INSERT, UPDATE ON purged TO %I', :'role')
WHERE to_regclass('purged') IS NOT NULL \gexec
