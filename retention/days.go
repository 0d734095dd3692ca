package retention

// daysUpsert folds one more reading (excluded) into a day's row. Every
// expression reads the row as it was, so the order does not matter.
const daysUpsert = `first_ms = min(first_ms, excluded.first_ms),
    last_ms = max(last_ms, excluded.last_ms),
    last_rank = CASE WHEN excluded.last_ms >= last_ms THEN excluded.last_rank ELSE last_rank END,
    entries = entries + excluded.entries,
    best_rank = min(coalesce(best_rank, excluded.best_rank), coalesce(excluded.best_rank, best_rank)),
    peak_ms = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.peak_ms ELSE peak_ms END,
    likes = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.likes ELSE likes END,
    comments = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.comments ELSE comments END,
    views = CASE WHEN coalesce(excluded.views, -1) > coalesce(views, -1) THEN excluded.views ELSE views END`
