-- The complete current PostgreSQL schema of ingest's database: what the numbered
-- migrations in store/migrations/postgres build, read back from a new database.
-- Not applied by anything: the migrations are. A test fails when this file
-- differs from what they build; rewrite it with
--   go test ./store -run TestSchemaFiles -update
-- Step 21 (the table schema_version).

CREATE FUNCTION public.video_days_entries() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM video_days_fold(array_agg(ROW(vid, region, category, fetched_ms / 86400000 * 86400000,
    fetched_ms, fetched_ms, CASE WHEN TG_OP = 'INSERT' THEN 1 ELSE 0 END, rank, rank, fetched_ms,
    view_count, like_count, comment_count)::video_days)) FROM new_rows;
  RETURN NULL;
END $$;

CREATE TABLE public.video_days (
    vid bigint NOT NULL,
    region text NOT NULL COLLATE pg_catalog."C",
    category text NOT NULL COLLATE pg_catalog."C",
    day_ms bigint NOT NULL,
    first_ms bigint NOT NULL,
    last_ms bigint NOT NULL,
    entries bigint NOT NULL,
    best_rank bigint,
    last_rank bigint,
    peak_ms bigint NOT NULL,
    views bigint,
    likes bigint,
    comments bigint
);

CREATE FUNCTION public.video_days_fold(days public.video_days[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
BEGIN
  INSERT INTO video_days SELECT * FROM unnest(days) ORDER BY vid
  ON CONFLICT (vid, region, category, day_ms) DO UPDATE SET
    first_ms = least(video_days.first_ms, excluded.first_ms),
    last_ms = greatest(video_days.last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= video_days.last_ms THEN excluded.last_rank ELSE video_days.last_rank END,
    entries = video_days.entries + excluded.entries,
    best_rank = least(video_days.best_rank, excluded.best_rank),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(video_days.views, -1) THEN excluded.peak_ms ELSE video_days.peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(video_days.views, -1) THEN excluded.likes ELSE video_days.likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(video_days.views, -1) THEN excluded.comments ELSE video_days.comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(video_days.views, -1) THEN excluded.views ELSE video_days.views END;
END $$;

CREATE FUNCTION public.video_days_stat() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  PERFORM video_days_fold(ARRAY[ROW(NEW.vid, '', '', NEW.at_ms / 86400000 * 86400000,
    NEW.at_ms, NEW.at_ms, 0, NULL, NULL, NEW.at_ms, NEW.view_count, NEW.like_count, NEW.comment_count)::video_days]);
  RETURN NULL;
END $$;

CREATE FUNCTION public.video_docs_region() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE video_docs SET regions = regions || array_to_tsvector(ARRAY[NEW.region])
  WHERE vid = NEW.vid AND NOT tsvector_to_array(regions) @> ARRAY[NEW.region]::text[];
  RETURN NULL;
END $$;

CREATE UNLOGGED TABLE public.api_limits (
    key text NOT NULL COLLATE pg_catalog."C",
    tat bigint NOT NULL,
    at bigint NOT NULL,
    allowed boolean NOT NULL
);

CREATE TABLE public.api_tokens (
    name text NOT NULL COLLATE pg_catalog."C",
    hash text NOT NULL COLLATE pg_catalog."C",
    plan text NOT NULL COLLATE pg_catalog."C",
    created_ms bigint NOT NULL,
    last_used_ms bigint
);

CREATE TABLE public.backed_up (
    one integer NOT NULL,
    at_ms bigint NOT NULL,
    CONSTRAINT backed_up_one_check CHECK ((one = 1))
);

CREATE TABLE public.backfill_cursors (
    key text NOT NULL COLLATE pg_catalog."C",
    region text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    since text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    until text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    query text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    before text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    page_token text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    pages bigint DEFAULT 0 NOT NULL,
    videos bigint DEFAULT 0 NOT NULL,
    units bigint DEFAULT 0 NOT NULL,
    reached text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    done bigint DEFAULT 0 NOT NULL,
    updated_ms bigint NOT NULL,
    pending text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT backfill_cursors_done_check CHECK ((done = ANY (ARRAY[(0)::bigint, (1)::bigint])))
);

CREATE TABLE public.backoff (
    one integer NOT NULL,
    until_ms bigint NOT NULL,
    wait_ms bigint NOT NULL,
    in_a_row integer NOT NULL,
    blamed text NOT NULL COLLATE pg_catalog."C",
    cause text NOT NULL,
    CONSTRAINT backoff_one_check CHECK ((one = 1))
);

CREATE TABLE public.categories (
    region text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    title text NOT NULL COLLATE pg_catalog."C",
    fetched_ms bigint NOT NULL,
    language text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.category_fetches (
    region text NOT NULL COLLATE pg_catalog."C",
    fetched_ms bigint NOT NULL
);

CREATE TABLE public.ledger (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    call_id text NOT NULL COLLATE pg_catalog."C",
    pool text NOT NULL COLLATE pg_catalog."C",
    units bigint NOT NULL,
    at_ms bigint NOT NULL,
    op text NOT NULL COLLATE pg_catalog."C",
    region text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    run_id bigint,
    unmetered bigint DEFAULT 0 NOT NULL,
    seq bigint DEFAULT 0 NOT NULL,
    client text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT ledger_units_check CHECK ((units >= 0)),
    CONSTRAINT ledger_unmetered_check CHECK ((unmetered = ANY (ARRAY[(0)::bigint, (1)::bigint])))
);

CREATE TABLE public.ledger_blocks (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    pool text NOT NULL COLLATE pg_catalog."C",
    until_ms bigint NOT NULL,
    at_ms bigint NOT NULL,
    op text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.ledger_given_back (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    call_id text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    seq bigint DEFAULT 0 NOT NULL
);

CREATE TABLE public.ledger_notes (
    name text NOT NULL COLLATE pg_catalog."C",
    value text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.ledger_seq (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    last bigint NOT NULL
);

CREATE TABLE public.ledger_unknown (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    instance text NOT NULL COLLATE pg_catalog."C",
    token bigint NOT NULL,
    op text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    charges text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.locks (
    name text NOT NULL COLLATE pg_catalog."C",
    token text NOT NULL COLLATE pg_catalog."C",
    expires_ms bigint NOT NULL
);

CREATE TABLE public.pace_plans (
    quota_key text NOT NULL,
    written_ms bigint NOT NULL,
    plan text NOT NULL
);

CREATE TABLE public.passes (
    entry text NOT NULL COLLATE pg_catalog."C",
    started_ms bigint NOT NULL,
    finished_ms bigint NOT NULL,
    slot_ms bigint,
    status text NOT NULL,
    CONSTRAINT passes_status_check CHECK ((status = ANY (ARRAY['completed'::text, 'stopped'::text, 'interrupted'::text, 'skipped'::text, 'failed'::text])))
);

CREATE TABLE public.purged (
    cache text NOT NULL COLLATE pg_catalog."C",
    mark text NOT NULL COLLATE pg_catalog."C",
    changed_ms bigint NOT NULL
);

CREATE TABLE public.quota_block (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    pool text NOT NULL COLLATE pg_catalog."C",
    until_ms bigint NOT NULL
);

CREATE TABLE public.quota_clock (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    last_ms bigint NOT NULL,
    seq bigint NOT NULL
);

CREATE TABLE public.quota_config (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    pool text NOT NULL COLLATE pg_catalog."C",
    conf text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.quota_log (
    quota_key text NOT NULL COLLATE pg_catalog."C",
    pool text NOT NULL COLLATE pg_catalog."C",
    id text NOT NULL COLLATE pg_catalog."C",
    at_ms bigint NOT NULL,
    units bigint NOT NULL,
    CONSTRAINT quota_log_units_check CHECK ((units > 0))
);

CREATE TABLE public.region_catalogue (
    code text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL,
    fetched_ms bigint NOT NULL
);

CREATE TABLE public.runs (
    id bigint NOT NULL,
    region text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL COLLATE pg_catalog."C",
    started_ms bigint NOT NULL,
    finished_ms bigint,
    pages bigint DEFAULT 0 NOT NULL,
    videos bigint DEFAULT 0 NOT NULL,
    message text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    retry_at_ms bigint,
    category text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    slot_ms bigint,
    CONSTRAINT runs_kind_check CHECK ((kind = ANY (ARRAY['trending'::text, 'search'::text]))),
    CONSTRAINT runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'completed'::text, 'stopped'::text, 'interrupted'::text, 'skipped'::text, 'failed'::text])))
);

ALTER TABLE public.runs ALTER COLUMN id ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.schedule (
    id bigint NOT NULL,
    every_ms bigint NOT NULL,
    regions text NOT NULL COLLATE pg_catalog."C",
    updated_ms bigint NOT NULL,
    timetable text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    plan text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    costs text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT schedule_id_check CHECK ((id = 1))
);

CREATE TABLE public.schema_version (
    step integer NOT NULL,
    applied_ms bigint NOT NULL
);

CREATE TABLE public.search_results (
    run_id bigint NOT NULL,
    region text NOT NULL COLLATE pg_catalog."C",
    vid bigint NOT NULL,
    rank bigint NOT NULL,
    fetched_ms bigint NOT NULL
);

CREATE TABLE public.sessions (
    hash text NOT NULL COLLATE pg_catalog."C",
    expires_ms bigint NOT NULL
);

CREATE TABLE public.trending_entries (
    run_id bigint NOT NULL,
    region text NOT NULL COLLATE pg_catalog."C",
    vid bigint NOT NULL,
    rank bigint NOT NULL,
    view_count bigint,
    like_count bigint,
    comment_count bigint,
    fetched_ms bigint NOT NULL,
    category text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.video_docs (
    vid bigint NOT NULL,
    doc tsvector NOT NULL,
    regions tsvector DEFAULT ''::tsvector NOT NULL,
    title tsvector GENERATED ALWAYS AS (ts_filter(doc, '{a}'::"char"[])) STORED
);

CREATE TABLE public.video_regions (
    vid bigint NOT NULL,
    region text NOT NULL COLLATE pg_catalog."C"
);

CREATE TABLE public.video_stats (
    vid bigint NOT NULL,
    at_ms bigint NOT NULL,
    view_count bigint,
    like_count bigint,
    comment_count bigint,
    day_ms bigint NOT NULL,
    CONSTRAINT video_stats_day CHECK ((day_ms = ((at_ms / 86400000) * 86400000)))
);

CREATE TABLE public.videos (
    vid bigint NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    title text NOT NULL COLLATE pg_catalog."C",
    description text NOT NULL COLLATE pg_catalog."C",
    tags text NOT NULL COLLATE pg_catalog."C",
    channel_id text NOT NULL COLLATE pg_catalog."C",
    channel_title text NOT NULL COLLATE pg_catalog."C",
    category_id text NOT NULL COLLATE pg_catalog."C",
    published_at_ms bigint,
    duration text NOT NULL COLLATE pg_catalog."C",
    view_count bigint,
    like_count bigint,
    comment_count bigint,
    first_seen_ms bigint NOT NULL,
    last_seen_ms bigint NOT NULL,
    thumbnail text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    audio_language text DEFAULT ''::text NOT NULL,
    language text DEFAULT ''::text NOT NULL,
    retitled_ms bigint
);

CREATE TABLE public.videos_gone (
    id text NOT NULL COLLATE pg_catalog."C",
    gone_ms bigint NOT NULL
);

ALTER TABLE public.videos ALTER COLUMN vid ADD GENERATED BY DEFAULT AS IDENTITY (
    SEQUENCE NAME public.videos_vid_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY public.api_limits
    ADD CONSTRAINT api_limits_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_hash_key UNIQUE (hash);

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.backed_up
    ADD CONSTRAINT backed_up_pkey PRIMARY KEY (one);

ALTER TABLE ONLY public.backfill_cursors
    ADD CONSTRAINT backfill_cursors_pkey PRIMARY KEY (key);

ALTER TABLE ONLY public.backoff
    ADD CONSTRAINT backoff_pkey PRIMARY KEY (one);

ALTER TABLE ONLY public.categories
    ADD CONSTRAINT categories_pkey PRIMARY KEY (region, id);

ALTER TABLE ONLY public.category_fetches
    ADD CONSTRAINT category_fetches_pkey PRIMARY KEY (region);

ALTER TABLE ONLY public.ledger_blocks
    ADD CONSTRAINT ledger_blocks_pkey PRIMARY KEY (quota_key, pool, until_ms);

ALTER TABLE ONLY public.ledger_given_back
    ADD CONSTRAINT ledger_given_back_pkey PRIMARY KEY (quota_key, call_id);

ALTER TABLE ONLY public.ledger_notes
    ADD CONSTRAINT ledger_notes_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.ledger
    ADD CONSTRAINT ledger_pkey PRIMARY KEY (quota_key, call_id, pool);

ALTER TABLE ONLY public.ledger_seq
    ADD CONSTRAINT ledger_seq_pkey PRIMARY KEY (quota_key);

ALTER TABLE ONLY public.ledger_unknown
    ADD CONSTRAINT ledger_unknown_pkey PRIMARY KEY (quota_key, instance, token);

ALTER TABLE ONLY public.locks
    ADD CONSTRAINT locks_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.pace_plans
    ADD CONSTRAINT pace_plans_pkey PRIMARY KEY (quota_key);

ALTER TABLE ONLY public.passes
    ADD CONSTRAINT passes_pkey PRIMARY KEY (entry, started_ms);

ALTER TABLE ONLY public.purged
    ADD CONSTRAINT purged_pkey PRIMARY KEY (cache);

ALTER TABLE ONLY public.quota_block
    ADD CONSTRAINT quota_block_pkey PRIMARY KEY (quota_key, pool);

ALTER TABLE ONLY public.quota_clock
    ADD CONSTRAINT quota_clock_pkey PRIMARY KEY (quota_key);

ALTER TABLE ONLY public.quota_config
    ADD CONSTRAINT quota_config_pkey PRIMARY KEY (quota_key, pool);

ALTER TABLE ONLY public.quota_log
    ADD CONSTRAINT quota_log_pkey PRIMARY KEY (quota_key, pool, id);

ALTER TABLE ONLY public.region_catalogue
    ADD CONSTRAINT region_catalogue_pkey PRIMARY KEY (code);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.schedule
    ADD CONSTRAINT schedule_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (step);

ALTER TABLE ONLY public.search_results
    ADD CONSTRAINT search_results_pkey PRIMARY KEY (run_id, region, vid);

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (hash);

ALTER TABLE ONLY public.trending_entries
    ADD CONSTRAINT trending_entries_pkey PRIMARY KEY (run_id, region, vid);

ALTER TABLE ONLY public.video_days
    ADD CONSTRAINT video_days_pkey PRIMARY KEY (day_ms, vid, region, category);

ALTER TABLE ONLY public.video_docs
    ADD CONSTRAINT video_docs_pkey PRIMARY KEY (vid);

ALTER TABLE ONLY public.video_regions
    ADD CONSTRAINT video_regions_pkey PRIMARY KEY (vid, region);

ALTER TABLE ONLY public.video_stats
    ADD CONSTRAINT video_stats_pkey PRIMARY KEY (day_ms, vid, at_ms);

ALTER TABLE ONLY public.videos_gone
    ADD CONSTRAINT videos_gone_pkey PRIMARY KEY (id);

ALTER TABLE ONLY public.videos
    ADD CONSTRAINT videos_id_key UNIQUE (id);

ALTER TABLE ONLY public.videos
    ADD CONSTRAINT videos_pkey PRIMARY KEY (vid);

CREATE INDEX categories_fetched ON public.categories USING btree (fetched_ms);

CREATE INDEX ledger_at ON public.ledger USING btree (quota_key, at_ms);

CREATE INDEX ledger_given_back_written ON public.ledger_given_back USING btree (quota_key, seq);

CREATE INDEX ledger_pool ON public.ledger USING btree (quota_key, pool, at_ms, units);

CREATE INDEX ledger_run ON public.ledger USING btree (run_id) WHERE (run_id IS NOT NULL);

CREATE INDEX ledger_written ON public.ledger USING btree (quota_key, seq);

CREATE INDEX passes_started ON public.passes USING btree (started_ms);

CREATE INDEX quota_log_at ON public.quota_log USING btree (quota_key, pool, at_ms);

CREATE INDEX runs_last ON public.runs USING btree (kind, region, category, id);

CREATE INDEX runs_running ON public.runs USING btree (region, kind, category) WHERE (status = 'running'::text);

CREATE INDEX runs_started ON public.runs USING btree (kind, started_ms);

CREATE INDEX search_results_fetched ON public.search_results USING btree (fetched_ms);

CREATE INDEX search_results_vid ON public.search_results USING btree (vid);

CREATE INDEX sessions_expires ON public.sessions USING btree (expires_ms);

CREATE INDEX trending_entries_day ON public.trending_entries USING btree ((((fetched_ms / 86400000) * 86400000)), vid, fetched_ms);

CREATE INDEX video_docs_doc ON public.video_docs USING gin (doc, regions, title);

CREATE INDEX video_stats_at ON public.video_stats USING btree (at_ms);

CREATE INDEX videos_last_seen ON public.videos USING btree (last_seen_ms);

CREATE TRIGGER video_days_entry AFTER INSERT ON public.trending_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.video_days_entries();

CREATE TRIGGER video_days_entry_again AFTER UPDATE ON public.trending_entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION public.video_days_entries();

CREATE TRIGGER video_days_stat AFTER INSERT OR UPDATE ON public.video_stats FOR EACH ROW EXECUTE FUNCTION public.video_days_stat();

CREATE TRIGGER video_docs_region AFTER INSERT ON public.video_regions FOR EACH ROW EXECUTE FUNCTION public.video_docs_region();

ALTER TABLE ONLY public.search_results
    ADD CONSTRAINT search_results_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id);

ALTER TABLE ONLY public.search_results
    ADD CONSTRAINT search_results_vid_fkey FOREIGN KEY (vid) REFERENCES public.videos(vid);

ALTER TABLE ONLY public.trending_entries
    ADD CONSTRAINT trending_entries_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id);

ALTER TABLE ONLY public.video_docs
    ADD CONSTRAINT video_docs_vid_fkey FOREIGN KEY (vid) REFERENCES public.videos(vid);

ALTER TABLE ONLY public.video_regions
    ADD CONSTRAINT video_regions_vid_fkey FOREIGN KEY (vid) REFERENCES public.videos(vid);
