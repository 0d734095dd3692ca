# The origins ingest.vcl sends readers to, and who may purge, on Kubernetes:
# backends.example.vcl (deploy/varnish) for a cluster.
#
# The origin is serve's Service, by its name in the cache's own namespace:
# the cluster's DNS gives it one address (its ClusterIP), which holds only
# the replicas whose /readyz answers, and kube-proxy spreads the cache's
# connections over them. Varnish resolves a backend's host once, when the
# VCL loads, and refuses a name of more than one address, so a headless
# Service (one address a pod) cannot be named here; the ClusterIP never
# changes while the Service lives, so the one lookup stays true as pods
# come and go. The probe asks /readyz, as the pods' readiness does: the
# origin is sick only when no replica is ready, and the copies are then
# served up to stale-if-error.

backend serve {
	.host = "ingest-serve";
	.port = "8080";
	.connect_timeout = 2s;
	.first_byte_timeout = 30s;
	.probe = { .url = "/readyz"; .interval = 2s; .timeout = 1s; .window = 3; .threshold = 2; }
}

sub ingest_origins {
	origins.add_backend(serve);
}

# The hosts whose --purge-url points here: serve's replicas and the
# daemon, by the cluster's pod network. 10.244.0.0/16 is the default of
# kubeadm with flannel; edit it to your cluster's pod CIDR
# (docs/operations/readers.md, "Kubernetes").
acl ingest_purgers {
	"localhost";
	"10.244.0.0"/16;
}

# The front proxies trusted to name the reader in X-Forwarded-For: the
# Ingress controller's pods, in the same pod network. Without it every
# reader would be the controller's address to serve's anonymous plan.
acl ingest_front_proxies {
	"10.244.0.0"/16;
}
