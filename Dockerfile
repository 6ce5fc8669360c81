# syntax=docker/dockerfile:1.7
# Quartermaster's container image.
#   docker build --target runtime .   the binary, git, CA certificates and make: validation,
#                                     dry runs, issue-only missions
#   docker build .                    "full" (the default, what the GitHub Action runs): runtime
#                                     plus the toolchains the deps mission's commands call: go,
#                                     node with npm, yarn, pnpm and bun, python with pip,
#                                     pip-tools, uv and poetry, ruby with bundler, cargo
# A container action does not see the runner's setup-* toolchains, so they must be in the image.

ARG RUST_VERSION=1.95
ARG DEBIAN=bookworm

FROM rust:${RUST_VERSION}-${DEBIAN} AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin quartermaster

FROM debian:${DEBIAN}-slim AS runtime
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

FROM golang:1.23-${DEBIAN} AS go
FROM node:22-${DEBIAN}-slim AS node
FROM oven/bun:1-debian AS bun
FROM rust:${RUST_VERSION}-slim-${DEBIAN} AS rust

FROM runtime AS full
ARG YARN_VERSION=1.22.22
ARG PNPM_VERSION=9.15.0
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
COPY --from=bun /usr/local/bin/bun /usr/local/bin/bun
COPY --from=rust /usr/local/cargo /usr/local/cargo
COPY --from=rust /usr/local/rustup /usr/local/rustup
ENV GOPATH=/root/go \
    CARGO_HOME=/usr/local/cargo \
    RUSTUP_HOME=/usr/local/rustup \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/go/bin:/usr/local/cargo/bin:/root/go/bin:$PATH
# pip, pip-tools, uv and poetry live in a virtual environment, where `pip install --upgrade` is
# allowed (PEP 668 forbids it on Debian's system Python).
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
    && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
    && npm install --global --no-fund --no-audit "yarn@${YARN_VERSION}" "pnpm@${PNPM_VERSION}" \
    && npm cache clean --force \
    && python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir "poetry==${POETRY_VERSION}" \
        "pip-tools==${PIP_TOOLS_VERSION}" "uv==${UV_VERSION}" \
    && go version && node --version && bun --version && cargo --version \
    && pip --version && pip-compile --version && uv --version && poetry --version \
    && bundle --version
