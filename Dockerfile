# ingest: a static binary on an empty image.
#   docker build -t ingest .
# The binary names its release from the file VERSION, which it embeds
# (`make image` tags the image with it too); REVISION, BUILT, SINCE and
# DIRTY, when given, name the commit, the time and how far past the release
# it is, as .git is not sent to the build.
#   docker run --rm -e YOUTUBE_API_KEY -e REDIS_URL -v ingest-data:/data -p 9090:9090 ingest
# Without arguments it runs the daemon with /metrics, /healthz and /readyz
# on :9090; `docker run ... ingest run --once` is the form for cron.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=
ARG BUILT=
# SINCE and DIRTY say how far past its release the source is (make image
# passes them); without them the binary says it cannot count
# (0.3.0+unknown), never the release's bare version.
ARG SINCE=
ARG DIRTY=
# CGO off: modernc.org/sqlite is pure Go, so the binary needs no libc.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.revision=${REVISION} -X main.built=${BUILT} -X main.since=${SINCE} -X main.dirty=${DIRTY}" -o /out/ingest ./cmd/ingest \
 && mkdir -p /out/data

FROM scratch
# Time zones (the upstream's day is America/Los_Angeles; the binary also
# embeds time/tzdata) and CA certificates for Google's endpoint over TLS.
COPY --from=build /usr/share/zoneinfo /usr/share/zoneinfo
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/ingest /usr/local/bin/ingest
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
WORKDIR /data
ENV INGEST_DB=/data/ingest.db \
    INGEST_RUN_LISTEN=:9090
VOLUME ["/data"]
EXPOSE 9090
# No shell or curl in the image: the binary asks its own /healthz, where
# run --listen (INGEST_RUN_LISTEN) or serve (INGEST_SERVE_LISTEN, else
# 127.0.0.1:8080) listens, so the check fits whichever command runs.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["/usr/local/bin/ingest", "probe"]
ENTRYPOINT ["/usr/local/bin/ingest"]
CMD ["run"]
