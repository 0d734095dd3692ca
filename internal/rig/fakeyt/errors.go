package fakeyt

import (
	"net/http"
)

// QuotaShape is how the fake says that a quota is spent, one of the shapes
// the real API uses.
type QuotaShape int

const (
	// QuotaOK clears an exhausted quota.
	QuotaOK QuotaShape = iota
	// QuotaExceeded is 403 quotaExceeded (domain youtube.quota): the
	// project's daily quota is spent. Every method fails.
	QuotaExceeded
	// DailyLimitExceeded is the older 403 dailyLimitExceeded (domain
	// usageLimits). Every method fails.
	DailyLimitExceeded
	// SearchPerDay is 429 rateLimitExceeded "Quota exceeded for quota metric
	// 'Search Queries' and limit 'Search Queries per day'": the per-method
	// search bucket is spent. Only search.list fails.
	SearchPerDay
	// StatsPerDay is the same 429 shape for the videos.batchGetStats bucket
	// (see errQuota: the wording is unconfirmed). Only batchGetStats fails.
	StatsPerDay
)

// KeyFault is how the fake rejects the API key.
type KeyFault int

const (
	// KeyOK accepts the key (subject to AllowKeys).
	KeyOK KeyFault = iota
	// KeyInvalid is 400 badRequest with ErrorInfo API_KEY_INVALID, as the
	// API answers today.
	KeyInvalid
	// KeyInvalidLegacy is the older 400 keyInvalid (domain usageLimits).
	KeyInvalidLegacy
	// KeyBlocked is 403 forbidden with ErrorInfo API_KEY_SERVICE_BLOCKED.
	KeyBlocked
	// KeyNotConfigured is 403 accessNotConfigured: the API is not enabled
	// for the key's project.
	KeyNotConfigured
)

// apiError is the body of every error the real API sends.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Errors  []errorItem `json:"errors"`
	Status  string      `json:"status,omitempty"`
	Details []any       `json:"details,omitempty"`
}

type errorItem struct {
	Message      string `json:"message"`
	Domain       string `json:"domain"`
	Reason       string `json:"reason"`
	Location     string `json:"location,omitempty"`
	LocationType string `json:"locationType,omitempty"`
}

func newError(code int, status, domain, reason, msg string, details ...any) *apiError {
	return &apiError{Error: errorBody{Code: code, Message: msg, Status: status, Details: details,
		Errors: []errorItem{{Message: msg, Domain: domain, Reason: reason}}}}
}

func errorInfo(reason string, metadata map[string]string) map[string]any {
	return map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
		"reason": reason, "domain": "googleapis.com", "metadata": metadata}
}

const project = "project_number:1048576"

func errQuota(shape QuotaShape) *apiError {
	switch shape {
	case DailyLimitExceeded:
		return newError(403, "PERMISSION_DENIED", "usageLimits", "dailyLimitExceeded",
			"Daily Limit Exceeded. The quota will be reset at midnight Pacific Time (PT). You may monitor your quota usage and adjust limits in the API Console: https://console.developers.google.com/apis/api/youtube.googleapis.com/quotas?project=1048576")
	case SearchPerDay:
		return errPerDay("Search Queries", "search_queries", "SearchQueriesPerDay")
	case StatsPerDay:
		// Unconfirmed: no body of a spent batchGetStats bucket has been
		// published. This is the search bucket's shape with its own metric,
		// which is what Google's per-metric quotas send elsewhere.
		return errPerDay("Video Stats Queries", "video_stats_queries", "VideoStatsQueriesPerDay")
	default:
		return newError(403, "", "youtube.quota", "quotaExceeded",
			"The request cannot be completed because you have exceeded your <a href=\"/youtube/v3/getting-started#quota\">quota</a>.")
	}
}

// errPerDay is the 429 a spent per-method daily bucket answers.
func errPerDay(metric, metricID, limitID string) *apiError {
	msg := "Quota exceeded for quota metric '" + metric + "' and limit '" + metric + " per day' of service 'youtube.googleapis.com' for consumer '" + project + "'."
	return newError(429, "RESOURCE_EXHAUSTED", "global", "rateLimitExceeded", msg,
		errorInfo("RATE_LIMIT_EXCEEDED", map[string]string{"service": "youtube.googleapis.com",
			"consumer": "projects/1048576", "quota_metric": "youtube.googleapis.com/" + metricID,
			"quota_limit": limitID, "quota_location": "global"}))
}

func errKey(fault KeyFault) *apiError {
	meta := map[string]string{"service": "youtube.googleapis.com"}
	switch fault {
	case KeyInvalidLegacy:
		return newError(400, "INVALID_ARGUMENT", "usageLimits", "keyInvalid", "Bad Request")
	case KeyBlocked:
		msg := "Requests to this API youtube method youtube.api.v3.V3DataVideoService.List are blocked."
		return newError(403, "PERMISSION_DENIED", "global", "forbidden", msg,
			errorInfo("API_KEY_SERVICE_BLOCKED", map[string]string{"service": "youtube.googleapis.com",
				"methodName": "youtube.api.v3.V3DataVideoService.List", "consumer": "projects/1048576"}))
	case KeyNotConfigured:
		msg := "YouTube Data API v3 has not been used in project 1048576 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/youtube.googleapis.com/overview?project=1048576 then retry."
		return newError(403, "PERMISSION_DENIED", "usageLimits", "accessNotConfigured", msg,
			errorInfo("SERVICE_DISABLED", map[string]string{"service": "youtube.googleapis.com",
				"consumer": "projects/1048576"}))
	default:
		msg := "API key not valid. Please pass a valid API key."
		return newError(400, "INVALID_ARGUMENT", "global", "badRequest", msg,
			errorInfo("API_KEY_INVALID", meta),
			map[string]any{"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": msg})
	}
}

func errMissingKey() *apiError {
	return newError(403, "PERMISSION_DENIED", "global", "forbidden",
		"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.")
}

func errBackend(status int) *apiError {
	switch status {
	case http.StatusServiceUnavailable:
		return newError(503, "UNAVAILABLE", "global", "backendError", "The service is currently unavailable.")
	case http.StatusTooManyRequests:
		// A per-minute bucket: transient, unlike the per-day one.
		msg := "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'youtube.googleapis.com' for consumer '" + project + "'."
		return newError(429, "RESOURCE_EXHAUSTED", "global", "rateLimitExceeded", msg)
	default:
		if status < 500 || status > 599 {
			status = 500
		}
		return newError(status, "INTERNAL", "global", "backendError", "Backend Error")
	}
}

func errNoChart() *apiError {
	return newError(400, "INVALID_ARGUMENT", "youtube.video", "videoChartNotFound",
		"The requested video chart is not supported or is not available.")
}

func errPageToken() *apiError {
	e := newError(400, "INVALID_ARGUMENT", "youtube.parameter", "invalidPageToken",
		"The request specifies an invalid page token.")
	e.Error.Errors[0].Location, e.Error.Errors[0].LocationType = "pageToken", "parameter"
	return e
}

func errParam(reason, param, msg string) *apiError {
	e := newError(400, "INVALID_ARGUMENT", "youtube.parameter", reason, msg)
	e.Error.Errors[0].Location, e.Error.Errors[0].LocationType = param, "parameter"
	return e
}

func errNotFound(path string) *apiError {
	return newError(404, "NOT_FOUND", "global", "notFound", "Not Found: "+path)
}
