# Builds rein. `make release` cross-compiles static binaries (no cgo: rein's
# SQLite is pure Go) for every platform in PLATFORMS into DIST, each with a
# CycloneDX SBOM, and writes SHA-256 checksums of them all.
#
#   make release                              # every platform
#   make release PLATFORMS=linux/amd64        # one
#   make release VERSION=1.2.0                # stamp a version
#   make version                              # print the version a build gets

GO        ?= go
# The version (internal/buildversion): a commit tagged vX.Y.Z builds as X.Y.Z,
# any other as the pseudo-version Go records for it, e.g.
# 0.0.0-20261127090700-13d912197ba8, with +dirty when the work tree differs.
ifeq ($(origin VERSION),undefined)
VERSION   := $(or $(shell $(GO) run ./internal/buildversion 2>/dev/null),0.1.0-dev)
endif
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
# The commit's time, so that two builds of one commit are identical.
DATE      ?= $(shell TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null | grep . || TZ=UTC date +%Y-%m-%dT%H:%M:%SZ)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST      ?= dist

PKG     := github.com/reinhq/rein
LDFLAGS := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).Commit=$(COMMIT) -X $(PKG).BuildDate=$(DATE)
# -buildvcs=auto records the git revision when there is one, whatever GOFLAGS says.
BUILD   := CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=auto -ldflags "$(LDFLAGS)"

IMAGE     ?= rein:$(subst +,.,$(VERSION))

.PHONY: build release image test clean version

version:
	@echo $(VERSION)

build:
	$(BUILD) -o bin/rein ./cmd/rein

release:
	@rm -rf "$(DIST)" && mkdir -p "$(DIST)"
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ "$$os" = windows ] && ext=.exe; \
		out="$(DIST)/rein_$(VERSION)_$${os}_$${arch}$$ext"; \
		echo "build $$out"; \
		GOOS=$$os GOARCH=$$arch $(BUILD) -o "$$out" ./cmd/rein; \
		$(GO) run ./internal/sbom -version "$(VERSION)" -date "$(DATE)" "$$out" > "$$out.cdx.json"; \
	done
	@cd "$(DIST)" && { command -v sha256sum >/dev/null && sha256sum rein_* || shasum -a 256 rein_*; } > SHA256SUMS
	@cat "$(DIST)/SHA256SUMS"

# The container image (needs a Docker engine, or buildx for other platforms).
image:
	docker build -t "$(IMAGE)" --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg DATE=$(DATE) .

test:
	$(GO) test -count=1 ./...

clean:
	rm -rf bin "$(DIST)"
