# rein's container image: a static binary on a distroless base, running as
# an unprivileged user, fit for a read-only root filesystem.
#
#   docker build -t rein --build-arg VERSION=1.2.0 --build-arg COMMIT=$(git rev-parse HEAD) .
#   docker run -p 8750:8750 -v rein-data:/var/lib/rein rein
#
# Mount your policy at /etc/rein/policy.yaml (the image carries rein's
# sample policy there). Flags given to `docker run` are added to
# `rein serve` and win over /etc/rein/rein.yaml.

FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ARG TARGETOS TARGETARCH
ARG VERSION=0.1.0-dev COMMIT= DATE=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/reinhq/rein.Version=$VERSION -X github.com/reinhq/rein.Commit=$COMMIT -X github.com/reinhq/rein.BuildDate=$DATE" \
      -o /out/rein ./cmd/rein \
 && mkdir -p /out/data

# distroless/static: CA certificates, time zones, /etc/passwd with the user
# nonroot (65532), and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/rein /usr/local/bin/rein
COPY deploy/docker/rein.yaml /etc/rein/rein.yaml
COPY examples/policy.yaml /etc/rein/policy.yaml
COPY --from=build --chown=65532:65532 /out/data /var/lib/rein
USER 65532:65532
VOLUME ["/var/lib/rein"]
EXPOSE 8750
ENTRYPOINT ["/usr/local/bin/rein", "serve", "--config", "/etc/rein/rein.yaml"]
