# syncd container image: a static binary on distroless, as a non-root user,
# with the state file on a volume.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t syncd .
#   docker run -d --name syncd --env-file syncd.env \
#     -v syncd-state:/var/lib/syncd \
#     -v "$PWD/syncd.yaml:/etc/syncd/syncd.yaml:ro" \
#     -p 127.0.0.1:8081:8081 -p 8080:8080 --stop-timeout 30 syncd
#
# In syncd.yaml: state.path /var/lib/syncd/syncd.db; admin.listen
# 0.0.0.0:8081 with admin.token: ${SYNCD_ADMIN_TOKEN} (required beyond
# loopback) to reach the admin API from outside the container;
# webhooks.listen 0.0.0.0:8080 when a connector reads workspace changes.
# Secrets come from the environment (--env-file), never from the image.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
      -ldflags="-s -w -X main.Version=${VERSION}" \
      -o /out/syncd ./cmd/syncd \
 && mkdir -p /out/state

# distroless/static: CA certificates and time zones, no shell, no package
# manager; the nonroot tag runs as uid/gid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="syncd" \
      org.opencontainers.image.description="Two-way contact sync between a business phone workspace and CRMs, databases and CSV files" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/syncd /usr/local/bin/syncd
# The volume's mount point, owned by the user syncd runs as: a fresh named
# volume takes this ownership.
COPY --from=build --chown=65532:65532 /out/state /var/lib/syncd
USER 65532:65532
WORKDIR /var/lib/syncd
VOLUME ["/var/lib/syncd"]
# 8081: admin API, health page, metrics. 8080: webhook receiver.
EXPOSE 8081 8080
# The first SIGTERM finishes the batch in flight (at most 7 s) and exits 0;
# give the container more than that before SIGKILL (--stop-timeout 30).
STOPSIGNAL SIGTERM
# No curl in distroless: the binary checks its own admin API. Adjust the
# URL if admin.listen uses another port.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/syncd", "healthcheck", "--url", "http://127.0.0.1:8081/healthz"]
ENTRYPOINT ["/usr/local/bin/syncd"]
CMD ["run", "--config", "/etc/syncd/syncd.yaml"]
