-- Step 5: the video's languages as the upstream tags them (BCP-47, '' when
-- it sends none): snippet.defaultAudioLanguage and snippet.defaultLanguage.
-- A column with a constant default rewrites no rows.
ALTER TABLE videos ADD COLUMN audio_language TEXT NOT NULL DEFAULT '';
ALTER TABLE videos ADD COLUMN language TEXT NOT NULL DEFAULT '';
