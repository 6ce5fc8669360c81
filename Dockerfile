# syntax=docker/dockerfile:1.7@sha256:a57df69d0ea827fb7266491f2813635de6f17269be881f696fbfdf2d83dda33e
# Quartermaster's container image.
#   docker build --target runtime .   the binary, git, CA certificates and make: validation,
#                                     dry runs, issue-only missions
#   docker build .                    "full" (the default, what the GitHub Action runs): runtime
#                                     plus the toolchains the deps mission's commands call: go,
#                                     node with npm, yarn, pnpm and bun, python with pip,
#                                     pip-tools, uv and poetry, ruby with bundler, cargo
# A container action does not see the runner's setup-* toolchains, so they must be in the image.
#
# Base images are pinned by digest: the tag says what it is, the digest fixes the bytes. Bump both
# together (`docker buildx imagetools inspect IMAGE:TAG` prints the digest). The tools' versions
# are .ci/tools.env's, the ones the tests run with (tests/it/packaging.rs holds them equal).

FROM rust:1.95-bookworm@sha256:6258907abe69656e41cd992e0b705cdcfabcbbe3db374f92ed2d47121282d4a1 AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin quartermaster

FROM debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251 AS runtime
# Unpinned on purpose: a security fix in Debian's git or OpenSSL should reach the next build.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates git libssl3 zlib1g make \
    && rm -rf /var/lib/apt/lists/* \
    # Actions mount the workspace owned by another user than the container's root.
    && git config --system --add safe.directory '*'
COPY --from=build /src/target/release/quartermaster /usr/local/bin/quartermaster
ENTRYPOINT ["/usr/local/bin/quartermaster"]
CMD ["--help"]

FROM golang:1.26.6-bookworm@sha256:116d58cbd88c1297624acc6e967a060012422bacf9930927e23fb719189c6f36 AS go
FROM node:22-bookworm-slim@sha256:43ac6c60b8f89723f746e8a92ce91abd5017e627ce1ddfe4238355d3a30b772c AS node
FROM rust:1.95-slim-bookworm@sha256:d7482085ff5b415f84dba5647ae71606650bdef00db7aeb69f4b3d170c3e4082 AS rust

FROM runtime AS full
ARG YARN_VERSION=1.22.22
ARG PNPM_VERSION=9.15.9
ARG BUN_VERSION=1.4.5
ARG POETRY_VERSION=2.5.1
ARG PIP_TOOLS_VERSION=7.6.2
ARG UV_VERSION=0.13.9
# A C toolchain for cgo, native npm modules, Python and Ruby extensions and cargo build scripts.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential pkg-config libssl-dev \
        python3 python3-venv python3-dev ruby-full bundler \
    && rm -rf /var/lib/apt/lists/*
COPY --from=go /usr/local/go /usr/local/go
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=node /usr/local/lib/node_modules /usr/local/lib/node_modules
COPY --from=rust /usr/local/cargo /usr/local/cargo
COPY --from=rust /usr/local/rustup /usr/local/rustup
ENV GOPATH=/root/go \
    CARGO_HOME=/usr/local/cargo \
    RUSTUP_HOME=/usr/local/rustup \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/go/bin:/usr/local/cargo/bin:/root/go/bin:$PATH
# yarn, pnpm and bun from npm, as .ci/run installs them. pip, pip-tools, uv and poetry live in a
# virtual environment, where `pip install --upgrade` is allowed (PEP 668 forbids it on Debian's
# system Python).
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && npm install --global --no-fund --no-audit "yarn@${YARN_VERSION}" "pnpm@${PNPM_VERSION}" \
        "bun@${BUN_VERSION}" \
    && npm cache clean --force \
    && python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir "poetry==${POETRY_VERSION}" \
        "pip-tools==${PIP_TOOLS_VERSION}" "uv==${UV_VERSION}" \
    && go version && node --version && bun --version && cargo --version \
    && pip --version && pip-compile --version && uv --version && poetry --version \
    && bundle --version
