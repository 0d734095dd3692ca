# The origins ingest.vcl sends readers to, and who may purge: copy to
# backends.vcl beside it and name your replicas. Every `ingest serve
# --public` replica (or the daemon's --listen --public) is an origin; each
# is probed at /readyz, which a serve replica passes once it can answer
# readers from its database: a replica starting or restarted is taken out
# until it can, and put back by itself, and with none ready the kept copies
# are served.

backend serve1 {
	.host = "10.0.0.11";
	.port = "8080";
	.connect_timeout = 2s;
	.first_byte_timeout = 30s;
	.probe = { .url = "/readyz"; .interval = 2s; .timeout = 1s; .window = 3; .threshold = 2; }
}

backend serve2 {
	.host = "10.0.0.12";
	.port = "8080";
	.connect_timeout = 2s;
	.first_byte_timeout = 30s;
	.probe = { .url = "/readyz"; .interval = 2s; .timeout = 1s; .window = 3; .threshold = 2; }
}

sub ingest_origins {
	origins.add_backend(serve1);
	origins.add_backend(serve2);
}

# The hosts whose `--purge-url` points here: the replicas (and the daemon).
acl ingest_purgers {
	"localhost";
	"10.0.0.0"/24;
}

# The front proxies (a TLS terminator, a load balancer) trusted to name the
# client in X-Forwarded-For; from any other address the connection is the
# client, whatever it sends. None by default: list yours.
acl ingest_front_proxies {
	# "10.0.0.5";
}
