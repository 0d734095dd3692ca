# Varnish in front of `ingest serve --public` (and `run --listen --public`):
# it keeps what the origin says a shared cache may keep, for as long as the
# origin says, drops it when a run lands and the origin purges its keys,
# and serves its copies while every origin is down. docs/operations/readers.md,
# "Readers at scale", says when to choose it and what it was measured at.
#
# The origins and who may purge are in backends.vcl beside this file
# (backends.example.vcl is a start), so that this file is the same on every
# host. varnishd -f /etc/varnish/ingest.vcl -p vcl_path=/etc/varnish
vcl 4.1;

import directors;
import std;
import xkey;

sub vcl_init {
	new origins = directors.round_robin();
	call ingest_origins;
}

include "backends.vcl";

# Requests: what may come from the cache, and what never may.
sub vcl_recv {
	set req.backend_hint = origins.backend();

	# Who the client is, decided here once: the connection's address, or,
	# from a front proxy trusted to say so (a TLS terminator, in
	# ingest_front_proxies), the one it names last. The origins, trusting
	# this cache's address (--trusted-proxies), read that one address and
	# nothing a client wrote. Varnish has appended the connection's address
	# already. The headers this file uses to talk to itself are never a
	# client's to send.
	if (req.restarts == 0) {
		if (client.ip ~ ingest_front_proxies && req.http.X-Forwarded-For ~ ",") {
			set req.http.X-Forwarded-For = regsub(req.http.X-Forwarded-For, "^(?:.*,)?\s*([^,\s]+)\s*,[^,]*$", "\1");
		} else {
			set req.http.X-Forwarded-For = client.ip;
		}
		unset req.http.x-ingest-failed;
		unset req.http.x-purged;
	}

	# A purge from the process that saw a run land: the keys it names
	# (xkey-purge: chart:US video:abc ...), or the one URL asked. The
	# copies are made stale, not dropped: the next reader of each is
	# answered the old copy once while the new one is fetched beside it,
	# so a landing costs the origin one request a page, never a stampede,
	# and a page purged just before the origins went down is still served.
	if (req.method == "PURGE") {
		if (client.ip !~ ingest_purgers) {
			return (synth(403, "purge refused"));
		}
		if (req.http.xkey-purge) {
			set req.http.x-purged = xkey.softpurge(req.http.xkey-purge);
			return (synth(200, "purged " + req.http.x-purged));
		}
		return (purge);
	}
	if (req.method != "GET" && req.method != "HEAD") {
		return (pass);
	}

	# A credential makes the answer the requester's: it is never looked
	# up, and never stored (vcl_backend_response). The origin says the
	# same with private, no-store; this holds if it ever forgets.
	if (req.http.Authorization || req.http.Cookie ~ "(^|;\s*)ingest_session=") {
		return (pass);
	}

	# The readers' paths: a cookie there (an analytics tag, a region the
	# reader chose) changes nothing a shared answer may carry, so it is
	# dropped and the reader gets the cached copy; on the front page the
	# chosen region is kept, and that answer is the reader's alone.
	if (req.url ~ "^/($|\?|charts|worldwide|videos/|search|robots\.txt|sitemap|static/|api/v1/?($|\?)|api/v1/(charts|videos|worldwide|search))") {
		if (req.url ~ "^/($|\?)" && req.http.Cookie ~ "(^|;\s*)region=") {
			return (pass);
		}
		unset req.http.Cookie;
	} else {
		# Everything else (the operator's pages, /quota, /metrics,
		# /readyz, sign-in) is never the cache's.
		return (pass);
	}

	# While an origin is up, a stale copy is served only within the
	# origin's stale-while-revalidate (its default), a new one fetched
	# beside it; while none is, within stale-if-error (the object's grace),
	# and so too when a reader's fetch just failed on every origin (an
	# origin busy or stopping: vcl_synth asks again for the stale copy).
	if (req.http.x-ingest-failed) {
		set req.grace = 365d;
	} elsif (std.healthy(req.backend_hint)) {
		set req.grace = 10s;
	}

	call ingest_key;
	return (hash);
}

# The page a reader asked for, as the origin reads it (web/key.go, and
# cmd/ingest's tests hold this to it): only the query parameters the
# route reads, sorted; the region in capitals; one copy per encoding the
# origin would send, decided as the origin decides it; and the front
# page's languages exactly as sent (vcl_hash): the origin's choice of a
# region from them (weights, likely regions, what is charted, even the
# case of a parameter) is its own, and a copy per spelling is the price of
# never giving a reader another's front page.
sub ingest_key {
	if (req.url ~ "^/(\?|$)") {
		set req.url = regsuball(req.url, "(?<=[?&])(?!region(?:=|&|$))[^&]*(?:&|$)", "");
	} elsif (req.url ~ "^/charts(\?|$)") {
		set req.url = regsuball(req.url, "(?<=[?&])(?!(?:category|language|region)(?:=|&|$))[^&]*(?:&|$)", "");
	} elsif (req.url ~ "^/charts/[^/?]+(\?|$)") {
		set req.url = regsuball(req.url, "(?<=[?&])(?!(?:at|category|language|limit|sort)(?:=|&|$))[^&]*(?:&|$)", "");
	} elsif (req.url ~ "^/api/v1/charts/[^/?]+(\?|$)") {
		set req.url = regsuball(req.url, "(?<=[?&])(?!(?:at|category|language|limit)(?:=|&|$))[^&]*(?:&|$)", "");
	} elsif (req.url ~ "^/(api/v1/)?worldwide(/feed)?(\?|$)") {
		set req.url = regsuball(req.url, "(?<=[?&])(?!limit(?:=|&|$))[^&]*(?:&|$)", "");
	} elsif (req.url ~ "^/(api/v1/)?search(\?|$)") {
		set req.url = regsuball(req.url, "(?<=[?&])(?!(?:category|cursor|language|limit|q|region|sort)(?:=|&|$))[^&]*(?:&|$)", "");
	} else {
		set req.url = regsub(req.url, "\?.*$", "");
	}
	set req.url = std.querysort(regsub(req.url, "[?&]+$", ""));

	if (req.url ~ "^/(api/v1/)?charts/[A-Za-z]{2}(/|\?|$)" && req.url ~ "^/(api/v1/)?charts/.?[a-z]") {
		set req.url = regsub(req.url, "^(/(?:api/v1/)?charts/)[A-Za-z]{2}",
		    "\1" + std.toupper(regsub(req.url, "^/(?:api/v1/)?charts/([A-Za-z]{2}).*$", "\1")));
	}

	# The origin sends gzip when the first of Accept-Encoding's entries
	# that names gzip (any case) or * does not weigh it q=0.
	if (req.http.Accept-Encoding ~ "(?i)(^|,)\s*(gzip|\*)\s*(;|,|$)") {
		set req.http.x-ingest-q = regsuball(regsub(req.http.Accept-Encoding,
		    "(?i)^.*?(?:^|,)\s*(?:gzip|\*)\s*(;[^,]*)?(?:,.*)?$", "\1"), " ", "");
		if (req.http.x-ingest-q ~ "^;q=0(\.0{0,3})?$") {
			unset req.http.Accept-Encoding;
		} else {
			set req.http.Accept-Encoding = "gzip";
		}
		unset req.http.x-ingest-q;
	} else {
		unset req.http.Accept-Encoding;
	}
}

# One copy per page, whatever Host a reader sent (the origin's answers do
# not depend on it); the front page's per set of languages.
sub vcl_hash {
	hash_data(req.url);
	if (req.url ~ "^/(\?|$)") {
		hash_data(req.http.Accept-Language);
	}
	return (lookup);
}

# Answers: kept as the origin's Cache-Control says (Varnish reads s-maxage
# first), with its keys for the purges, and past their lifetime for as long
# as stale-if-error lets them be served while the origins are down.
sub vcl_backend_response {
	# An origin failing while a copy is kept (a replica restarting): the
	# copy stays and is served, rather than the failure; a reader's fetch
	# is tried once more, on the next origin.
	if (beresp.status >= 500 && bereq.is_bgfetch) {
		return (abandon);
	}
	# A refresh answered with what may not be kept leaves the stale copy in
	# place, to be refreshed at the next ask.
	if (bereq.is_bgfetch && beresp.http.Cache-Control !~ "public") {
		return (abandon);
	}
	if (beresp.status >= 500 && bereq.retries == 0) {
		return (retry);
	}
	# A reader's fetch that failed on both origins is given up, so that the
	# reader is answered from a stale copy if the cache holds one
	# (vcl_synth); a private page's failure is passed on as it came.
	if (beresp.status >= 500 && !bereq.uncacheable) {
		return (abandon);
	}
	# Anything not public is passed on and never kept, and leaves no mark
	# that it was (no hit-for-miss): an error or a private answer at one
	# moment must not send a public page's readers to the origin after,
	# nor push its stale copy out of the cache.
	if (bereq.http.Authorization || bereq.http.Cookie || beresp.http.Set-Cookie ||
	    beresp.http.Cache-Control ~ "(private|no-store)" || beresp.http.Cache-Control !~ "public") {
		set beresp.uncacheable = true;
		set beresp.ttl = 0s;
		return (deliver);
	}
	# What the origin said to the client whose ask filled the copy (how
	# many asks its plan has left) is no other reader's.
	unset beresp.http.RateLimit;
	# xkey reads its keys from the xkey header; the origin names them in
	# Surrogate-Key, as Fastly reads them.
	if (beresp.http.Surrogate-Key) {
		set beresp.http.xkey = beresp.http.Surrogate-Key;
	}
	# A copy past its lifetime stays for stale-if-error, Varnish's grace:
	# served while every origin is down (vcl_recv narrows it to
	# stale-while-revalidate while one is up).
	if (beresp.http.Cache-Control ~ "stale-if-error=\d+") {
		set beresp.grace = std.duration(regsub(beresp.http.Cache-Control, "^.*stale-if-error=(\d+).*$", "\1") + "s", 10s);
	}
	return (deliver);
}

# An origin that could not be reached: a refresh beside a kept copy is
# given up and the copy stays; a reader's fetch is tried once more, on the
# next origin, so that a replica stopping between two probes costs no
# reader an error, then given up for a stale copy (vcl_synth).
sub vcl_backend_error {
	if (bereq.is_bgfetch) {
		return (abandon);
	}
	if (bereq.retries == 0) {
		return (retry);
	}
	if (!bereq.uncacheable) {
		return (abandon);
	}
}

# A reader's fetch that failed (vcl_backend_response and vcl_backend_error
# gave it up after trying each origin): asked once more, for whatever
# stale copy the cache holds within stale-if-error, before the failure is
# the reader's.
sub vcl_synth {
	if (resp.status == 503 && req.restarts == 0 && !req.http.x-ingest-failed &&
	    (req.method == "GET" || req.method == "HEAD")) {
		set req.http.x-ingest-failed = "1";
		return (restart);
	}
}

# What the reader sees: whether the cache answered (a fresh copy, or a
# stale one while a new one is fetched or the origins are down), and
# nothing of the keys or of the cache's bookkeeping.
sub vcl_deliver {
	if (obj.uncacheable) {
		set resp.http.X-Cache = "pass";
	} elsif (obj.hits > 0 && obj.ttl < 0s) {
		set resp.http.X-Cache = "stale";
	} elsif (obj.hits > 0) {
		set resp.http.X-Cache = "hit";
	} else {
		set resp.http.X-Cache = "miss";
	}
	unset resp.http.xkey;
	unset resp.http.Surrogate-Key;
	unset resp.http.Via;
	unset resp.http.X-Varnish;
}
